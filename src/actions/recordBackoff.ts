import { action, input } from "@prismatic-io/spectral";
import type { GovernorState } from "../engine";
import { ThrottleInputError } from "../client";
import { parseJsonish, parseOptionalText, parseScope, parseSeconds, scopeInputs, type NumberSpec } from "../inputs";
import { credentialScopesSchema, isoTime, NOT_BEFORE_DESCRIPTION, scopeSchema, scopeViewSchema, warningSchema, type Schema } from "./schemas";
import { baseScopeOf, credentialScopesForHost, SAME_SCOPE_DIRECTIONS, credentialScopesWarning, openStore, viewOf, type CredentialScope, type ScopeView } from "./shared";

const WAIT: NumberSpec = { label: "Wait (seconds)", fallback: 60, min: 0, max: 31 * 86_400 };

interface Resolved {
  notBeforeMs: number;
  reason: string;
  limitType: string;
  provider: string | null;
}

/** A verdict from Explain Throttle Response: its notBefore, else now + its minWaitMs. */
function fromVerdict(verdict: object, nowMs: number): Resolved {
  const v = verdict as { minWaitMs?: unknown; notBefore?: unknown; reason?: unknown; limitType?: unknown; provider?: unknown };
  const fromIso = typeof v.notBefore === "string" ? Date.parse(v.notBefore) : Number.NaN;
  const waitMs = typeof v.minWaitMs === "number" && Number.isFinite(v.minWaitMs) && v.minWaitMs >= 0 ? v.minWaitMs : null;
  const notBeforeMs = Number.isFinite(fromIso) ? fromIso : waitMs !== null ? nowMs + waitMs : Number.NaN;
  if (!Number.isFinite(notBeforeMs)) {
    throw new ThrottleInputError("Invalid Verdict: it has neither notBefore nor minWaitMs. Reference the output of an Explain Throttle Response step that took its Throttled branch, or clear Verdict and set Wait (seconds).");
  }
  return { notBeforeMs, reason: typeof v.reason === "string" ? v.reason : "recorded from a verdict", limitType: typeof v.limitType === "string" ? v.limitType : "unknown", provider: typeof v.provider === "string" ? v.provider : null };
}

/**
 * The not_before to record. Precedence, as the inputs' comments say: Not Before when set; else
 * Verdict when set; else Wait (seconds).
 */
function resolveNotBefore(params: Record<string, unknown>, nowMs: number): Resolved {
  const at = parseOptionalText(params.notBefore);
  if (at) {
    const ms = Date.parse(at);
    if (!Number.isFinite(ms)) throw new ThrottleInputError(`Invalid Not Before: "${at.slice(0, 60)}" is not an ISO 8601 time. Enter e.g. 2026-01-01T12:00:00Z, or clear it and use Verdict or Wait (seconds).`);
    return { notBeforeMs: ms, reason: "recorded by Record Backoff", limitType: "unknown", provider: null };
  }
  const verdict = parseJsonish("Verdict", params.verdict);
  if (verdict !== undefined && verdict !== null && typeof verdict === "object") return fromVerdict(verdict, nowMs);
  if (verdict !== undefined) throw new ThrottleInputError("Invalid Verdict: expected the output of an Explain Throttle Response step (an object). Reference that step's output, or clear Verdict and set Wait (seconds).");
  if (parseOptionalText(params.waitSeconds) === undefined) throw new ThrottleInputError("Missing time: set Not Before, Verdict (the output of Explain Throttle Response) or Wait (seconds).");
  return { notBeforeMs: nowMs + Math.round(parseSeconds(WAIT, params.waitSeconds) * 1000), reason: "recorded by Record Backoff", limitType: "unknown", provider: null };
}

interface RecordData {
  scope: string;
  requested: string;
  kept: boolean;
  entry: ScopeView;
  warning: string | null;
  credentialScopes: CredentialScope[];
}

const recordExample: RecordData = {
  scope: "generic|api.example.com|3f9a1c0d2b7e4a56",
  requested: "2026-03-02T11:00:00.000Z",
  kept: true,
  entry: {
    notBefore: "2026-03-02T11:00:00.000Z",
    nextStart: "2026-03-02T11:00:00.000Z",
    reason: "429 with Retry-After: 3600.",
    limitType: "burst",
    breaker: "closed",
    throttlesInARow: 0,
    budget: { limit: null, windowSeconds: null, remaining: null, resetAt: null, learnedFrom: null },
    updatedAt: "2026-03-02T10:00:00.000Z",
  },
  warning: null,
  credentialScopes: [],
};

const recordSchema: Schema = {
  type: "object",
  required: ["scope", "requested", "kept", "entry", "warning", "credentialScopes"],
  properties: {
    scope: scopeSchema,
    requested: isoTime("The not_before this step asked to record."),
    kept: { type: "boolean", description: "True when it was recorded; false when a later not_before was already recorded (the later one always wins)." },
    entry: { ...scopeViewSchema, description: "What is recorded for the scope now." },
    warning: warningSchema,
    credentialScopes: credentialScopesSchema,
  },
  examples: [recordExample],
};

/** Record Backoff: set, if later, a not_before for a scope. */
export const recordBackoff = action({
  display: {
    label: "Record Backoff",
    description: "Set a not_before (the time before which no request should be made) for an API's rate-limit scope; it is kept only if later than the one recorded.",
    directions: `${SAME_SCOPE_DIRECTIONS} The time comes from Not Before if set, else from Verdict if set, else from Wait (seconds).`,
  },
  inputs: {
    ...scopeInputs,
    notBefore: input({
      label: "Not Before",
      type: "string",
      required: false,
      comments: `${NOT_BEFORE_DESCRIPTION} Used first: when it is set, Verdict and Wait (seconds) are ignored.`,
      example: "2026-01-01T12:00:00Z",
      placeholder: "2026-01-01T12:00:00Z",
      clean: parseOptionalText,
    }),
    verdict: input({
      label: "Verdict",
      type: "data",
      required: false,
      comments: "The output of an Explain Throttle Response step: its notBefore (or now + its wait) is recorded, with its reason. Used when Not Before is blank; when it is set, Wait (seconds) is ignored.",
      example: '{"throttled": true, "minWaitMs": 30000, "reason": "429 with Retry-After: 30."}',
      placeholder: "Reference an Explain Throttle Response step's output",
      clean: (v: unknown) => parseJsonish("Verdict", v),
    }),
    waitSeconds: input({
      label: WAIT.label,
      type: "string",
      required: false,
      comments: "A wait from now, in seconds (decimals allowed). Used only when Not Before and Verdict are both blank.",
      example: "600",
      placeholder: "600",
      clean: parseOptionalText,
    }),
    reason: input({ label: "Reason", type: "string", required: false, comments: "Why the wait is recorded; shown by Check Backoff and by Send Request steps that wait for it.", example: "Nightly sync used up the daily quota", placeholder: "Why", clean: parseOptionalText }),
  },
  // Writes this component's state into cross-flow state: never run it just to fill the designer.
  performSafety: "notAllowed",
  examplePayload: { data: recordExample },
  outputSchema: { type: "actionOutput", schema: recordSchema },
  perform: async (context, params): Promise<{ data: RecordData; crossFlowState?: Record<string, unknown> }> => {
    const target = { connection: params.connection, ...parseScope(params) };
    const nowMs = Date.now();
    const resolved = resolveNotBefore(params, nowMs);
    const store = openStore(context, params);
    try {
      const scope = await baseScopeOf(target, store);
      const requested = new Date(resolved.notBeforeMs).toISOString();
      const state = await store.holdUntil(scope, resolved.notBeforeMs, parseOptionalText(params.reason) ?? resolved.reason, (resolved.limitType as GovernorState["notBeforeType"]) ?? "unknown");
      const credentialScopes = await credentialScopesForHost(store, target, scope, nowMs);
      const warning = credentialScopesWarning(credentialScopes, nowMs, "recorded into");
      if (warning) context.logger.warn(warning);
      const data: RecordData = { scope, requested, kept: state.notBeforeMs === resolved.notBeforeMs, entry: viewOf(state, nowMs), warning, credentialScopes };
      return { data, crossFlowState: await store.toCrossFlowState() };
    } finally {
      await store.close();
    }
  },
});
