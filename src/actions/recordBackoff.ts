import { action, input } from "@prismatic-io/spectral";
import { ThrottleInputError } from "../client";
import { parseJsonish, parseOptionalText, parseScope, parseWhole, scopeInputs } from "../inputs";
import { baseScopeOf, openLedger } from "./shared";

/** The notBefore to record: an explicit time, a wait in seconds, or a verdict from Explain Throttle Response. */
function resolveNotBeforeMs(params: Record<string, unknown>, nowMs: number): { notBeforeMs: number; reason: string; limitType: string; provider: string | null } {
  const at = parseOptionalText(params.notBefore);
  if (at) {
    const ms = Date.parse(at);
    if (!Number.isFinite(ms)) throw new ThrottleInputError(`Invalid notBefore: "${at.slice(0, 60)}" is not an ISO 8601 time. Use e.g. 2026-01-01T12:00:00Z.`);
    return { notBeforeMs: ms, reason: "recorded by Record Backoff", limitType: "unknown", provider: null };
  }
  const verdict = parseJsonish("verdict", params.verdict);
  if (verdict && typeof verdict === "object") {
    const v = verdict as { minWaitMs?: unknown; notBefore?: unknown; reason?: unknown; limitType?: unknown; provider?: unknown };
    const fromIso = typeof v.notBefore === "string" ? Date.parse(v.notBefore) : Number.NaN;
    const waitMs = typeof v.minWaitMs === "number" && Number.isFinite(v.minWaitMs) && v.minWaitMs >= 0 ? v.minWaitMs : null;
    const notBeforeMs = Number.isFinite(fromIso) ? fromIso : waitMs !== null ? nowMs + waitMs : Number.NaN;
    if (!Number.isFinite(notBeforeMs)) throw new ThrottleInputError("Invalid verdict: it has neither notBefore nor minWaitMs. Pass the output of Explain Throttle Response for a throttled response, or set waitSeconds.");
    return { notBeforeMs, reason: typeof v.reason === "string" ? v.reason : "recorded from a verdict", limitType: typeof v.limitType === "string" ? v.limitType : "unknown", provider: typeof v.provider === "string" ? v.provider : null };
  }
  const waitSeconds = parseWhole("waitSeconds", params.waitSeconds, -1, 0, 31 * 86_400);
  if (waitSeconds < 0) throw new ThrottleInputError("Missing time: set notBefore, waitSeconds, or a verdict from Explain Throttle Response.");
  return { notBeforeMs: nowMs + waitSeconds * 1000, reason: "recorded by Record Backoff", limitType: "unknown", provider: null };
}

/** Record Backoff: set, if later, a not_before for a scope. */
export const recordBackoff = action({
  display: { label: "Record Backoff", description: "Set a not_before for an API's rate-limit scope (kept only if later than the one recorded)." },
  inputs: {
    ...scopeInputs,
    notBefore: input({ label: "Not Before", type: "string", required: false, comments: "An ISO 8601 time.", clean: parseOptionalText }),
    waitSeconds: input({ label: "Wait (seconds)", type: "string", required: false, comments: "Used when Not Before is blank.", clean: parseOptionalText }),
    verdict: input({ label: "Verdict", type: "data", required: false, comments: "The output of Explain Throttle Response.", clean: (v: unknown) => parseJsonish("verdict", v) }),
    reason: input({ label: "Reason", type: "string", required: false, clean: parseOptionalText }),
  },
  perform: async (context, params) => {
    const { url, scopeKey, provider } = parseScope(params);
    const nowMs = Date.now();
    const scope = baseScopeOf({ connection: params.connection, url, provider, scopeKey });
    const resolved = resolveNotBeforeMs(params, nowMs);
    const ledger = openLedger(context, nowMs);
    const entry = ledger.setIfLater(
      scope,
      { notBefore: new Date(resolved.notBeforeMs).toISOString(), provider: resolved.provider ?? provider, limitType: resolved.limitType, reason: parseOptionalText(params.reason) ?? resolved.reason },
      nowMs,
    );
    return { data: { scope, entry, kept: entry.notBefore === new Date(resolved.notBeforeMs).toISOString() }, crossFlowState: ledger.toCrossFlowState(context.crossFlowState) };
  },
});
