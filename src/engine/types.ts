/**
 * The engine's vocabulary (the meanings to keep are in docs/dialects.md and the README's "What the
 * engine decides"): a verdict says what a response means; a decision says what to do next.
 */

/** What kind of limit a response speaks of. */
export type LimitType =
  | "burst" // per-second/minute/hour windows, leaky buckets: retry after the wait
  | "quota" // daily, monthly, billing or spend allowance: do not retry in this run
  | "concurrency" // too many requests in flight: retry after a short wait
  | "cost" // a points budget (GraphQL cost): retry once the points are restored
  | "contention" // object lock contention (Stripe lock_timeout): retry with backoff
  | "server" // overload or transient server failure (503/504, 529)
  | "permission" // looks like a throttle status (403) but is an access error
  | "validation" // the request can never succeed as sent (cost over the maximum, bad input)
  | "none"; // not a limit at all (a success, or an ordinary error)

/** Header values as they come from Node, axios, fetch or a JSON fixture. */
export type HeaderValue = string | number | boolean | readonly string[] | null | undefined;
export type HeaderInput = Readonly<Record<string, HeaderValue>>;

export interface ClassifyInput {
  request?: { method?: string; url?: string };
  response: { status: number; headers?: HeaderInput; body?: unknown };
  /** A dialect id ("github", "shopify", ...); when absent the host picks one. */
  provider?: string;
}

export interface ClassifyOptions {
  /** The local clock, epoch milliseconds. Never read from a global. */
  nowMs: number;
  /**
   * The longest server wait taken at its word (ms; default 31 days). A longer one is reported in
   * `ignored` and `waitAboveCapMs`, minWaitMs stays null, and plan() defers instead of sleeping.
   */
  maxServerWaitMs?: number;
  /**
   * The server's clock as the caller learned it from earlier answers (server - local, ms; see
   * server-clock.ts): waits stated as instants are measured against nowMs + this instead of the
   * answer's own Date, which is truncated to the second. Ignored when this answer's Date
   * contradicts it by more than a second.
   */
  serverClockOffsetMs?: number;
  /**
   * The request URL's host (lower case, no trailing dot) and path, when the caller has parsed it
   * already (the client has): classify then does not parse `request.url` again.
   */
  requestUrlParts?: { host: string; path: string };
}

/** The remaining allowance a response shows, on a success too. */
export interface Budget {
  remaining: number;
  limit: number | null;
  /** When the allowance resets, ISO 8601 on the local clock, or null when not shown. */
  resetAt: string | null;
  /** Which signal gave it, e.g. "x-ratelimit-remaining", "x-shopify-shop-api-call-limit". */
  source: string;
  /** A continuously refilling bucket's rate, units per second (Shopify/Jobber restoreRate), when shown. */
  restorePerSecond?: number;
  /**
   * restorePerSecond is the provider's documented rate for this bucket size, not a figure the API
   * sent (Shopify REST): a pacing estimate the count itself may prove too slow.
   */
  restoreEstimated?: boolean;
  /**
   * With restoreEstimated: the slowest rate, units per second, the provider documents for any
   * bucket (Shopify REST: 2 per s). A bucket shown smaller than the documented ones leaks at no
   * documented rate, and its estimate is paced at this floor until a 429 says it is too fast.
   */
  restoreFloorPerSecond?: number;
  /**
   * The window's length in ms, where the API names it: a rolling window with no reset instant
   * (HubSpot Interval-Milliseconds), or the IETF RateLimit-Policy's w= beside the reset.
   */
  windowMs?: number;
  /**
   * Units this request spent, when the budget counts more than requests (a GraphQL query's cost:
   * Shopify's and Jobber's requestedQueryCost), so that a pacer knows what the next one will take.
   */
  requestUnits?: number;
  /**
   * The budget counts requests in flight, not requests per window (IETF RateLimit-Policy
   * qu="concurrent-requests"): a place frees when an answer comes, not at the reset.
   */
  concurrent?: boolean;
  /**
   * resetAt was counted down from when the server wrote the answer (the IETF fields' t= and reset=,
   * delta seconds: https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/), and is
   * read when the answer arrived: it lands up to the answer's time in flight after the instant the
   * server meant, on top of the whole-second rounding. An epoch reset names the instant itself.
   */
  resetCountsDown?: boolean;
}

/** A signal present in the response that could not be used, and why. */
export interface IgnoredSignal {
  signal: string;
  value: string;
  why: string;
}

/** The parts that name a limit's real scope (GitHub resource, Slack method, Shopify store...). */
export type ScopeParts = Readonly<Record<string, string>>;

export interface Verdict {
  provider: string;
  status: number;
  /** The request was rejected by a usage limit, or by explicit server back-pressure. */
  throttled: boolean;
  /** An automatic retry in this run, after minWaitMs or backoff, is the right reaction. */
  retryable: boolean;
  limitType: LimitType;
  /** The wait the response implies (ms, a non-negative integer), or null when it gives none. */
  minWaitMs: number | null;
  /** Which signal set minWaitMs ("retry-after", "x-ratelimit-reset", "doc:fixed-60s", ...). */
  waitSource: string | null;
  /** The server's own retry verdict (Stripe-Should-Retry, x-should-retry), or null. */
  retryAllowed: boolean | null;
  /** A write that got this answer was documented as not processed (e.g. Twilio 20429). */
  writeNotProcessed: boolean;
  scope: ScopeParts;
  budget: Budget | null;
  ignored: IgnoredSignal[];
  /** Deviations from the standards that were read anyway (decimal Retry-After, ISO dates...). */
  deviations: string[];
  /** One sentence a person can read. */
  reason: string;
  /**
   * A wait the server asked for that is above the cap (maxServerWaitMs), in ms (saturated at
   * Number.MAX_SAFE_INTEGER). It is not minWaitMs: plan() defers such a verdict, never sleeps it.
   * Absent when no wait was above the cap.
   */
  waitAboveCapMs?: number;
}

/** What a dialect decides; classify() fills in the rest. */
export interface Interpretation {
  throttled: boolean;
  retryable: boolean;
  limitType: LimitType;
  minWaitMs: number | null;
  waitSource: string | null;
  retryAllowed?: boolean | null;
  writeNotProcessed?: boolean;
  scope?: ScopeParts;
  budget?: Budget | null;
  reason: string;
}

export type JitterKind = "full" | "equal" | "decorrelated" | "none";

export interface RetryPolicy {
  /** Total attempts, the first one included. */
  maxAttempts: number;
  /** Total time from the first attempt; a wait that ends later defers or fails. */
  maxTotalMs: number;
  /** An absolute limit (epoch ms on the local clock), e.g. the execution's end; null for none. */
  deadlineMs: number | null;
  /**
   * The longest wait the API imposes (a Retry-After, a backoff after its throttles) to sleep through
   * inside this run; a longer one defers. A start the scope's own pacing sets (the claims ahead,
   * a window's units still counted) waits as long as maxTotalMs and deadlineMs allow.
   */
  maxInlineWaitMs: number;
  /** Fallback backoff when the server gives no wait. */
  backoffBaseMs: number;
  backoffCapMs: number;
  jitter: JitterKind;
  /** Jitter added on top of a server-given wait: ratio of the wait, and its ceiling. */
  serverWaitJitterRatio: number;
  serverWaitJitterMaxMs: number;
  /**
   * The longest server wait taken at its word (default 31 days): a verdict asking for more is
   * deferred by this much, never retried. Optional so that existing policies stay valid.
   */
  maxServerWaitMs?: number;
}

export interface AttemptHistory {
  /** Attempts made so far, the one that produced the verdict included (>= 1). */
  attempts: number;
  /** When the first attempt started, epoch ms on the local clock. */
  firstAttemptAtMs: number;
  /** The previous backoff wait, for decorrelated jitter. */
  previousWaitMs?: number | null;
  /** The request's method, upper case: a read that got no answer backs off as from a transient error (see plan.ts). */
  method?: string;
  /** Throttled attempts so far, the one that produced the verdict included: a throttle's backoff grows with these, not with the faults before them. Absent: every attempt counts. */
  throttledAttempts?: number;
  /**
   * The scope's state does not show what concurrent executions claim (cross-flow state, loaded when
   * the execution started): a request throttled again after the server's wait met others that waited
   * for the same instant, and its jitter grows (plan.ts serverWaitSpreadMs). Absent: false.
   */
  othersUnseen?: boolean;
  /**
   * The scope limits requests in flight (a place frees when an answer comes, not at a time): a
   * write that got no answer took no unit of a window, and its retry backs off as from a transient
   * error (plan.ts). The client asks its store (GovernorStore.freesOnAnswerNow). Absent: false.
   */
  placesFreeOnAnswer?: boolean;
  /**
   * Every claim on the scope's budget goes through the state the client asks (one process, or
   * Redis), and the state shows no one else spending it (GovernorState othersPerMs and reserveUnits
   * zero): the lost attempt's slot stays in the governor's log as a unit spent and the retry claims
   * its own, so nothing is taken unseen, and the write's retry backs off as from a transient error
   * (plan.ts). The client asks its store (GovernorStore.seesEveryClaimNow). Absent: false.
   */
  claimsAllSeen?: boolean;
}

export interface PlanOptions {
  nowMs: number;
  /** A random source in [0, 1); inject a seeded one in tests. */
  random: () => number;
}

export type Decision =
  | { decision: "done"; reason: string }
  | { decision: "retry"; waitMs: number; notBefore: string; waitSource: string; reason: string }
  | { decision: "defer"; waitMs: number; notBefore: string; reason: string }
  | { decision: "fail"; reason: string; notBefore: string | null };
