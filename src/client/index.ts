/**
 * Throttle-aware HTTP client: the public entry point for the Prismatic component, for
 * code-native integrations and for plain Node users.
 *
 *   const store = createMemoryStore();             // share it between clients to coordinate them
 *   const client = createThrottleClient({ baseUrl, headers, store, onLongWait: "defer" });
 *   const result = await client.request({ method: "GET", url: "/items" });
 *   // result.outcome: "success" | "deferred" | "http_error" | "gave_up"; result.notBefore when deferred
 *
 * Outcomes: "success" (a final answer < 400 that is not a throttle); "http_error" (a final answer
 * >= 400 that is not a throttle: 404, 400, a permission 403); "gave_up" (a retryable failure that
 * ran out of attempts or time with no known resume time: a 5xx, a dropped connection); "deferred"
 * (onLongWait "defer": the wait is longer than the inline limit, or throttles used up the attempts
 * or the time; notBefore says when to resume). onLongWait "fail" throws
 * ThrottleDeferredError { notBefore, waitMs, provider, scope, reason } instead. A write that got
 * no answer and has no idempotency key throws WriteOutcomeUnknownError and is never repeated; a
 * response over the size limit throws ResponseTooLargeError.
 */
export { createThrottleClient } from "./client";
export type { ThrottleClient, ThrottleClientOptions, ThrottleRequest, ThrottleResult, ThrottleOutcome, AttemptRecord, Clock, ClientLogger, ClientLimits } from "./types";
export { ThrottleDeferredError, WriteOutcomeUnknownError, ThrottleInputError, ResponseTooLargeError } from "./errors";
export { realClock, MAX_TIMER_MS } from "./clock";
export { belongsElsewhere, fingerprint, scopeFor, scopeWithParts, spansWholeApi } from "./scope";
export { createRedactor } from "./redact";
export { DEFAULT_LIMITS } from "./options";
