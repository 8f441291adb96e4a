/**
 * Throttle-aware HTTP client: the public entry point for the Prismatic component, for
 * code-native integrations and for plain Node users.
 *
 * CONTRACT (the lab in src/lab/ and outside users code against this; keep it stable):
 *
 *   import { createThrottleClient, ThrottleDeferredError } from "../client";
 *   import { createMemoryLedger, createStateLedger, LEDGER_STATE_KEY } from "../ledger";
 *
 *   const ledger = createMemoryLedger();            // share it between clients = in-process coordination
 *   const client = createThrottleClient({
 *     baseUrl?: string,                              // prefixed to relative request URLs
 *     headers?: Record<string, string>,              // sent on every request (auth headers go here)
 *     provider?: string,                             // dialect id, "auto" (default) picks by host
 *     policy?: Partial<RetryPolicy>,                 // engine policy; defaults to DEFAULT_POLICY
 *     ledger?: Ledger,                               // default: a fresh in-memory ledger per client
 *     budgetThreshold?: number,                      // a 2xx showing remaining <= this records a not_before at the reset (default 0)
 *     breakerThreshold?: number,                     // consecutive throttles that open the scope's breaker (default 3)
 *     onLongWait?: "fail" | "defer",                 // fail (default): throw ThrottleDeferredError; defer: resolve with outcome "deferred"
 *     clock?: { nowMs(): number; sleep(ms: number, signal?: AbortSignal): Promise<void> },  // default Date.now / setTimeout
 *     random?: () => number,                         // default Math.random
 *     adapter?: AxiosAdapter,                        // run in-process without sockets (the lab)
 *     logger?: { info(msg: string): void; warn(msg: string): void; ... },  // one JSON line per decision
 *     credential?: string | string[],                // material to fingerprint (hash) into the scope and to redact everywhere
 *     secrets?: string[],                            // extra values to redact (api keys, tokens, passwords)
 *     scopeKey?: string,                             // overrides the computed ledger scope
 *     timeoutMs?: number,                            // default per-attempt timeout
 *     signal?: AbortSignal,                          // aborts every sleep and request of this client
 *   });
 *
 *   const result = await client.request({ method, url, data?, headers?, params?, idempotencyKey?, timeoutMs?, signal?, responseType? });
 *   // result: {
 *   //   outcome: "success" | "deferred" | "http_error" | "gave_up",
 *   //   status: number | null,                     // null when no request was sent (deferred by the ledger)
 *   //   headers: Record<string, string>,           // secrets removed
 *   //   data: unknown,                             // secrets removed
 *   //   attempts: [{ status: number | null, waitMs: number, waitSource: string | null }],  // one per call made; waitMs = the wait taken after it
 *   //   notBefore?: string,                        // ISO 8601, when outcome is "deferred" (or gave_up with a known wait)
 *   //   waitMs?: number,                           // the wait that was not taken inline
 *   //   reason: string,
 *   //   scope: string,                             // ledger scope (credential hashed, never the secret)
 *   //   verdict: Verdict | null,                   // the engine's reading of the last response
 *   // }
 *   // outcome "success": a final response < 400 that is not a throttle.
 *   // outcome "http_error": a final response >= 400 that is not a throttle (404, 400, a permission 403...).
 *   // outcome "gave_up": a retryable failure that ran out of attempts/time with no known resume time.
 *   // outcome "deferred" (onLongWait "defer"): the wait is longer than the inline limit; notBefore says when to resume.
 *   // onLongWait "fail": the same situation throws ThrottleDeferredError { notBefore, waitMs, provider, scope, reason }.
 *   // A write (POST/PATCH) that timed out or lost its connection without an idempotency key throws
 *   // WriteOutcomeUnknownError and is never retried.
 *
 *   Ledger (src/ledger): get(scope), setIfLater(scope, {...}), recordThrottle, recordSuccess, clear(scope),
 *   prune(nowMs), entries(), toState() -> plain object, load(plainObject) (set-if-later merge,
 *   invalid entries dropped with a warning). Cross-flow state semantics: an execution builds
 *   createStateLedger(context.crossFlowState) at its start and returns
 *   { crossFlowState: ledger.toCrossFlowState(context.crossFlowState) } at its end.
 */
export { createThrottleClient } from "./client";
export type { ThrottleClient, ThrottleClientOptions, ThrottleRequest, ThrottleResult, ThrottleOutcome, AttemptRecord, Clock, ClientLogger } from "./types";
export { ThrottleDeferredError, WriteOutcomeUnknownError, ThrottleInputError } from "./errors";
export { realClock, MAX_TIMER_MS } from "./clock";
export { belongsElsewhere, fingerprint, scopeFor } from "./scope";
export { createRedactor } from "./redact";
