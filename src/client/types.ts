import type { AxiosAdapter, ResponseType } from "axios";
import type { RetryPolicy, ScopeParts, Verdict } from "../engine";
import type { GovernorStore } from "../store";

/** The client's time source. Injected so the lab and tests can run on virtual time. */
export interface Clock {
  nowMs(): number;
  /** Resolves after ms (the client never asks for more than MAX_TIMER_MS); rejects when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The subset of Prismatic's context.logger (and console) the client writes to. */
export interface ClientLogger {
  info(message: string): void;
  warn(message: string): void;
}

export type LongWaitMode = "fail" | "defer";

/** The client's own limits, beside the engine's retry policy. */
export interface ClientLimits {
  /** The whole of one attempt (connect, headers and body), ms. Default 30 s. */
  attemptTimeoutMs: number;
  /** The largest response body accepted, bytes, counted after decompression. Default 32 MiB. */
  maxResponseBytes: number;
}

export interface ThrottleClientOptions {
  baseUrl?: string;
  headers?: Record<string, string>;
  /** Query parameters sent on every request (an API key in the query goes here). */
  params?: Record<string, string>;
  /** A dialect id, or "auto" (the default) to pick one by host. */
  provider?: string;
  policy?: Partial<RetryPolicy & ClientLimits>;
  /** Where the governors live. Share one store between clients to coordinate them; default: a new in-memory store per client. */
  store?: GovernorStore;
  /**
   * Keep this many units of a shown budget for others (an override; the governor needs no
   * worker count). Default 0.
   */
  budgetThreshold?: number;
  /** Consecutive throttles that open a scope's breaker (for the store this client creates). Default 3. */
  breakerThreshold?: number;
  /**
   * A POST or PATCH whose answer was a throttle rejection (the API refused it without doing it,
   * RFC 6585 §4) is retried like a read. Default true. Ambiguous failures (no answer, 5xx) still
   * need an idempotency key.
   */
  retryWritesAfterThrottle?: boolean;
  onLongWait?: LongWaitMode;
  clock?: Clock;
  random?: () => number;
  adapter?: AxiosAdapter;
  logger?: ClientLogger;
  /** Credential material, fingerprinted (a keyed hash) into the scope and redacted everywhere. */
  credential?: string | readonly string[];
  /** Further values that must never appear in a log line, result or error. */
  secrets?: readonly string[];
  /** Overrides the computed scope. */
  scopeKey?: string;
  /** Per-attempt timeout, ms (default 30 s; same as policy.attemptTimeoutMs). */
  timeoutMs?: number;
  responseType?: ResponseType;
  signal?: AbortSignal;
}

export interface ThrottleRequest {
  method: string;
  url: string;
  data?: unknown;
  headers?: Record<string, string>;
  params?: Record<string, string>;
  /** Makes a POST/PATCH safe to retry after any failure; sent as Idempotency-Key and reused on every attempt. */
  idempotencyKey?: string;
  timeoutMs?: number;
  /**
   * No attempt of this request starts after this time (epoch ms): a slot or a retry that would
   * start later defers the request, as a wait past the inline limit does. An attempt that starts
   * keeps its whole timeout (up to the deadline). For a caller that must not start what it could
   * not finish (Send Batch: the execution's end less one attempt timeout). Default: the deadline.
   */
  latestStartMs?: number;
  responseType?: ResponseType;
  signal?: AbortSignal;
}

export interface AttemptRecord {
  /** The HTTP status, or null when no response came (timeout, dropped connection). */
  status: number | null;
  /** The wait taken after this attempt before the next one (0 for the last). */
  waitMs: number;
  waitSource: string | null;
}

export type ThrottleOutcome = "success" | "deferred" | "http_error" | "gave_up";

export interface ThrottleResult {
  outcome: ThrottleOutcome;
  status: number | null;
  headers: Record<string, string>;
  data: unknown;
  attempts: AttemptRecord[];
  notBefore?: string;
  waitMs?: number;
  /** Time spent waiting for this request's slots (the governor spacing it, a wait another request was told). */
  slotWaitMs: number;
  reason: string;
  scope: string;
  provider: string;
  verdict: Verdict | null;
}

export interface ThrottleClient {
  request(request: ThrottleRequest): Promise<ThrottleResult>;
  readonly store: GovernorStore;
  /** The scope a URL maps to for this client (the credential as a keyed hash, never the secret). */
  scopeOf(url: string, method?: string): Promise<string>;
  /** The base scope (without the request's own part of the API). */
  baseScopeOf(url: string): Promise<string>;
  /** The scope parts a request to this URL counts against, known before sending (GitHub's resource...). */
  requestPartsOf(url: string, method?: string): ScopeParts;
}
