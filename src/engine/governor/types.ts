/**
 * The rate governor's vocabulary. One GovernorState per rate-limit scope, a plain JSON-safe
 * object, so that the same state machine can live in memory, in Prismatic cross-flow state, or
 * (ported to a Lua script) in Redis.
 *
 * The governor hands out SLOTS: each request claims the next start time at which the scope's
 * budget allows it, so workers are spaced instead of stopped and restarted together. It learns
 * the budget from what the API shows (remaining, limit, reset, window length, restore rate) and,
 * when the API shows nothing, from its throttles.
 */
import type { LimitType } from "../types";

/** How spent units come back. */
export type Refill =
  /** Each unit comes back windowMs after it was spent (a sliding log; also safe for fixed windows and buckets). */
  | "window"
  /** All units come back at each reset (a fixed window); learned when a reset showed the full limit again. */
  | "fixed"
  /** Units come back continuously at limit / windowMs (a token bucket whose restore rate the API shows). */
  | "bucket";

/** One granted start: [atMs, seq, units]. A tuple keeps the stored state small. */
export type SlotTuple = [atMs: number, seq: number, units: number];

/** The server's own count, as one answer showed it. */
export interface Anchor {
  /** Units left after the observed request, as the server counted at its arrival. */
  remaining: number;
  /** The claim that answer belongs to: claims with a higher seq are not in `remaining` yet. */
  seq: number;
  /** When that claim was sent (the server counted it about then), epoch ms. */
  atMs: number;
  /** The server's reset: by then at least one unit is back (0 when not shown). */
  resetAtMs: number;
  /**
   * Units of earlier claims still unanswered when this answer came: sent about the same time,
   * they reached the server after the observed one, so its count does not include them either.
   */
  lateUnits: number;
  /** When this answer came (epoch ms): a request sent after it reached the server after the counted one. */
  answeredAtMs: number;
  /**
   * Claims of ours out when it was sent, itself included, as far as its answer could tell (started
   * by then and unanswered when it came): a count of requests in flight holds no more than these.
   */
  ownOutAtSend: number;
  /**
   * The reset this reading itself showed (epoch ms), where resetAtMs is an earlier reading's of the
   * same reset through whole-second rounding (the tightest); absent when they are the same or none.
   */
  shownResetAtMs?: number;
}

/**
 * Whether the budget counts requests in flight rather than requests per window: "shown" (the API
 * says so, IETF qu="concurrent-requests"), "testing" (the count came back before the reset although
 * nothing was sent in between that a window could have dropped, and one request sent once the
 * others are answered tests it), "inferred" (that request's count held no more than ours out),
 * "silent" (learned from throttles, nothing shown), "ruled-out" (an inference a throttle or a
 * count disproved: never inferred again), or "unknown".
 */
export type Concurrency = "unknown" | "shown" | "testing" | "inferred" | "silent" | "ruled-out";

export type InFlightTuple = [seq: number, leaseUntilMs: number, outAtGrant: number];

export interface GovernorState {
  v: 1;
  /** Claims granted so far (the last claim's seq). */
  seq: number;
  /** The latest start granted: grants are first come, first served, never earlier than this. */
  lastGrantMs: number;
  /** The server's wait: no start before this (0: none). Set-if-later. */
  notBeforeMs: number;
  notBeforeReason: string;
  notBeforeType: LimitType | "unknown";
  /** Units per window (requests, or points for a cost budget), or null when not known yet. */
  limit: number | null;
  /** The window length, ms, or null when not known. */
  windowMs: number | null;
  /**
   * Where windowMs came from: "shown" (the API said it), "inferred" (from resets and throttles),
   * "assumed" (one second, taken when a throttle told no wait), or "outlasted" (an assumed window a
   * later throttle found the lesson's units still counted in: longer, until a success bounds it).
   */
  windowSource: "shown" | "inferred" | "assumed" | "outlasted" | null;
  refill: Refill;
  /** Units one request spends (1 for request counts; a GraphQL query's cost for point budgets). */
  unitsPerRequest: number;
  /** Granted starts, ascending by time (and seq), bounded. */
  slots: SlotTuple[];
  anchor: Anchor | null;
  /** A single request allowed in flight to learn (cold start, half-open breaker, a reset): others wait for its answer. */
  probe: { seq: number; atMs: number; untilMs: number } | null;
  /**
   * Claims granted and not answered yet: [seq, leaseUntilMs, outAtGrant], outAtGrant being how many
   * of ours were in flight when it was granted, itself included (0: unknown, a state written before it).
   */
  inFlight: InFlightTuple[];
  /** The most requests in flight at once (slow start, or a concurrency limit learned from a throttle), or null for none. */
  inFlightCap: number | null;
  /** Slow start: the cap grows by one per success (doubling per round trip; past eight, no faster than about once a second); a learned concurrency limit does not. */
  inFlightCapGrows: boolean;
  /** Throttled answers in a row; at breakerThreshold the breaker opens (one probe at a time after the wait). */
  throttleStreak: number;
  breakerOpen: boolean;
  /**
   * Learning when the API shows no budget: successes in the current window and when it began
   * (under a silent concurrency limit: successes since its cap last grew).
   */
  okInWindow: number;
  windowStartMs: number;
  /**
   * The last seq granted when a lesson was taken (a throttle that taught the limit, or one that
   * ruled out an inferred concurrency limit): answers to earlier claims are that same saturation.
   */
  learnedAtSeq: number;
  /**
   * When the throttle that taught the last lesson was sent, epoch ms (0: none): the budget was
   * spent then, so what the server admits from then to the next throttle is what it regained.
   */
  lessonSentAtMs: number;
  /** The seq of the throttle that taught the last lesson (0: none). */
  lessonSeq: number;
  /** Smoothed answer time, ms (for probe leases and re-checks). */
  rttMs: number;
  /**
   * Units per ms that others spend from the same budget (other executions that do not share this
   * state, other apps on the same key): what the server's count lost beyond our own claims between
   * two readings. Kept in reserve, so that executions which cannot see each other do not all spend
   * the same last units.
   */
  othersPerMs: number;
  /**
   * Units kept for others that spend this budget unseen, learned from collisions: a throttle on a
   * slot the server's own count said was free raises it, a long run of clean answers lowers it.
   * Zero wherever the store sees every claim (memory, Redis); about the number of concurrent
   * executions minus one where each loads a stale copy (cross-flow state).
   */
  reserveUnits: number;
  /** Whether the budget is a concurrency limit (then inFlightCap holds it and no window paces). */
  concurrency: Concurrency;
  /**
   * A refill as the scope's own count showed it: the units the count came back by, beyond our
   * claims (and, behind a window shown with no reset, beyond our units leaving it), since
   * refillSinceMs (0: not counting). A rate this proves faster than the one estimated shortens the
   * window; a shown window whose count comes back faster than its units leave is a bucket.
   */
  refillSinceMs: number;
  refillSeenUnits: number;
  /** A success has shown the budget: the server shows its count on every answer, not only on throttles. */
  budgetOnSuccess: boolean;
  /**
   * An estimated bucket rate probed upward (estimate.ts): the window paced cleanly before the probe
   * halved it (0: not probing), the units admitted at the estimated pace since the last probe or
   * throttle (enough of them start a probe), and whether a probe has failed (later ones wait longer).
   */
  probedFromWindowMs: number;
  pacedCleanUnits: number;
  estimateProbeFailed: boolean;
  /**
   * An estimated bucket paced at the provider's slowest documented rate rather than at the one
   * documented for its size (ObservedBudget.restoreFloorPerSecond, observe.ts applyShape): the
   * last claim granted before the floor, or its last lesson, paced the scope (0: never floored).
   * A 429 on a later claim doubles the window, up to the documented rate's (estimate.ts
   * floorThrottled), and moves this on.
   */
  estimateFloorSeq: number;
  /** When the last answer (or loss) of a claim in flight came, epoch ms (0: none yet). */
  lastAnsweredAtMs: number;
  /**
   * A window learned from throttles alone, as an upper bound (the first success after throttles
   * that found it longer): the most a throttle has proven it is longer than (0: none), and the claim
   * sent to try a shorter one (0: none out). See windowTrial in model.ts.
   */
  windowFloorMs: number;
  trialSeq: number;
  /**
   * A count shown with no reset (Shopify REST's used/limit), read as a bucket at an estimated rate:
   * the instant a throttle's own wait said it would admit again (0: none). Once the count was seen
   * back in full there, as a window's comes back and no such bucket refills, the latest reset of
   * that window (count-window.ts).
   */
  countResetAtMs: number;
  updatedAtMs: number;
}

/** What the client asks for. */
export interface ClaimRequest {
  nowMs: number;
  /**
   * Do not reserve a start later than this where the API holds the scope (a wait it told, a backoff
   * after its throttles): answer "defer" instead. The inline limit, or the deadline.
   */
  latestStartMs: number;
  /**
   * Do not reserve a start later than this where the scope's own pacing sets it (the claims ahead
   * of it, the units its window still counts): the request's own time budget. Absent, or earlier
   * than latestStartMs: latestStartMs. A start a minute's window paces three windows ahead is the
   * budget being spent in full, not the API closed: deferred at the inline limit, a sliding 20 per
   * 60 s with 50 workers and 60 jobs left its last 19 to a flow retry.
   */
  latestPacedStartMs?: number;
  /** Units this request will spend; the scope's own estimate when absent. */
  units?: number;
  /**
   * A draw in [0, 1) from the caller's random source. When others share the budget unseen and
   * predict the same free instant, each request takes a random place among the contenders' share
   * of the refill instead of all arriving at once. Without it (or outside [0, 1)) the governor is
   * deterministic.
   */
  random?: number;
  /**
   * A start this caller was granted and has not used (a probe's, far ahead): it is kept unless an
   * earlier one can be granted now, and a kept one is answered as it was granted. A grant never
   * moves by itself; its holder asks again when the scope's state changes.
   */
  holding?: { seq: number; atMs: number };
  /**
   * How long this request has already waited for a start, ms (0 or absent: it asks for the first
   * time). Where starts beyond an estimated rate's horizon are not reserved (no queue to join), its
   * horizon grows with this, by up to a quarter (claim.ts SENIORITY_SHARE): the requests that
   * waited longest reach each start first, not the newest.
   */
  waitedMs?: number;
}

export type ClaimResult =
  /**
   * Start at atMs (now or later); the slot is reserved under seq. revisable: the start was laid
   * from a reading the answers still coming in may revise (a bucket rate that is only an estimate
   * while the count is shown; a fixed window not yet told from a limit on requests in flight), so
   * they may allow an earlier one (its holder claims it again when the scope's state changes).
   */
  | { kind: "go"; atMs: number; seq: number; probe: boolean; revisable: boolean; why: string }
  /** Nothing reserved: ask again at untilMs, or sooner when the state changes (a probe is out). */
  | { kind: "wait"; untilMs: number; why: string }
  /** The earliest start is past latestStartMs: nothing reserved; resume at notBeforeMs. */
  | { kind: "defer"; notBeforeMs: number; why: string; limitType: LimitType | "unknown" };

/** What the client tells the governor after an answer (or its absence). */
export interface Observation {
  seq: number;
  sentAtMs: number;
  nowMs: number;
  /** ok: not a throttle (a success or an ordinary error); throttled; lost: no answer (timeout, reset, abort). */
  kind: "ok" | "throttled" | "lost";
  limitType: LimitType;
  /** The server's wait from nowMs (a floor), or the client's own backoff when the server gave none. */
  waitMs: number | null;
  /** Whether waitMs came from the server (a floor for everyone) or from the client's backoff. */
  waitFromServer: boolean;
  /**
   * The unit the server's wait was rounded up to, ms: 1000 for Retry-After, whose delay-seconds and
   * HTTP-date are whole seconds (RFC 9110 §10.2.3), so the server's own instant may be up to that
   * much earlier. Absent for a wait given to the millisecond.
   */
  waitResolutionMs?: number;
  budget: ObservedBudget | null;
  reason: string;
  /**
   * False when the server did not count this request against the budget: an answer replayed for an
   * idempotency key it had seen (Stripe's Idempotent-Replayed), like a throttled one. Default true.
   */
  counted?: boolean;
}

/** A verdict's budget, in the governor's terms (epoch ms on the local clock). */
export interface ObservedBudget {
  remaining: number;
  limit: number | null;
  resetAtMs: number | null;
  windowMs: number | null;
  /**
   * The window length a policy names beside a reset that teaches the window's kind (the IETF
   * policy's w=, https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/): it
   * holds the length of a window learned as a sliding log, not its kind (windowMs tells both).
   */
  policyWindowMs?: number | null;
  restorePerSecond: number | null;
  /** restorePerSecond is a documented estimate, not sent by the API (Shopify REST): the count may prove it too slow. */
  restoreEstimated?: boolean;
  /** The slowest rate the provider documents for any bucket (see Budget.restoreFloorPerSecond). */
  restoreFloorPerSecond?: number | null;
  /** Units this request spent, when the API says (a GraphQL query's cost). */
  unitsPerRequest: number | null;
  /** The API says the budget counts requests in flight (IETF qu="concurrent-requests"). */
  concurrent?: boolean;
  /** The reset was counted down from when the answer was written, and read on its arrival (Budget.resetCountsDown). */
  resetCountsDown?: boolean;
}

export interface GovernorOptions {
  /** Throttles in a row that open the breaker. Default 3. */
  breakerThreshold: number;
  /** How long a probe or an in-flight claim may stay unanswered before others stop waiting for it. */
  leaseMs: number;
  /** Whether a rate learned from throttles alone is probed upward after clean bucketfuls (estimate.ts probeSilentRate). Default true; off, each lesson only slows it down. */
  probeSilentRate: boolean;
  /**
   * Whether every claim on the budget goes through this state (one process's memory, or Redis).
   * False for cross-flow state: executions that run at once each load their own copy and spend
   * unseen by the others, so our log is not what the server counts. Default true.
   */
  claimsAllSeen?: boolean;
}

export const DEFAULT_GOVERNOR_OPTIONS: Readonly<GovernorOptions> = Object.freeze({ breakerThreshold: 3, leaseMs: 30_000, probeSilentRate: true, claimsAllSeen: true });
