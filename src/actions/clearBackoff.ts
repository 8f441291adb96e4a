import { action } from "@prismatic-io/spectral";
import { parseScope, scopeInputs } from "../inputs";
import { baseScopeOf, entriesUnder, openLedger } from "./shared";

/** Clear Backoff: remove the not_before (and breaker) of a scope and its dialect sub-scopes. */
export const clearBackoff = action({
  display: { label: "Clear Backoff", description: "Remove the recorded not_before and breaker of an API's rate-limit scope." },
  inputs: scopeInputs,
  perform: async (context, params) => {
    const { url, scopeKey, provider } = parseScope(params);
    const nowMs = Date.now();
    const scope = baseScopeOf({ connection: params.connection, url, provider, scopeKey });
    const ledger = openLedger(context, nowMs);
    const cleared = entriesUnder(ledger, scope).map(([key]) => key);
    for (const key of cleared) ledger.clear(key);
    return { data: { scope, cleared: cleared.length }, crossFlowState: ledger.toCrossFlowState(context.crossFlowState) };
  },
});
