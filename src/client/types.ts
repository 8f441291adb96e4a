import type { AxiosAdapter, ResponseType } from "axios";
import type { RetryPolicy, ScopeParts, Verdict } from "../engine";
import type { Ledger } from "../ledger";

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

export interface ThrottleClientOptions {
  baseUrl?: string;
  headers?: Record<string, string>;
  /** Query parameters sent on every request (an API key in the query goes here). */
  params?: Record<string, string>;
  /** A dialect id, or "auto" (the default) to pick one by host. */
  provider?: string;
  policy?: Partial<RetryPolicy>;
  /** Share one ledger between clients to coordinate them in-process. */
  ledger?: Ledger;
  /** A success showing remaining <= this records a not_before at the reset (default 0: only when spent). */
  budgetThreshold?: number;
  /** Consecutive throttles that open the scope's breaker (default 3). */
  breakerThreshold?: number;
  onLongWait?: LongWaitMode;
  /**
   * Retry a POST/PATCH without an idempotency key when its answer was a throttle below 500 (a 429,
   * or a dialect's throttle): the server refused it without doing it (default true).
   */
  retryWritesAfterThrottle?: boolean;
  clock?: Clock;
  random?: () => number;
  adapter?: AxiosAdapter;
  logger?: ClientLogger;
  /** Credential material, fingerprinted (hashed) into the scope and redacted everywhere. */
  credential?: string | readonly string[];
  /** Further values that must never appear in a log line, result or error. */
  secrets?: readonly string[];
  /** Overrides the computed ledger scope. */
  scopeKey?: string;
  /** Per-attempt timeout, ms (default none). */
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
  /** Makes a POST/PATCH safe to retry; sent as Idempotency-Key and reused on every attempt. */
  idempotencyKey?: string;
  timeoutMs?: number;
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
  /** Time spent waiting on the ledger before calls (another request's not_before). */
  ledgerWaitMs: number;
  reason: string;
  scope: string;
  provider: string;
  verdict: Verdict | null;
}

export interface ThrottleClient {
  request(request: ThrottleRequest): Promise<ThrottleResult>;
  readonly ledger: Ledger;
  /** The ledger scope a URL maps to for this client (credential hashed). */
  scopeOf(url: string): string;
  /** The scope parts a request to this URL counts against, known before sending (GitHub's resource...). */
  requestPartsOf(url: string, method?: string): ScopeParts;
}
