import { action, type ActionContext } from "@prismatic-io/spectral";
import type { StepStore } from "../store/fallback";
import { parseScope, scopeInputs } from "../inputs";
import { credentialScopesSchema, isoTime, NOT_BEFORE_DESCRIPTION, nullable, scopeSchema, scopeViewSchema, warningSchema, type Schema } from "./schemas";
import { baseScopeOf, credentialScopesForHost, SAME_SCOPE_DIRECTIONS, credentialScopesWarning, nextStartMs, openStore, requestPartsOf, scopesUnder, viewOf, type CredentialScope, type ScopeView } from "./shared";

interface CheckData {
  ready: boolean;
  scope: string;
  notBefore: string | null;
  waitSeconds: number;
  waitMs: number;
  reason: string;
  entry: ScopeView | null;
  warning: string | null;
  credentialScopes: CredentialScope[];
}

const blockedExample: CheckData = {
  ready: false,
  scope: "generic|api.example.com|3f9a1c0d2b7e4a56",
  notBefore: "2026-03-02T11:00:00.000Z",
  waitSeconds: 3540,
  waitMs: 3_540_000,
  reason: "429 with Retry-After: 3600.",
  entry: {
    notBefore: "2026-03-02T11:00:00.000Z",
    nextStart: "2026-03-02T11:00:00.000Z",
    reason: "429 with Retry-After: 3600.",
    limitType: "burst",
    breaker: "closed",
    throttlesInARow: 1,
    budget: { limit: 60, windowSeconds: 60, remaining: 0, resetAt: "2026-03-02T10:01:00.000Z", learnedFrom: "inferred" },
    updatedAt: "2026-03-02T10:00:00.000Z",
  },
  warning: null,
  credentialScopes: [],
};

const readyExample: CheckData = {
  ready: true,
  scope: "generic|api.example.com|anon",
  notBefore: null,
  waitSeconds: 0,
  waitMs: 0,
  reason: "Ready for this scope only: waits for this host are recorded under a credential this step was not given (see warning).",
  entry: null,
  warning:
    "No connection was given, so this step checked the no-credential scope, but 1 scope(s) for this host were recorded under a credential, 1 of them with a not_before ahead (the latest 2026-03-02T11:00:00.000Z). Send Request steps that use a connection record their waits there. Pick the same connection as those steps (or use the same Scope Key).",
  credentialScopes: [{ scope: "generic|api.example.com|3f9a1c0d2b7e4a56", notBefore: "2026-03-02T11:00:00.000Z", breaker: "closed" }],
};

const checkSchema = (example: CheckData): Schema => ({
  type: "object",
  required: ["ready", "scope", "notBefore", "waitSeconds", "waitMs", "reason", "entry", "warning", "credentialScopes"],
  properties: {
    ready: { type: "boolean", description: "True on Ready: no not_before ahead for the scope." },
    scope: scopeSchema,
    notBefore: nullable(isoTime(`${NOT_BEFORE_DESCRIPTION} Null when Ready.`)),
    waitSeconds: { type: "integer", minimum: 0, description: "Seconds until the not_before (rounded up); 0 when Ready." },
    waitMs: { type: "integer", minimum: 0, description: "The same wait in milliseconds." },
    reason: { type: "string", description: "Why the scope is blocked (from the recorded answer), or why it is ready." },
    entry: nullable(scopeViewSchema),
    warning: warningSchema,
    credentialScopes: credentialScopesSchema,
  },
  examples: [example],
});

/** Check Backoff: gate other components' steps on the shared not_before (read-only). */
export const checkBackoff = action({
  display: {
    label: "Check Backoff",
    description: "Branch Ready or Blocked on the not_before (the time before which no request should be made) recorded for an API's rate-limit scope, to gate steps of other components.",
    directions: SAME_SCOPE_DIRECTIONS,
  },
  inputs: scopeInputs,
  allowsBranching: true,
  staticBranchNames: ["Ready", "Blocked"],
  // Reads cross-flow state only: no network call and nothing written. Safe to run inline.
  performSafety: "safe",
  examplePayload: { branch: "Blocked", data: blockedExample },
  outputSchema: { type: "branchingOutput", branchSchemas: { Ready: checkSchema(readyExample), Blocked: checkSchema(blockedExample) } },
  perform: async (context, params): Promise<{ branch: "Ready" | "Blocked"; data: CheckData }> => {
    const target = { connection: params.connection, ...parseScope(params) };
    const nowMs = Date.now();
    const store = openStore(context, params);
    try {
      return await check(context, store, target, nowMs);
    } finally {
      await store.close();
    }
  },
});

async function check(context: Pick<ActionContext, "logger">, store: StepStore, target: Parameters<typeof baseScopeOf>[0], nowMs: number): Promise<{ branch: "Ready" | "Blocked"; data: CheckData }> {
  const scope = await baseScopeOf(target, store);
  const scopes = await scopesUnder(store, scope, requestPartsOf(target, store));
  // The latest start any of the scope's parts allows: the API's wait, or its budget spent until a refill.
  const latest = scopes.reduce<{ atMs: number; key: string } | null>((best, [key, state]) => {
    const atMs = nextStartMs(state, nowMs);
    return best === null || atMs > best.atMs ? { atMs, key } : best;
  }, null);
  const blocked = latest !== null && latest.atMs > nowMs;
  const state = latest ? scopes.find(([key]) => key === latest.key)?.[1] : undefined;
  const view = state ? viewOf(state, nowMs) : null;
  const credentialScopes = await credentialScopesForHost(store, target, scope, nowMs);
  const warning = credentialScopesWarning(credentialScopes, nowMs, "checked");
  if (warning) context.logger.warn(warning);
  const waitMs = blocked && latest ? latest.atMs - nowMs : 0;
  const readyReason = warning ? "Ready for this scope only: waits for this host are recorded under a credential this step was not given (see warning)." : "No not_before ahead for this scope, and its budget allows a request now.";
  const data: CheckData = {
    ready: !blocked,
    scope,
    notBefore: blocked && latest ? new Date(latest.atMs).toISOString() : null,
    waitSeconds: Math.ceil(waitMs / 1000),
    waitMs,
    reason: blocked && view ? view.reason : readyReason,
    entry: view,
    warning,
    credentialScopes,
  };
  // Read-only: no crossFlowState is returned, so a check never races a writer.
  return { branch: blocked ? "Blocked" : "Ready", data };
}
