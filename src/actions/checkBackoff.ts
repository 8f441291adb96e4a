import { action } from "@prismatic-io/spectral";
import { parseScope, scopeInputs } from "../inputs";
import { baseScopeOf, entriesUnder, openLedger, requestPartsOf } from "./shared";

/** Check Backoff: gate other components' steps on the shared not_before (read-only). */
export const checkBackoff = action({
  display: {
    label: "Check Backoff",
    description: "Branch Ready or Blocked on the not_before recorded for an API's rate-limit scope, to gate steps of other components.",
  },
  inputs: scopeInputs,
  allowsBranching: true,
  staticBranchNames: ["Ready", "Blocked"],
  perform: async (context, params) => {
    const { url, scopeKey, provider } = parseScope(params);
    const nowMs = Date.now();
    const scope = baseScopeOf({ connection: params.connection, url, provider, scopeKey });
    const entries = entriesUnder(openLedger(context, nowMs), scope, requestPartsOf({ connection: params.connection, url, provider, scopeKey }));
    const latest = entries.reduce<[string, (typeof entries)[number][1]] | null>((best, e) => (best === null || Date.parse(e[1].notBefore) > Date.parse(best[1].notBefore) ? e : best), null);
    const notBeforeMs = latest ? Date.parse(latest[1].notBefore) : 0;
    const blocked = notBeforeMs > nowMs;
    const data = {
      ready: !blocked,
      scope,
      notBefore: blocked && latest ? latest[1].notBefore : null,
      waitMs: blocked ? notBeforeMs - nowMs : 0,
      reason: blocked && latest ? latest[1].reason : "No not_before ahead for this scope.",
      entry: latest ? latest[1] : null,
    };
    // Read-only: no crossFlowState is returned, so a check never races a writer.
    return { branch: blocked ? "Blocked" : "Ready", data };
  },
});
