/**
 * The fault scenarios: what each one asks of the client, through its public API only
 * (createThrottleClient + client.request, src/client/index.ts), and what a correct client ends
 * with. The goals every row shares (issue 11): no hang past the budget, no duplicate execution,
 * peak RSS under 200 MB, every error typed, no secret at a cross-origin redirect target or in
 * anything the client returns, throws or logs.
 */
import type { RetryPolicy } from "../../engine";

/** The policy of every scenario: a budget short enough for a suite, long enough for a retry or two. */
export const SUITE_POLICY: Partial<RetryPolicy> = { maxAttempts: 3, maxTotalMs: 4000, maxInlineWaitMs: 2000, backoffBaseMs: 100, backoffCapMs: 400, jitter: "full" };
export const SUITE_TIMEOUT_MS = 1000;
/** A correct client is done within its total time plus one attempt's timeout. */
export const BUDGET_MS = (SUITE_POLICY.maxTotalMs ?? 0) + SUITE_TIMEOUT_MS;
export const PEAK_RSS_GOAL_MB = 200;
/** Heap still held after a run of requests and a full GC: a client that keeps nothing holds about 0. */
export const RETAINED_HEAP_GOAL_MB = 1;
/**
 * Requests sent before the heap is measured. Through this client on Node 20.20 the heap kept
 * after a GC grows by about 700, 500, 250, then under 70 bytes per request over the first four
 * thousands (with or without signals: caches filling up, not a leak), so the measure starts after 3000.
 */
export const WARM_UP_REQUESTS = 3000;

/** Credentials the scenarios send; the table counts every form of them wherever they must not be. */
export const FAULT_TOKEN = "sk_fault_9f8e7d6c5b4a3210";
export const FAULT_API_KEY = "ak-fault-1a2b3c4d5e6f";
export const FAULT_SECRETS = [FAULT_TOKEN, FAULT_API_KEY];

export type Credential = "authorization" | "x-api-key";

export interface FaultScenario {
  id: string;
  title: string;
  /** The route on the fault server, after /<run>/. */
  path: string;
  method: "GET" | "POST";
  data?: unknown;
  /** Send an idempotency key (the same on every attempt, if the client keeps its word). */
  idempotencyKey?: boolean;
  /** null: no timeoutMs given, so the client's default must bound the wait. */
  timeoutMs: number | null;
  onLongWait: "fail" | "defer";
  credential: Credential;
  /**
   * How a correct client ends: outcomes ("success", "gave_up", "deferred", "http_error"), error
   * class names, or "typed error" for any error class the client exports (a timeout or size
   * error the client may name as it likes).
   */
  expect: readonly string[];
  /** Calls the server may see at most: no retry before the server's time, none past maxAttempts. */
  maxCalls: number;
  /**
   * Send the request this many times, each with its own AbortSignal while the client holds a
   * long-lived one, and measure the heap retained after a full GC (AbortSignal.any on Node 20
   * keeps every composed signal that has a listener alive as long as its sources).
   */
  repeat?: number;
  /** Overrides BUDGET_MS (repeat scenarios: the whole run). */
  budgetMs?: number;
}

const maxAttempts = SUITE_POLICY.maxAttempts ?? 1;
const base = { method: "GET" as const, timeoutMs: SUITE_TIMEOUT_MS, onLongWait: "fail" as const, credential: "authorization" as const, maxCalls: maxAttempts };

export const FAULT_SCENARIOS: readonly FaultScenario[] = [
  { ...base, id: "reset-before-get", title: "reset before the work, GET", path: "reset-before", expect: ["success"], maxCalls: 2 },
  { ...base, id: "reset-before-post", title: "reset before the work, POST, no key", path: "reset-before", method: "POST", data: { amount: 1 }, expect: ["WriteOutcomeUnknownError"], maxCalls: 1 },
  { ...base, id: "reset-after-post", title: "reset after the work, POST, no key", path: "reset-after", method: "POST", data: { amount: 1 }, expect: ["WriteOutcomeUnknownError"], maxCalls: 1 },
  { ...base, id: "reset-after-post-key", title: "reset after the work, POST + idempotency key", path: "reset-after", method: "POST", data: { amount: 1 }, idempotencyKey: true, expect: ["success"], maxCalls: 2 },
  { ...base, id: "trickle", title: "body trickles 1 byte / 200 ms", path: "trickle", expect: ["gave_up", "typed error"] },
  { ...base, id: "endless", title: "endless body", path: "endless", expect: ["gave_up", "typed error"] },
  { ...base, id: "gzip-bomb", title: "gzip bomb (1 GiB of zeros)", path: "gzip-bomb", expect: ["gave_up", "typed error"] },
  { ...base, id: "silent", title: "silent server, timeoutMs 1000", path: "silent", expect: ["gave_up", "typed error"] },
  { ...base, id: "silent-default", title: "silent server, no timeoutMs", path: "silent", timeoutMs: null, expect: ["gave_up", "typed error"] },
  { ...base, id: "retry-after-huge", title: "429 Retry-After 3000000 s (> 2^31 ms)", path: "retry-after/3000000", expect: ["ThrottleDeferredError"], maxCalls: 1 },
  { ...base, id: "retry-after-huge-defer", title: "429 Retry-After 3000000 s, defer", path: "retry-after/3000000", onLongWait: "defer", expect: ["deferred"], maxCalls: 1 },
  { ...base, id: "retry-after-date", title: "429 Retry-After Fri, 31 Dec 9999", path: `retry-after/${encodeURIComponent("Fri, 31 Dec 9999 23:59:59 GMT")}`, expect: ["ThrottleDeferredError"], maxCalls: 1 },
  { ...base, id: "retry-after-overflow", title: "429 Retry-After 1e20 s", path: "retry-after/100000000000000000000", expect: ["ThrottleDeferredError", "gave_up"], maxCalls: 1 },
  { ...base, id: "flap", title: "503, 503, then 200", path: "flap", expect: ["success"] },
  { ...base, id: "redirect-authorization", title: "302 to another host, Authorization", path: "redirect", expect: ["success", "http_error", "typed error"] },
  { ...base, id: "redirect-api-key", title: "302 to another host, X-Api-Key", path: "redirect", credential: "x-api-key", expect: ["success", "http_error", "typed error"] },
  {
    ...base,
    id: "signals",
    title: "2000 requests, client + request AbortSignal",
    path: "ok",
    repeat: 2000,
    budgetMs: 60_000,
    expect: ["success"],
    maxCalls: 2000 + WARM_UP_REQUESTS,
  },
];

export function scenarioById(id: string): FaultScenario {
  const found = FAULT_SCENARIOS.find((s) => s.id === id);
  if (!found) throw new Error(`Unknown fault scenario "${id}". Use one of: ${FAULT_SCENARIOS.map((s) => s.id).join(", ")}.`);
  return found;
}

export function credentialHeaders(credential: Credential): Record<string, string> {
  return credential === "authorization" ? { Authorization: `Bearer ${FAULT_TOKEN}` } : { "X-Api-Key": FAULT_API_KEY };
}
