/**
 * May this request be sent again after this answer? One pure rule, used by the client before a
 * retry (or a deferral that a flow retry would repeat) and by `explain`, so the two never disagree.
 *
 * - Idempotent methods (GET, HEAD, OPTIONS, TRACE, PUT, DELETE) may always be repeated: "the
 *   intended effect on the server of multiple identical requests ... is the same as the effect
 *   for a single such request" (RFC 9110 §9.2.2, https://www.rfc-editor.org/rfc/rfc9110#section-9.2.2).
 * - A POST or PATCH may be repeated when
 *   - it carries an idempotency key (non-blank; draft-ietf-httpapi-idempotency-key-header), so the
 *     server recognises the repeat;
 *   - its body is a GraphQL query, a read (graphql-operation.ts);
 *   - the dialect documents that this answer means the request was not processed (Twilio 20429,
 *     Shopify THROTTLED: Verdict.writeNotProcessed);
 *   - the answer is a throttle rejection: a rate limiter refuses a request instead of executing it
 *     (429 Too Many Requests, RFC 6585 §4; GitHub's rate-limit 403, Slack's ratelimited). Octokit,
 *     the Stripe, OpenAI and Anthropic SDKs and HubSpot's client all repeat writes after one. The
 *     caller may turn this off (retryWritesAfterThrottle: false).
 * - Otherwise a write is not repeated: no response (timeout, reset) or a 5xx leaves the outcome
 *   unknown, so RFC 9110 §9.2.2's "a client SHOULD NOT automatically retry a request with a
 *   non-idempotent method unless it has some means to know that the request semantics are actually
 *   idempotent ... or some means to detect that the original request was never applied" applies.
 *   That includes a 503 or 529 "overloaded" with Retry-After: the status can come from a proxy or a
 *   load shedder after the origin took the request, and none of the providers here documents that
 *   such a write was not applied, so it counts as ambiguous, not as a refusal.
 */
import { isGraphqlReadOnly } from "./graphql-operation";
import type { Decision, HeaderInput, Verdict } from "./types";

/** RFC 9110 §9.2.2: the methods whose repetition has no further effect. */
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]);

/** The limit kinds whose answer is a rate limiter's refusal, whatever the status code. */
const REFUSAL_LIMITS = new Set(["burst", "quota", "concurrency", "cost"]);

export interface WriteSafetyRequest {
  method: string;
  /** The request's idempotency key; blank (after trim) counts as none. */
  idempotencyKey?: string | null;
  /** The request headers: an Idempotency-Key among them counts as the key. */
  headers?: HeaderInput;
  /** The request body: a GraphQL query-only body is a read even as POST. */
  body?: unknown;
}

export interface WriteSafetyOptions {
  /** Repeat a write after a throttle rejection (it was refused, not executed). Default true. */
  retryWritesAfterThrottle?: boolean;
}

export type WriteSafetyBasis =
  | "idempotent-method"
  | "idempotency-key"
  | "graphql-query"
  | "not-processed"
  | "throttle-refusal"
  | "throttle-retry-off"
  | "no-response"
  | "ambiguous";

export interface WriteSafety {
  /** True when sending the request again cannot duplicate a write. */
  repeatable: boolean;
  basis: WriteSafetyBasis;
  /** One sentence a person can read. */
  reason: string;
}

function keyOf(request: WriteSafetyRequest): string | null {
  const explicit = typeof request.idempotencyKey === "string" ? request.idempotencyKey.trim() : "";
  if (explicit !== "") return explicit;
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (name.toLowerCase() !== "idempotency-key") continue;
    const text = Array.isArray(value) ? value.join(",") : value === null || value === undefined ? "" : String(value);
    if (text.trim() !== "") return text.trim();
  }
  return null;
}

/**
 * A real answer that refused the request without executing it: a throttle on a 4xx (429, GitHub's
 * rate-limit 403, a 413 with Retry-After), or any status carrying a limiter's own signal (Slack's
 * 200 ratelimited, a 503 with a quota code). A 5xx whose only sign is overload (limitType
 * "server": 503/529 with Retry-After) is not one.
 */
function isThrottleRefusal(verdict: Verdict): boolean {
  if (!verdict.throttled || !(verdict.status >= 100 && verdict.status < 600)) return false;
  return (verdict.status >= 400 && verdict.status < 500) || REFUSAL_LIMITS.has(verdict.limitType);
}

/**
 * Whether the request may be sent again after `verdict` (null when no response arrived: a
 * timeout, a reset connection). Pure; never throws.
 */
export function writeRetrySafety(request: WriteSafetyRequest, verdict: Verdict | null, options: WriteSafetyOptions = {}): WriteSafety {
  const method = String(request.method ?? "").trim().toUpperCase() || "GET";
  if (IDEMPOTENT_METHODS.has(method)) {
    return { repeatable: true, basis: "idempotent-method", reason: `${method} is idempotent (RFC 9110 §9.2.2): repeating it has no further effect.` };
  }
  if (keyOf(request) !== null) {
    return { repeatable: true, basis: "idempotency-key", reason: `The ${method} carries an idempotency key, so the server can tell a repeat from a new write.` };
  }
  if (method === "POST" && request.body !== undefined && isGraphqlReadOnly(request.body)) {
    return { repeatable: true, basis: "graphql-query", reason: "The body is a GraphQL query, a read, so repeating the POST is safe." };
  }
  if (verdict === null || !(verdict.status >= 100)) {
    return { repeatable: false, basis: "no-response", reason: `No response (a timeout or dropped connection): the server may have executed the ${method}, so it is not repeated without an idempotency key.` };
  }
  if (verdict.writeNotProcessed) {
    return { repeatable: true, basis: "not-processed", reason: `The provider documents that a request answered this way was not processed, so repeating the ${method} cannot duplicate it.` };
  }
  if (isThrottleRefusal(verdict)) {
    if (options.retryWritesAfterThrottle === false) {
      return { repeatable: false, basis: "throttle-retry-off", reason: `The ${verdict.status} is a throttle, but retrying writes after a throttle is turned off; set an idempotency key to retry this ${method}.` };
    }
    return { repeatable: true, basis: "throttle-refusal", reason: `A ${verdict.status} throttle means the rate limiter refused the ${method} without executing it (RFC 6585 §4), so repeating it cannot duplicate the write.` };
  }
  const what = verdict.status >= 500 ? `A ${verdict.status} is ambiguous for a write: the server or a proxy may have begun the ${method} before failing` : `A ${verdict.status} that is not a throttle does not say the ${method} was not executed`;
  return { repeatable: false, basis: "ambiguous", reason: `${what}, so it is not repeated without an idempotency key (RFC 9110 §9.2.2).` };
}

/**
 * The decision the client acts on: plan()'s, unless it would send the request again (a retry now,
 * or a deferral that a flow retry repeats) and the request is not safe to repeat; then a failure
 * that says why, keeping the notBefore for a person to read.
 */
export function applyWriteSafety(decision: Decision, safety: WriteSafety): Decision {
  if (safety.repeatable || (decision.decision !== "retry" && decision.decision !== "defer")) return decision;
  return { decision: "fail", notBefore: decision.notBefore, reason: `Not repeated: ${safety.reason} ${decision.reason}` };
}
