import { action } from "@prismatic-io/spectral";
import { parseScope, scopeInputs } from "../inputs";
import { credentialScopesSchema, scopeSchema, warningSchema, type Schema } from "./schemas";
import { baseScopeOf, credentialScopesForHost, SAME_SCOPE_DIRECTIONS, credentialScopesWarning, openStore, scopesUnder, type CredentialScope } from "./shared";

interface ClearData {
  scope: string;
  cleared: number;
  clearedScopes: string[];
  warning: string | null;
  credentialScopes: CredentialScope[];
}

const clearExample: ClearData = {
  scope: "github|api.github.com|3f9a1c0d2b7e4a56",
  cleared: 2,
  clearedScopes: ["github|api.github.com|3f9a1c0d2b7e4a56", "github|api.github.com|3f9a1c0d2b7e4a56|resource=search"],
  warning: null,
  credentialScopes: [],
};

const clearSchema: Schema = {
  type: "object",
  required: ["scope", "cleared", "clearedScopes", "warning", "credentialScopes"],
  properties: {
    scope: scopeSchema,
    cleared: { type: "integer", minimum: 0, description: "How many recorded scopes were removed: the scope itself and the provider's sub-scopes under it (GitHub's search budget...)." },
    clearedScopes: { type: "array", items: { type: "string" }, description: "The scopes removed." },
    warning: warningSchema,
    credentialScopes: { ...credentialScopesSchema, description: "Scopes for this host under a credential, left in place (only looked up when no connection and no Scope Key were given)." },
  },
  examples: [clearExample],
};

/** Clear Backoff: remove the not_before (and breaker) of a scope and its dialect sub-scopes. */
export const clearBackoff = action({
  display: {
    label: "Clear Backoff",
    description: "Remove the recorded not_before (the time before which no request should be made) and the breaker of an API's rate-limit scope.",
    directions: `${SAME_SCOPE_DIRECTIONS} The breaker is what stops every request after several throttles in a row; clearing lets the next request go out at once.`,
  },
  inputs: scopeInputs,
  // Writes this component's state into cross-flow state: never run it just to fill the designer.
  performSafety: "notAllowed",
  examplePayload: { data: clearExample },
  outputSchema: { type: "actionOutput", schema: clearSchema },
  perform: async (context, params): Promise<{ data: ClearData; crossFlowState?: Record<string, unknown> }> => {
    const target = { connection: params.connection, ...parseScope(params) };
    const nowMs = Date.now();
    const store = openStore(context, params);
    try {
      const scope = await baseScopeOf(target, store);
      const clearedScopes = (await scopesUnder(store, scope)).map(([key]) => key);
      for (const key of clearedScopes) await store.clear(key);
      const credentialScopes = await credentialScopesForHost(store, target, scope, nowMs);
      const warning = credentialScopesWarning(credentialScopes, nowMs, "cleared");
      if (warning) context.logger.warn(warning);
      const data: ClearData = { scope, cleared: clearedScopes.length, clearedScopes, warning, credentialScopes };
      return { data, crossFlowState: await store.toCrossFlowState() };
    } finally {
      await store.close();
    }
  },
});
