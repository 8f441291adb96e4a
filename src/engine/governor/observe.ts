/**
 * Learning from answers. Every answer tells the governor something: the server's count (the
 * anchor), the limit, the window, the cost of a request; a throttle sets the floor everyone
 * waits for and, when the server shows no budget, teaches the limit (the successes counted
 * before it) and the window (from the first of them to the announced reset).
 */
import { prune } from "./claim";
import { applyConcurrentBudget, concurrencyThrottle, growSilentCap, holdsConcurrency, learnSilentConcurrency, ruleOutInferredConcurrency, silentThrottle, startedBy, toldConcurrency, toldConcurrencyThrottle } from "./concurrency";
import { estimateThrottled, probeEstimatedRate, probeSilentRate, shortenToProvenRefill, silentProbeFailed, type SilentRate } from "./estimate";
import { seesEveryClaim, unitsClaimedBetween, unreflectedUnits } from "./model";
import { countShowsNoReset, probesForWindowLength, resetBehindCount } from "./count-window";
import { countRefillFrom, inferWindow, learnRefillBehindShownWindow, lengthenFromThrottle, refillTestedBehindShownWindow, trimWindow } from "./sliding";
import { bucketRateEstimated, bucketWindowBoundMs, clampTime, clip, copyState, fullRefillToleranceUnits, isPositive, LATE_CLAIM_MIN_MS, MAX_FIGURE, MAX_IN_FLIGHT, MAX_OTHERS_PER_MS, RESET_DRIFT_MARGIN_MS, ROUNDING_MS, wholeSecondsNear, windowAtRateMs, windowIsGuessed } from "./state";
import type { Anchor, GovernorOptions, GovernorState, Observation, ObservedBudget, SlotTuple } from "./types";

const figureOrNull = (value: number | null): number | null => (isPositive(value) ? value : null);

/**
 * The observation as a state can keep it (readState must read back whatever observe writes):
 * instants within the Date range, a seq this state granted (else 0: a reading that belongs to no
 * claim we know counts none of ours, the cautious reading), and only budget figures up to
 * MAX_FIGURE (a figure beyond is taken as not shown; a remaining that is not a number is no
 * reading at all).
 */
function checked(observation: Observation, state: GovernorState): Observation {
  const seq = Number.isSafeInteger(observation.seq) && observation.seq >= 0 && observation.seq <= state.seq ? observation.seq : 0;
  const nowMs = clampTime(observation.nowMs);
  const sentAtMs = Math.min(clampTime(observation.sentAtMs), nowMs);
  const budget = observation.budget;
  const shown: ObservedBudget | null =
    budget && Number.isFinite(budget.remaining)
      ? {
          remaining: Math.min(MAX_FIGURE, Math.max(0, budget.remaining)),
          limit: figureOrNull(budget.limit),
          resetAtMs: budget.resetAtMs,
          windowMs: figureOrNull(budget.windowMs),
          policyWindowMs: figureOrNull(budget.policyWindowMs ?? null),
          restorePerSecond: figureOrNull(budget.restorePerSecond),
          restoreEstimated: budget.restoreEstimated === true,
          restoreFloorPerSecond: figureOrNull(budget.restoreFloorPerSecond ?? null),
          unitsPerRequest: figureOrNull(budget.unitsPerRequest),
          concurrent: budget.concurrent === true,
          resetCountsDown: budget.resetCountsDown === true,
        }
      : null;
  // One literal, field by field: a spread followed by more fields takes V8's slower copy path, and
  // this runs for every answer.
  return {
    seq,
    sentAtMs,
    nowMs,
    kind: observation.kind,
    limitType: observation.limitType,
    waitMs: observation.waitMs,
    waitFromServer: observation.waitFromServer,
    waitResolutionMs: observation.waitResolutionMs,
    budget: shown,
    reason: observation.reason,
    counted: observation.counted,
  };
}

function applyShape(state: GovernorState, budget: ObservedBudget): void {
  if (budget.unitsPerRequest !== null) state.unitsPerRequest = budget.unitsPerRequest;
  if (budget.limit !== null) state.limit = budget.limit;
  const bucketWindowMs = budget.restorePerSecond !== null && state.limit !== null ? windowAtRateMs(state.limit, budget.restorePerSecond) : null;
  // A count that came back as a window's (count-window.ts) is no bucket at the estimated rate.
  if (budget.restoreEstimated && state.refill !== "bucket" && state.countResetAtMs > 0) return;
  if (bucketWindowMs !== null && bucketWindowMs <= MAX_FIGURE && budget.restoreEstimated) {
    // A documented rate for the bucket's size is an estimate: a window its own count already proved
    // shorter (learnBucketRefill) stays.
    const provenMs = bucketRateEstimated(state) ? state.windowMs : null;
    state.refill = "bucket";
    // A bucket shown smaller than the provider documents any (Shopify REST's used/limit under 40) is
    // no plan of its: the documented rate for its size (limit per 20 s) is no knowledge, and a
    // count of 3 behind a fixed window of 3 per s was paced a unit per 6.7 s (lab:random seed 1951
    // #3: 3.20 x ideal). It starts at the provider's slowest documented rate instead, from the
    // first reading on, until a 429 on a start it paced says it is too fast (estimate.ts
    // floorThrottled). Over the lab's 493 Shopify REST sweep scenarios: 1.36 -> 1.23 x
    // ideal (geometric mean), 122 sooner and 35 later by 2 % or more, 429s 5,478 -> 5,762.
    const floorPerSecond = budget.restoreFloorPerSecond ?? null;
    const floorMs = floorPerSecond !== null && floorPerSecond > 0 && state.limit !== null ? windowAtRateMs(state.limit, floorPerSecond) : bucketWindowMs;
    if (state.estimateFloorSeq === 0 && !state.estimateProbeFailed && state.probedFromWindowMs === 0 && floorMs < bucketWindowMs) {
      state.estimateFloorSeq = Math.max(1, state.seq);
      state.windowMs = provenMs === null ? floorMs : Math.min(provenMs, floorMs);
    } else {
      state.windowMs = provenMs === null ? bucketWindowMs : Math.min(provenMs, bucketWindowMs);
    }
    state.windowSource = "inferred";
  } else if (bucketWindowMs !== null && bucketWindowMs <= MAX_FIGURE) {
    state.refill = "bucket";
    state.windowMs = bucketWindowMs;
    state.windowSource = "shown";
  } else if (budget.windowMs !== null) {
    state.windowMs = Math.max(1, Math.round(budget.windowMs));
    state.windowSource = "shown";
  }
}

/**
 * A sliding log's length where the policy names it: a unit leaves a window of w at most w after
 * it was counted, sliding or fixed, so the length learned from whole-second resets is neither
 * longer (a reset rounded up: 2.6 s learned for a window of 2 s, each window's first units a
 * round trip late, 1.18 x ideal) nor shorter (units of a fixed window gone at its reset read as
 * a sliding window of less than w: a start before the server's reset, four throttled). The
 * window's kind is still learned from the resets (see run.ts shownWindowMs on why the length is
 * not told as the window).
 */
function holdPolicyWindow(state: GovernorState, policyWindowMs: number | null): void {
  if (policyWindowMs === null || state.refill !== "window" || state.windowSource === "shown" || state.windowMs === null) return;
  state.windowMs = policyWindowMs;
}

/** The shortest sliding window this reading's reset fits: the send plus the window, rounded up by under a second (and the Date's drift). */
function slidingAtLeastMs(observation: Observation, resetAtMs: number): number {
  return resetAtMs - observation.sentAtMs - ROUNDING_MS - RESET_DRIFT_MARGIN_MS;
}

/**
 * Two resets closer together than a window that held our units: a fixed window counts each unit
 * from its start to its reset, so a spent reading that still counted our oldest unit (inferWindow's
 * bound: its reset less that unit's send) makes a fixed window at least that long, less the
 * resets' rounding and the Date's drift. Resets closer than that are a sliding window's, stepping on
 * as its oldest units leave (GitHub's reset is the oldest unit's leaving: a sliding 10 per 10 s, 8
 * workers, whose count came back in full a second after the first window's reset, was read as a
 * fixed window of 1,050 ms, and 9 went a second later: 8 throttled of 38 calls). Not where the
 * scope already reads a fixed window: its own length is that bound.
 */
function resetsCloserThanCounted(state: GovernorState, boundMs: number | null, resetDistanceMs: number): boolean {
  return state.refill === "window" && boundMs !== null && resetDistanceMs < boundMs - ROUNDING_MS - RESET_DRIFT_MARGIN_MS;
}

/**
 * The request was counted after the previous reset: if the budget came back in full, the limit
 * is a fixed window, and the distance between two resets is its length.
 */
function learnFromReset(state: GovernorState, previousResetMs: number, observation: Observation, remaining: number, resetAtMs: number): void {
  if (state.refill === "bucket" || state.limit === null) return;
  const shownWindowMs = state.windowSource === "shown" ? state.windowMs : null;
  let sinceReset = 0;
  // With the window's length shown, a full budget tells a fixed window from a sliding one only by
  // units of ours sent before the reset that a sliding window of that length still counts at this
  // send: a fixed window shows them gone, a sliding one does not. Without them (or with no more
  // than the tolerance) both read the same, and taking a sliding window for a fixed one lets a
  // window's worth go while the log still holds older units. (Without the length there is no such
  // test: resets rounded to whole seconds cannot tell a fixed window from a shorter sliding one.)
  let slidingOnly = 0;
  for (const [atMs, seq, units] of state.slots) {
    if (seq > observation.seq) continue;
    if (atMs >= previousResetMs) sinceReset += units;
    else if (shownWindowMs !== null && atMs > observation.sentAtMs - shownWindowMs) slidingOnly += units;
  }
  const tolerance = fullRefillToleranceUnits(state.limit);
  // A count that would read as full whatever it showed (our own units since the reset, less the
  // tolerance, fill the limit) tells nothing of the units spent before it.
  if (state.limit - sinceReset - tolerance < 1) return;
  if (remaining >= state.limit - sinceReset - tolerance) {
    if (shownWindowMs !== null && slidingOnly <= tolerance) return;
    // Two resets further apart than the window the readings already bound are not one window's
    // length: a sliding window's reset (its oldest unit's leaving) rounded up to whole seconds comes
    // up to a second late, and requests sent at such a reset push the next one a whole second on.
    // Taking that distance for a fixed window's length would pace a 1 s window at one per 2 s.
    // But only where this reading's own reset says a sliding window is nearly as long as that bound
    // (its reset is the send plus the window, rounded up by less than a second): a bound read in a
    // fixed window we joined late is short (470 ms for 10 per 1 s, its first request sent 470 ms
    // before the reset), and paced as a sliding window of 470 ms the next window was throttled.
    // Nor where the bound is shorter than the resets' own resolution (a second): a sliding window
    // that short cannot be told from whole-second resets at all, and a fixed 1 s window joined
    // 170 ms before its reset, read as sliding 10 per 172 ms, was throttled 233 times of 433 calls.
    const boundMs = state.windowSource === "inferred" ? state.windowMs : null;
    if (boundMs !== null && boundMs >= ROUNDING_MS && resetAtMs - previousResetMs > boundMs + ROUNDING_MS / 2 && slidingAtLeastMs(observation, resetAtMs) > boundMs - ROUNDING_MS / 2) return;
    if (resetsCloserThanCounted(state, boundMs, resetAtMs - previousResetMs)) return;
    state.refill = "fixed";
    if (resetAtMs > previousResetMs + ROUNDING_MS / 2 && state.windowSource !== "shown") {
      state.windowMs = Math.min(MAX_FIGURE, wholeSecondsNear(resetAtMs - previousResetMs));
      state.windowSource = "inferred";
    }
  } else if (state.refill === "fixed") {
    state.refill = "window";
  }
}

/** How fast the estimate of others' spending follows a new reading. */
const OTHERS_SMOOTHING = 0.3;

/**
 * Others' spending between the previous reading and this one: the server's count fell by more than
 * our own claims in between (no reset in between, or the comparison says nothing).
 */
function learnOthers(state: GovernorState, previous: Anchor, observation: Observation, remaining: number, lateUnits: number): void {
  const elapsedMs = observation.sentAtMs - previous.atMs;
  if (elapsedMs <= 0 || (state.refill !== "bucket" && previous.resetAtMs > 0 && observation.sentAtMs >= previous.resetAtMs)) return;
  // Two readings less than a round trip apart differ by the order their requests reached the server
  // (and by the clocks' error), not by what others spent: one unit over 2 ms is no rate.
  if (elapsedMs < state.rttMs) return;
  // Ours in between: claims after the previous reading up to this one, plus those that were late
  // for the previous reading, less those late for this one.
  const ours = previous.lateUnits - lateUnits + unitsClaimedBetween(state, previous.seq, observation.seq);
  // A bucket refilled meanwhile at its known rate; a window's refill is not modelled here (units
  // coming back only hide others' spending: the estimate errs low).
  const limit = state.limit;
  const windowMs = state.windowMs;
  const refilled = state.refill === "bucket" && limit !== null && windowMs !== null ? Math.min(limit, previous.remaining + (limit / windowMs) * elapsedMs) : previous.remaining;
  // Claims granted after the observed one but started before its answer came may have reached the
  // server first (executions or processes sharing one state send in a different order than their
  // slots were granted), and so may the earlier ones still out (late for this reading): either may
  // be in its count, and must not be read as others' spending.
  let maybeOurs = lateUnits;
  for (const [atMs, seq, units] of state.slots) if (seq > observation.seq && atMs <= observation.nowMs) maybeOurs += units;
  let othersUnits = Math.max(0, refilled - ours - maybeOurs - remaining);
  // In a fixed window the server's count since the window began holds at most what others spent
  // plus what we started in it: whatever order our requests reached it in, no more is theirs.
  if (othersUnits > 0 && state.refill === "fixed" && limit !== null && windowMs !== null && previous.resetAtMs > 0) {
    const windowStartMs = previous.resetAtMs - windowMs - ROUNDING_MS;
    let oursInWindow = 0;
    for (const [atMs, , units] of state.slots) if (atMs >= windowStartMs && atMs <= observation.nowMs) oursInWindow += units;
    othersUnits = Math.min(othersUnits, Math.max(0, limit - remaining - oursInWindow));
  }
  const sample = othersUnits / elapsedMs;
  // What others spent unseen between two readings within one window is what they may take from
  // under the next claim too (executions that loaded the same stale state): keep it in reserve.
  if (limit !== null && windowMs !== null && elapsedMs <= windowMs) state.reserveUnits = Math.min(limit / 2, Math.max(state.reserveUnits, othersUnits));
  state.othersPerMs = Math.min(MAX_OTHERS_PER_MS, state.othersPerMs === 0 ? sample : state.othersPerMs * (1 - OTHERS_SMOOTHING) + sample * OTHERS_SMOOTHING);
}

/**
 * The observed request reached the server before the reading's (the anchor's) did: its answer
 * shows more remaining. Executions and processes sharing one state send in another order than
 * their slots were granted, and their answers are applied in yet another. Told only where the
 * count does not grow back by itself between the two: a fixed window before its reset, or (any
 * window, while no one else is seen spending the budget) two requests sent within one round trip
 * of each other; never a bucket, whose refill raises the count between any two answers.
 */
function countedBeforeAnchor(state: GovernorState, anchor: Anchor, observation: Observation): boolean {
  const budget = observation.budget;
  if (observation.kind !== "ok" || !budget || state.refill === "bucket" || budget.remaining <= anchor.remaining) return false;
  if (anchor.resetAtMs > 0 && observation.sentAtMs >= anchor.resetAtMs) return false;
  // A reset read in whole seconds can be up to a second late: a request sent in that last second
  // may have been counted in the server's next window, where the count is back up. Only a window
  // long against that second, and a reading naming the same reset, tells the two apart.
  if (anchor.resetAtMs > 0 && observation.sentAtMs >= anchor.resetAtMs - ROUNDING_MS) {
    const windowMs = state.windowMs;
    if (windowMs === null || windowMs <= 2 * ROUNDING_MS || budget.resetAtMs === null || Math.abs(budget.resetAtMs - anchor.resetAtMs) >= windowMs / 2) return false;
  }
  if (state.refill === "fixed") return true;
  // Sent before the reading's own request, it reached the server first (requests on the same path
  // keep their order), whatever came back meanwhile. Executions in other processes send in another
  // order than their claims were granted, and answer later than a round trip: such claims, counted
  // before the reading, stayed late units for the rest of the window (in the first window of 100 of
  // 50 executions over 5 processes sharing Redis, 3 units went unused, and the run took a fourth).
  if (observation.sentAtMs < anchor.atMs) return true;
  // Where others are known to spend this budget, their units leaving a sliding window raise the count too.
  return seesEveryClaim(state) && Math.abs(observation.sentAtMs - anchor.atMs) <= state.rttMs;
}

function learnBucketFromResets(state: GovernorState, previous: Anchor, sentAtMs: number, remaining: number, resetAtMs: number): void {
  const limit = state.limit;
  if (limit === null) return;
  const bounds = [bucketWindowBoundMs(limit, previous.remaining, previous.atMs, previous.resetAtMs), bucketWindowBoundMs(limit, remaining, sentAtMs, resetAtMs)];
  const windowMs = Math.min(...bounds.map((bound) => bound ?? Number.POSITIVE_INFINITY));
  if (!Number.isFinite(windowMs)) {
    state.refill = "window";
    return;
  }
  state.refill = "bucket";
  state.windowMs = windowMs;
  state.windowSource = "inferred";
}

/**
 * A bucket whose rate is an estimate, read where the successes before the reading showed no count
 * (Shopify REST's header on its 429s only): those successes were admitted from a bucket that held
 * at most its limit when the first of them was sent, so it refilled at least (admitted + remaining
 * - limit) units over their span. Shopify's documented 2 per s for a bucket of 40 that refilled 40
 * per s admitted 88 in 1.4 s, and paced at 2 per s the run took 17 x ideal. Errs slow: the span is
 * taken a round trip longer, and others' spending or a bucket not full at the start only hide refill.
 */
function learnBucketFromAdmitted(state: GovernorState, observation: Observation, remaining: number): void {
  const { limit, windowMs } = state;
  if (!bucketRateEstimated(state) || limit === null || windowMs === null || state.okInWindow <= 0 || state.windowStartMs === 0) return;
  shortenToProvenRefill(state, limit, windowMs, state.windowStartMs, observation.sentAtMs, state.okInWindow + remaining - limit - 1);
}

function tightenBucketWindow(state: GovernorState, sentAtMs: number, remaining: number, resetAtMs: number): void {
  const bound = state.limit === null || resetAtMs === 0 ? null : bucketWindowBoundMs(state.limit, remaining, sentAtMs, resetAtMs);
  if (bound !== null && state.windowMs !== null && bound < state.windowMs) state.windowMs = Math.max(1, bound);
}

/**
 * How much later than the previous reading's a reset must be read to have moved on: a second (the
 * whole-second rounding) less the Date's drift, and, for a reset counted down from when the server
 * wrote the answer (Budget.resetCountsDown: the IETF fields' delta seconds), the answer's time in
 * flight too: read on arrival, the same instant lands anywhere up to that much later. Read without
 * it, a fixed 15 per 3 s behind the IETF fields whose answers took 800 ms named its reset 800 ms
 * later at each round trip, was taken for a bucket, and 14 of 104 calls were throttled (0 with it;
 * probe fixed-15-per-3s-ietf-httpdate-6-workers-800ms-answers).
 */
function resetMoveMinMs(observation: Observation): number {
  const inFlightMs = observation.budget?.resetCountsDown === true ? Math.max(0, observation.nowMs - observation.sentAtMs) : 0;
  return ROUNDING_MS - RESET_DRIFT_MARGIN_MS + inFlightMs;
}

/**
 * A window's reset stays put while its count runs down: a fixed window's until it ends, a sliding
 * one's until its oldest unit leaves (and then the count comes back). A reading that continues the
 * count (it fell by exactly our claims since the last reading: nothing came back) but names a reset
 * a second or more later is no window: a bucket whose reset is the time until it is full again
 * (each request pushes it on). Read as windows, it waits for a full bucket at every reset.
 */
function resetMovedOn(state: GovernorState, previous: Anchor, observation: Observation, remaining: number, resetAtMs: number): boolean {
  // Against the reset the previous reading showed, not the earlier one it was merged with: a sliding
  // window's reading 960 ms after its last merged reset showed 4,040 against 3,080, and the next one's
  // 4,080, 40 ms on, read as a second moved on, took the log for a bucket (1.06 -> 1.51 x ideal).
  const previousShownMs = previous.shownResetAtMs ?? previous.resetAtMs;
  // A second on, give or take the Date's drift: two whole-second resets read against offset
  // estimates that narrowed in between are 980 ms apart, and a bucket of 100 refilling 20 per s
  // whose every reading moved its reset on that way was paced as fixed windows of 100 per 6 s.
  if (state.refill === "bucket" || previous.resetAtMs === 0 || resetAtMs < previousShownMs + resetMoveMinMs(observation) || observation.seq <= previous.seq) return false;
  // Sent close to the previous reset, it may have been counted in the next window (resets read
  // against the server's Date drift by some tens of ms): a fresh count can equal a continued one.
  if (observation.sentAtMs >= previous.resetAtMs - RESET_DRIFT_MARGIN_MS) return false;
  // Where others spend the budget unseen, their requests and units leaving a sliding window can
  // balance to the same count by chance: only a count that is ours alone tells.
  if (!seesEveryClaim(state)) return false;
  const ours = unitsClaimedBetween(state, previous.seq, observation.seq);
  if (ours <= 0 || remaining > previous.remaining) return false;
  // Sent over a second (and the Date's drift) before the reset the last reading showed, no window
  // can have moved its reset on: a fixed window's stays put, and a sliding one's oldest unit leaves
  // no sooner than that reset less its rounding. Only a bucket's moves on so early, and its count
  // may have come back a unit meanwhile (it refills as it goes): a bucket of 40 per 2 s behind
  // X-RateLimit headers, drained by 2 workers at 100 per s, showed a unit back at each second's
  // step of its reset, was read as a sliding window and waited 2.5 s for the reset it named
  // (lab:random seed 1571 #22, 1.56 x ideal).
  if (observation.sentAtMs < previousShownMs - ROUNDING_MS - RESET_DRIFT_MARGIN_MS) return true;
  return remaining === previous.remaining - ours;
}

/**
 * A fixed window's reset stays put until it is reached; a sliding window's moves on as its oldest
 * units leave. A window read as fixed (its count came back in full at a reset, as a sliding
 * window's does when its units were all spent at once) whose reading, sent before the reset it last
 * showed, names one a second or more later (beyond whole-second rounding) is sliding. Read as fixed,
 * it let the whole limit go at each reset while the log still held the units spent a moment
 * before: a sliding 25 per 2 s behind GitHub's X-RateLimit headers, 50 workers, was throttled 73
 * times in 273 calls.
 */
function fixedResetMoved(state: GovernorState, previous: Anchor, observation: Observation, resetAtMs: number): boolean {
  // A second on, give or take the Date's drift and a counted-down reset's time in flight (resetMoveMinMs).
  if (state.refill !== "fixed" || previous.resetAtMs === 0 || resetAtMs < previous.resetAtMs + resetMoveMinMs(observation)) return false;
  // Sent close to the reset, the request may have been counted in the next window (resets read
  // against the server's Date drift by some tens of ms).
  return clampTime(observation.sentAtMs) < previous.resetAtMs - RESET_DRIFT_MARGIN_MS;
}

/**
 * A bucket whose rate is an estimate (documented for its size, or bounded from resets rounded to
 * whole seconds) is shortened where its own count proves it refills faster. Across a run of readings
 * the units the count came back by beyond our claims add up, and the floors of the shown remainders
 * cancel out but for the two ends: one unit. Each choice errs slow: claims still out at a reading
 * are taken as counted in it, others spending the budget only lower the sum, a full bucket (which
 * loses its refill) starts the count afresh, and the span is taken one round trip longer than the
 * sends were apart (the server counted each on arrival). Shopify REST's documented 2 per s for a
 * bucket of 40 (limit / 20 s) paced a bucket of 3 that refilled 60 per s at one request per 6.7 s.
 */
function learnBucketRefill(state: GovernorState, previous: Anchor, observation: Observation, remaining: number, lateUnits: number): void {
  const { limit, windowMs } = state;
  // A window shown with no reset counts its own refill (sliding.ts learnRefillBehindShownWindow).
  if (refillTestedBehindShownWindow(state)) return;
  if (!bucketRateEstimated(state) || limit === null || windowMs === null || observation.seq <= previous.seq) return countRefillFrom(state, 0);
  if (remaining >= limit) return countRefillFrom(state, observation.sentAtMs);
  if (state.refillSinceMs === 0 || state.refillSinceMs > previous.atMs) countRefillFrom(state, previous.atMs);
  // A throttled reading's own request was rejected: it is not in the count. Taken as counted, each
  // 429 of a burst read as a unit come back, and a bucket of 20 per s behind Shopify's header on its
  // 429s was paced at 90 per s: 115 throttled of 207 calls, and 8 jobs out of attempts.
  const rejectedUnits = observation.kind === "throttled" ? (state.slots.find(([, seq]) => seq === observation.seq)?.[2] ?? 0) : 0;
  const ours = unitsClaimedBetween(state, previous.seq, observation.seq) - lateUnits - rejectedUnits;
  state.refillSeenUnits += remaining - previous.remaining + ours;
  // A sum beyond what a state keeps (figures up to MAX_FIGURE each) proves nothing: count afresh.
  if (Math.abs(state.refillSeenUnits) > MAX_FIGURE) return countRefillFrom(state, 0);
  shortenToProvenRefill(state, limit, windowMs, state.refillSinceMs, observation.sentAtMs, state.refillSeenUnits - 1);
}

/**
 * Units of our claims still out that were granted before the observed one: the reading may not
 * count them yet (executions and processes sharing one state send in another order than their
 * slots were granted), so they are held back as spent after it. Not one started well before the
 * reading's request (two round trips, LATE_CLAIM_MIN_MS at least): it reached the
 * server first, and only its answer is late (a slow answer, or a connection the client will time
 * out). Held back as well, its unit counted twice until it was answered or lost: behind a fixed 10
 * per s, 8 workers and 5 % of answers 3 s late against a 1 s timeout, each such claim left a unit
 * of its window unused (1.16 -> 1.10 x ideal).
 */
function lateClaimUnits(state: GovernorState, observedSeq: number, sentAtMs: number): number {
  const countedBeforeMs = sentAtMs - Math.max(2 * state.rttMs, LATE_CLAIM_MIN_MS);
  let units = 0;
  for (const [seq] of state.inFlight) {
    if (seq >= observedSeq) continue;
    const slot = state.slots.find(([, slotSeq]) => slotSeq === seq);
    if (slot && slot[0] < countedBeforeMs) continue;
    units += slot?.[2] ?? 0;
  }
  return units;
}

function applyAnchor(state: GovernorState, observation: Observation, budget: ObservedBudget, leaseMs: number): void {
  const previous = state.anchor;
  const sentAtMs = clampTime(observation.sentAtMs);
  // A count with no reset reads its reset itself (count-window.ts): it may name the previous reading's.
  const countResetAtMs = countShowsNoReset(budget) ? resetBehindCount(state, previous, observation, budget.remaining) : null;
  const afterPreviousReset = previous !== null && previous.resetAtMs > 0 && sentAtMs >= previous.resetAtMs;
  if (previous && observation.seq < previous.seq && !afterPreviousReset) return; // an older answer, arriving late
  let resetAtMs = countResetAtMs ?? (budget.resetAtMs !== null && budget.resetAtMs > sentAtMs ? clampTime(budget.resetAtMs) : 0);
  if (previous && afterPreviousReset) learnFromReset(state, previous.resetAtMs, observation, budget.remaining, resetAtMs);
  else if (previous && resetMovedOn(state, previous, observation, budget.remaining, resetAtMs)) learnBucketFromResets(state, previous, sentAtMs, budget.remaining, resetAtMs);
  else if (bucketRateEstimated(state)) tightenBucketWindow(state, sentAtMs, budget.remaining, resetAtMs);
  else if (previous && fixedResetMoved(state, previous, observation, resetAtMs)) state.refill = "window";
  // The window is bounded by this reading's own reset: a sliding window's reset moves on as its
  // oldest units leave, and the merged one below may be an older unit's.
  const shownResetAtMs = resetAtMs;
  // The same reset read again through whole-second rounding: the earliest reading is the tightest.
  // Not where the count rose since (outside a bucket): units left the window, so its reset moved on,
  // and a reading a second later read by a client that knows the server's clock 60 ms worse than the
  // one before (every execution starts as a fresh client) lands 940 ms on. Merged into the earlier
  // reset, a sliding 5 per 1 s window was later read as a fixed one of 2 s (1.05 -> 1.76 x ideal,
  // 6 throttled, when 25 workers' same-instant starts reached the server in another order).
  const countRose = state.refill !== "bucket" && previous !== null && budget.remaining > previous.remaining;
  if (previous && !afterPreviousReset && !countRose && previous.resetAtMs > 0 && resetAtMs > 0 && Math.abs(resetAtMs - previous.resetAtMs) < ROUNDING_MS) {
    resetAtMs = Math.min(resetAtMs, previous.resetAtMs);
  }
  const lateUnits = lateClaimUnits(state, observation.seq, sentAtMs);
  // A later claim counted before the reading: the reading's count is the more recent one (and
  // holds this claim), so it stays, and the anchor moves on to this claim's seq.
  const remaining = previous && !afterPreviousReset && countedBeforeAnchor(state, previous, observation) ? previous.remaining : budget.remaining;
  if (previous) learnBucketRefill(state, previous, observation, remaining, lateUnits);
  if (previous && observation.seq > previous.seq) learnOthers(state, previous, observation, remaining, lateUnits);
  if (previous) learnRefillBehindShownWindow(state, previous, observation, remaining, lateUnits);
  inferWindow(state, observation, remaining, shownResetAtMs);
  if (previous && !afterPreviousReset) trimWindow(state, observation, remaining, shownResetAtMs);
  const ownOutAtSend = Math.max(startedBy(state, sentAtMs, leaseMs) + 1, startedWith(state, sentAtMs));
  // The first reading: the claims granted before it went out knowing nothing (a slow start's, where
  // only a throttle shows the budget), and their throttles are that one lesson, not others spending
  // unseen: 16 in flight at a bucket's first 429 kept 15 of its 60 back for the rest of the run.
  if (previous === null) state.learnedAtSeq = Math.max(state.learnedAtSeq, state.seq);
  if (observation.kind === "ok") state.budgetOnSuccess = true;
  state.anchor = { remaining: Math.max(0, remaining), seq: observation.seq, atMs: sentAtMs, resetAtMs, lateUnits, answeredAtMs: observation.nowMs, ownOutAtSend };
  if (shownResetAtMs !== resetAtMs) state.anchor.shownResetAtMs = shownResetAtMs;
}

/**
 * Claims of ours started within half a round trip before sentAtMs (itself included): none of them
 * can have answered before that send. Claims out at a send are otherwise those still unanswered
 * when its answer comes (startedBy), and answers that come together (a burst's, on one instant)
 * are applied one by one: the last of a burst of two found the other answered, and its count of
 * two read as more than the one of ours it had out.
 */
function startedWith(state: GovernorState, sentAtMs: number): number {
  const sinceMs = sentAtMs - Math.max(1, state.rttMs / 2);
  let claims = 0;
  for (let i = state.slots.length - 1; i >= 0; i--) {
    const atMs = state.slots[i]![0];
    if (atMs <= sinceMs) break;
    if (atMs <= sentAtMs) claims += 1;
  }
  return claims;
}

/** A repeated lesson (the learned limit was still too high) keeps this share of it. */
const DECREASE = 0.8;
/** With no wait announced, a window of one second is assumed (the most common unit of a request rate). */
const DEFAULT_LEARNED_WINDOW_MS = 1000;

/**
 * The window a first throttle's wait bounds: from the first unit the server counted to its reset.
 * A wait rounded up to whole seconds (Retry-After) puts that reset up to a second late, so a fixed
 * 10 per 1 s window throttled 250 ms in read as 1,250 ms, and paced at that it lost a fifth of its
 * rate in every window. Rate limits are stated in whole seconds (per second, per minute), so the
 * window is taken as whole seconds, plus a margin for the requests' transit (1 %, at most 100 ms),
 * within what the throttle proves: the reset came after the throttled send (it was still counting
 * every unit admitted) and after that send plus the wait less the second it was rounded up by, and
 * no later than the answer plus the wait. Where both ends allow more than one whole number of
 * seconds (an answer that took long, a send late in the window), the shortest: a fixed 15 per 2 s
 * window behind Slack, throttled 800 ms in and answered 200 ms later with Retry-After: 2, reads
 * 3,000 ms (its reset after 1,800), and taken as 3 s it was paced at two thirds of its rate for good
 * (1.52 x ideal; 1.15 x as 2 s), where a window too short is corrected by the throttle it meets.
 */
function windowFromWaitMs(observation: Observation, resetAtMs: number, episodeStartMs: number): number {
  const boundMs = resetAtMs - episodeStartMs;
  const resolutionMs = observation.waitResolutionMs;
  if (resolutionMs === undefined || !isPositive(resolutionMs)) return boundMs;
  const sentMs = observation.sentAtMs - episodeStartMs;
  const resetAfterMs = Math.max(sentMs, sentMs + (observation.waitMs ?? 0) - resolutionMs);
  const wholeMs = Math.max(resolutionMs, (Math.floor(resetAfterMs / resolutionMs) + 1) * resolutionMs);
  const withMarginMs = withReadMarginMs(wholeMs);
  return withMarginMs < boundMs ? withMarginMs : boundMs;
}

/** A window read to a whole length, kept a hundredth longer (at most 100 ms): a start on its edge races the unit leaving. */
function withReadMarginMs(wholeMs: number): number {
  return wholeMs + Math.min(wholeMs / 100, 100);
}

/**
 * A throttle with no budget shown. The first one teaches the limit (the units admitted since the
 * episode began, i.e. every slot granted before the throttled one) and the window (from the
 * first of them to the reset the server announced). A later one means what was learned is still
 * wrong (relearn). Claims already out when the lesson was learned are the same saturation, not
 * new lessons.
 */
function learnFromThrottle(state: GovernorState, observation: Observation): boolean {
  if (observation.seq <= state.learnedAtSeq) return false;
  const nowMs = clampTime(observation.nowMs);
  const resetAtMs = observation.waitFromServer && observation.waitMs !== null ? clampTime(nowMs + observation.waitMs) : null;
  const episodeStartMs = state.windowStartMs || clampTime(observation.sentAtMs);
  let outlasted = false;
  if (state.limit === null) {
    // The successes answered so far; those still on their way when the lesson is learned add
    // themselves as they arrive (applyOk).
    const admitted = Math.min(MAX_FIGURE, state.okInWindow);
    // Throttled before any success: the budget was spent before we came, which says nothing of its size.
    if (admitted === 0) return false;
    state.limit = admitted;
    // The window is spent: the log holds those units. The slots a slow start kept stay at their
    // own sends (prune); any others are timed as late as they can have been (the throttled
    // request's send), so they leave it no earlier than they really do. Only answered slots are
    // among them: a claim still out is not in `admitted` (if it succeeds, applyOk counts it; if
    // it is throttled, its slot leaves the log).
    const out = new Set(state.inFlight.map(([seq]) => seq));
    const placed = state.slots.reduce((sum, [atMs, seq, units]) => (atMs >= episodeStartMs && !out.has(seq) ? sum + units : sum), 0);
    if (admitted > placed) {
      state.slots.push([clampTime(observation.sentAtMs), observation.seq, admitted - placed]);
      state.slots.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    }
    if (state.windowSource !== "shown") {
      const observedMs = resetAtMs !== null ? windowFromWaitMs(observation, resetAtMs, episodeStartMs) : Math.max(DEFAULT_LEARNED_WINDOW_MS, observation.sentAtMs - episodeStartMs);
      state.windowMs = Math.min(MAX_FIGURE, Math.max(state.windowMs ?? 0, observedMs, 1));
      state.windowSource = resetAtMs !== null ? "inferred" : "assumed";
    }
  } else if (windowOutlastsLesson(state, observation, resetAtMs, episodeStartMs)) {
    outlasted = true;
  } else {
    relearn(state, state.limit, Math.min(MAX_FIGURE, state.okInWindow), resetAtMs, episodeStartMs, observation);
  }
  state.learnedAtSeq = state.seq;
  state.lessonSentAtMs = clampTime(observation.sentAtMs);
  state.lessonSeq = observation.seq;
  state.okInWindow = 0;
  // An assumed window keeps the start of the units the lesson counted: the throttles and the first
  // success after it measure the window from there.
  state.windowStartMs = resetAtMs ?? (windowIsGuessed(state) ? episodeStartMs : 0);
  restartSlowStart(state, resetAtMs);
  return outlasted;
}

/**
 * After a lesson taken from a throttle that told no wait, the scope starts again from one request
 * in flight and grows by one per success up to the limit learned, as a TCP sender restarts its slow
 * start after a retransmission timeout (RFC 5681 §3.1, https://www.rfc-editor.org/rfc/rfc5681#section-3.1):
 * the lesson's limit and window are a guess, and the window's reset as guessed sent the whole limit
 * at once into a budget that had not come back. A token bucket of 25 refilling 5 per s behind
 * Stripe's silence, 35 workers: 27 went together a second after the first lesson and 22 were
 * throttled (63 of 188 calls; 41 of 166 with the restart); Stripe's 100 per s with 50 workers, 243
 * -> 85 throttled of 3,000 jobs, at 1.00 -> 1.04 x ideal. Ours only over 404 virtual scenarios: 5
 * sooner, 7 later (at most 1.023 -> 1.041 x where the goal was met), throttles 4,767 -> 4,560. Not
 * where the throttle told its wait (the budget is back then, and a fixed window's reset is for the
 * whole limit at once: 9 sooner, 18 later when it did), nor under a concurrency limit (its own cap).
 */
function restartSlowStart(state: GovernorState, resetAtMs: number | null): void {
  if (resetAtMs === null && !holdsConcurrency(state) && state.limit !== null && state.limit >= 2) {
    state.inFlightCap = 1;
    state.inFlightCapGrows = true;
  } else if (state.inFlightCapGrows) {
    state.inFlightCap = null;
    state.inFlightCapGrows = false;
  }
}

/**
 * Short windows are documented at a second to a minute (Slack's tiers per minute,
 * https://api.slack.com/apis/rate-limits; HubSpot's ten-secondly limit,
 * https://developers.hubspot.com/docs/api/usage-details; Stripe's per second,
 * https://docs.stripe.com/rate-limits); a window outlasting a minute is an hourly limit or a
 * quota, whose length no tens of probes are worth finding: each throttled probe is a call spent,
 * and jobs wait inline behind it. Past a minute the next probe waits the whole time measured (a
 * doubling, as a backoff), so the wait passes the inline limit and the jobs are deferred with their
 * not_before. A daily quota of 40 behind Stripe's silence, 100 jobs: 33 throttled probes over 487 s
 * at a quarter of the time measured, 25 over 131 s so; 16 over 263 s since the probes below a minute
 * go at the documented lengths (outlastProbeAtMs), the last of them at the minute itself.
 */
const LONG_OUTLAST_MS = 60_000;

/**
 * A window not shown, a throttle with no wait told, and nothing admitted since the lesson: the units
 * it counted are still in the server's count, so the window is longer than from the first of them
 * to this send. That is the lesson to take, not a lower limit: a sliding 20 per 10 s log assumed
 * to be 20 per 1 s was cut to 1 per 1 s by its probes' throttles (2.02 x ideal). The next probe
 * goes at the next documented length (outlastProbeAtMs); the first success bounds the window
 * (windowFromFirstSuccess). Returns whether the throttle was read so.
 */
function windowOutlastsLesson(state: GovernorState, observation: Observation, resetAtMs: number | null, episodeStartMs: number): boolean {
  const { limit, windowMs } = state;
  // (Not after some units were admitted: a whole limit admitted and then a throttle could say the
  // same of a fixed window joined late, but a concurrency limit that shows nothing answers so too,
  // and lengthening its "window" halved its rate again: 5.3 -> 11.6 x ideal for 10 in flight.)
  if (resetAtMs !== null || state.windowSource === "shown" || windowMs === null || limit === null || state.okInWindow > 0) return false;
  const outlastedMs = observation.sentAtMs - episodeStartMs;
  state.windowMs = Math.min(MAX_FIGURE, Math.max(windowMs, outlastedMs));
  state.windowSource = "outlasted";
  // Proven: the window's first unit was still counted at this send (model.ts windowTrialAtMs).
  state.windowFloorMs = Math.min(MAX_FIGURE, Math.max(state.windowFloorMs, outlastedMs));
  state.notBeforeMs = clampTime(Math.max(state.notBeforeMs, outlastProbeAtMs(episodeStartMs, outlastedMs, observation.nowMs)));
  return true;
}

/**
 * When the scope's next probe goes after a throttle that found the window longer: up to a minute,
 * at the first documented length (DOCUMENTED_WINDOWS_MS, a hundredth longer) from the episode's
 * first unit that has not passed, as the window's units leave no sooner than one of those lengths
 * after they were counted wherever the API gives its window in one. A sliding 20 per 10 s behind
 * nothing is probed at 1, 2, 3 and 5 s and admitted at 10.1 s; probed a quarter of the time
 * measured apart, as before, it took 11 throttled probes to find the same end. A window of no
 * documented length is found at the next one's, up to twice too long, and the trials of a shorter
 * window close in on it from there (model.ts windowTrialAtMs). Past a minute, the whole time
 * measured (LONG_OUTLAST_MS). Over the 2,134 sweep scenarios behind silence (with the trials'
 * twentieth): goals 348 -> 351, throttles 32,925 -> 32,541, 1.203 -> 1.198 x ideal (geometric
 * mean); over 240 of them with their windows moved off the documented lengths (0.7 to 1.7 times
 * as long), 1.173 -> 1.178 x, throttles 4,569 -> 4,390.
 */
function outlastProbeAtMs(episodeStartMs: number, outlastedMs: number, nowMs: number): number {
  if (outlastedMs > LONG_OUTLAST_MS) return nowMs + outlastedMs;
  for (const documentedMs of DOCUMENTED_WINDOWS_MS) {
    const atMs = episodeStartMs + withReadMarginMs(documentedMs);
    if (documentedMs > outlastedMs && atMs > nowMs) return atMs;
  }
  return nowMs + outlastedMs;
}

/**
 * The answer to a trial of a shorter window (model.ts windowTrialAtMs), measured from the first
 * unit our log holds of the window before it. A throttle proves the window longer than that
 * distance: the floor rises, nothing else is learned (returns true: the answer is taken). A
 * success proves that window's units gone by the trial's send (a sliding log's first unit left, so
 * each later one leaves as long after its own start; a fixed window reset): they are moved earlier
 * in the log by what the trial saved, so the others go now and the window starts at the trial.
 * The window learned stays the upper bound: a fixed window's reset may have come sooner after that
 * first unit than its length (the unit came late in its window). Returns false for a success, and
 * for an answer that is no trial's (the window no longer learned so, or the trial went at or after
 * the window's end).
 */
function windowTrialAnswered(state: GovernorState, observation: Observation): boolean {
  const windowMs = state.windowMs;
  if (windowMs === null || state.anchor !== null || state.windowSource !== "inferred" || state.refill !== "window") return false;
  if (observation.kind !== "ok" && observation.kind !== "throttled") return false;
  const sentAtMs = clampTime(observation.sentAtMs);
  let firstMs: number | null = null;
  for (const [atMs, seq] of state.slots) {
    if (seq !== observation.seq && atMs < sentAtMs && atMs > sentAtMs - windowMs) {
      firstMs = atMs;
      break;
    }
  }
  if (firstMs === null) return false;
  const distanceMs = sentAtMs - firstMs;
  if (observation.kind === "throttled") {
    state.windowFloorMs = Math.max(state.windowFloorMs, distanceMs);
    // A rejected request was not counted: it leaves our log.
    state.slots = state.slots.filter(([, seq]) => seq !== observation.seq);
    return true;
  }
  const savedMs = windowMs - distanceMs;
  for (const slot of state.slots) if (slot[0] < sentAtMs && slot[1] !== observation.seq) slot[0] = Math.max(0, slot[0] - savedMs);
  return false;
}

/**
 * The first success after throttles that found the window longer: by its send the units the episode
 * counted have left (a sliding log frees its first unit one window after it), so the window is at
 * most from the first of them to this send, and the throttles before said it is longer than to
 * theirs. The window is taken as that, no longer assumed, and a new episode begins with this success.
 */
function windowFromFirstSuccess(state: GovernorState, observation: Observation): void {
  if (state.windowSource !== "outlasted" || state.okInWindow > 0 || state.windowMs === null || state.windowStartMs === 0 || observation.seq <= state.learnedAtSeq) return;
  state.windowMs = Math.min(MAX_FIGURE, Math.max(state.windowMs, clampTime(observation.sentAtMs) - state.windowStartMs));
  state.windowSource = "inferred";
  state.windowStartMs = 0;
  snapToDocumentedWindow(state);
}

/**
 * The lengths APIs give their windows in: a fraction of a second, seconds, a minute, minutes, an
 * hour (Stripe's per second, https://docs.stripe.com/rate-limits; Pipedrive's 2 s; HubSpot's 10 s,
 * https://developers.hubspot.com/docs/api/usage-details; Harvest's 15 s; Slack's and Airtable's
 * minute and second, https://api.slack.com/apis/rate-limits,
 * https://support.airtable.com/docs/managing-api-call-limits-in-airtable).
 */
const DOCUMENTED_WINDOWS_MS = [100, 200, 250, 500, 1000, 2000, 3000, 5000, 10_000, 15_000, 20_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000];

/** How far apart the bounds may be for a documented length between them to be taken (snapToDocumentedWindow). */
const SNAP_BOUNDS_MAX_RATIO = 1.5;

/**
 * A window bounded by throttles and the first success (windowFloorMs, windowMs) is taken at the
 * longest documented length between the bounds, kept a hundredth longer (withReadMarginMs), where
 * that is no longer than the upper bound: the probes go at the documented lengths
 * (outlastProbeAtMs), but a probe goes late where no request was waiting for it, or each was
 * sleeping its own longer backoff, and the first success then lands past the window (spaced a
 * quarter of the time measured, as they were before, up to a quarter past). Airtable's 5 per
 * second behind a bare 429 (6 workers, 150 ms answers) was read as 5 per 1,269 ms and paced so for
 * good, 1.28 x ideal; the trials of a shorter window (model.ts windowTrialAtMs) gain less than two
 * round trips there and never went. The floor moves to a quarter of the way below that length:
 * raised to the length itself, no trial went, and a fixed window whose reset came sooner after the
 * window's first unit than its length kept that delay for good (in the engine's simulator, a fixed
 * 60 per 60 s with six windows' worth at once: its third window 3.6 s late); left where the
 * throttles proved it, trials failed against a sliding window of that very length, and each doubled
 * its request's backoff (sliding 15 per 10 s behind Stripe's silence: a 14 s backoff, 1.10 -> 1.78 x
 * ideal). A window of no documented length keeps the upper bound, and so do bounds far apart (the
 * upper more than SNAP_BOUNDS_MAX_RATIO times the floor, more than the probes' spacing leaves):
 * where no probe went for a while, the first success says little of the window.
 */
function snapToDocumentedWindow(state: GovernorState): void {
  const upperMs = state.windowMs;
  if (upperMs === null || upperMs > SNAP_BOUNDS_MAX_RATIO * state.windowFloorMs) return;
  let lengthMs = 0;
  for (const documentedMs of DOCUMENTED_WINDOWS_MS) if (documentedMs > state.windowFloorMs && withReadMarginMs(documentedMs) <= upperMs) lengthMs = documentedMs;
  if (lengthMs === 0) return;
  state.windowMs = withReadMarginMs(lengthMs);
  state.windowFloorMs = Math.round(lengthMs - (lengthMs - state.windowFloorMs) / 4);
}

/**
 * A throttle after the first lesson, in the episode that began at the last lesson's reset. When
 * some units were admitted and the server said when the next one comes, this episode measured the
 * rate itself (what it admitted from the last reset to this one). Less than the first lesson's
 * rate means the budget refills continuously at a lower rate than its burst (a token bucket):
 * learn that rate and pace at it, one unit at a time. Otherwise keep 80 % of the limit.
 */
function relearn(state: GovernorState, limit: number, admitted: number, resetAtMs: number | null, episodeStartMs: number, observation: Observation): void {
  const windowMs = state.windowMs;
  if (resetAtMs === null && admittedSinceLesson(state, limit, admitted, observation)) return;
  if (admitted > 0 && resetAtMs !== null && state.windowSource !== "shown" && resetAtMs > episodeStartMs) {
    const measuredLimit = Math.min(limit, admitted);
    const measuredWindowMs = resetAtMs - episodeStartMs;
    // Never a faster rate than was already learned: a lesson only slows down. The rate is what the
    // episode admitted over its length, also where that is more than the limit (a burst no larger
    // than the limit, over a window that keeps the rate): capping the units at the limit and
    // keeping the length took 5 admitted in 3.8 s for 2, and paced a bucket of 1.5 per s at 0.52.
    if (windowMs === null || admitted / measuredWindowMs <= limit / windowMs) {
      state.limit = Math.max(state.unitsPerRequest, measuredLimit);
      state.windowMs = Math.min(MAX_FIGURE, Math.max(1, Math.round((measuredWindowMs * measuredLimit) / admitted)));
      state.refill = "bucket";
      return;
    }
  }
  const cutLimit = Math.max(state.unitsPerRequest, Math.floor(limit * DECREASE));
  // A limit already down to one request's units cannot be cut: the window is lengthened instead, so
  // the rate is cut by the same share. Kept, a token bucket of 15 per 60 s behind Stripe's silence
  // learned as one per 993 ms was throttled at three of every four starts for the rest of the run.
  if (cutLimit >= limit && windowMs !== null) state.windowMs = Math.min(MAX_FIGURE, Math.max(windowMs + 1, Math.round(windowMs / DECREASE)));
  state.limit = cutLimit;
}

/**
 * A throttle with no wait told, after a lesson: the budget was spent when the lesson's throttle was
 * sent, so the units admitted from then to this throttle's send are what the server regained in
 * that time, a rate (never above the true one: a bucket that filled up while nothing was sent
 * regained less than its rate). Well below the rate learned (less than the usual cut would leave)
 * it is a budget that refills slower than its burst, a token bucket: paced at that rate, one unit
 * at a time. Cut by a fifth per throttle instead, a bucket of 25 and 5 per s behind Stripe's
 * silence, learned as 27 per s, threw 5 per s of 27, then of 21, 16, 12, 9...: 83 throttled of 208
 * calls. Returns whether the lesson was taken so.
 */
function admittedSinceLesson(state: GovernorState, limit: number, admitted: number, observation: Observation): boolean {
  const { windowMs } = state;
  const measuredMs = clampTime(observation.sentAtMs) - state.lessonSentAtMs;
  if (admitted <= 0 || state.lessonSentAtMs === 0 || windowMs === null || state.windowSource === "shown" || measuredMs <= 0) return false;
  if (admitted / measuredMs >= (DECREASE * limit) / windowMs) return bucketRateMeasured(state, limit, admitted, measuredMs);
  state.limit = Math.max(state.unitsPerRequest, Math.min(limit, admitted));
  state.windowMs = Math.min(MAX_FIGURE, Math.max(1, Math.round((measuredMs * state.limit) / admitted)));
  state.refill = "bucket";
  return true;
}

/** A bucket's refill measured between two throttles over at least this many of its windows is taken as its rate. */
const MIN_MEASURED_WINDOWS = 2;

/**
 * A throttle on a bucket paced at a learned rate, less than a cut below it: the bucket was empty at
 * both throttles' sends, so what it admitted between them is its refill over that time, to within
 * the one unit the count's discreteness adds. That rate, one unit less, is proven, and closer than
 * the usual cut: a bucket of 40 and 8 per s behind Stripe's silence, learned as 8.3 per s and cut by
 * a fifth to 6.5 on its next throttle 10 s later (82 admitted since: 7.9 per s), took 1.17 x ideal
 * for 320 jobs where the peers given the limit took 1.01 x. Only for a rate already read as a
 * bucket's (a fixed window's count between two throttles a window or two apart can show a burst
 * as a rate) and over at least MIN_MEASURED_WINDOWS of its windows. Returns whether it was taken.
 */
function bucketRateMeasured(state: GovernorState, limit: number, admitted: number, measuredMs: number): boolean {
  const windowMs = state.windowMs;
  if (state.refill !== "bucket" || windowMs === null || measuredMs < MIN_MEASURED_WINDOWS * windowMs) return false;
  const provenUnits = admitted - state.unitsPerRequest;
  if (provenUnits <= 0 || provenUnits / measuredMs >= limit / windowMs) return false;
  state.windowMs = Math.min(MAX_FIGURE, Math.max(1, Math.round((measuredMs * limit) / provenUnits)));
  return true;
}

/**
 * Our own starts already fill the limit where the throttled request was counted: a throttle is then
 * our own grant too many (executions or processes sharing one state, whose answers came in another
 * order than the server counted them), not someone spending unseen, and teaches no reserve. In a
 * fixed window, the starts since it began; in a sliding log (or a window not yet seen to be fixed),
 * the starts of the last windowMs before the throttled send, all of which the log still counts.
 * Five processes sharing Redis learned a reserve of one unit from their own 101st grant in the
 * first window of 100 and kept 99 per window after it: 300 jobs took a fourth window (1.52 x ideal).
 */
function ownStartsFillWindow(state: GovernorState, anchor: Anchor, observation: Observation): boolean {
  const { limit } = state;
  // A window whose length is not known yet is at least as long as the time to the reset it shows (a
  // sliding log's reset is its oldest counted unit leaving, at most a window on): our starts within
  // that span are all still counted. Five processes over Redis behind IETF fields with no window
  // shown learned a reserve of 2 from their own two grants too many, and the next window held 98.
  const windowMs = state.windowMs ?? (state.refill === "window" && anchor.resetAtMs > observation.nowMs ? anchor.resetAtMs - observation.nowMs : null);
  if (limit === null || windowMs === null) return false;
  let fromMs: number;
  let toMs: number;
  // Each range begins a little early: where the window began is read through the server's clock (a
  // fresh client's estimate of it is some tens of ms off) and through resets given in whole seconds
  // (up to a second late). A start just after the reset we read, counted by the server in the window
  // before, read that window's end a second on, and the throttle looked like someone else's spending
  // when our own burst at the window's start had filled it: the reserve it taught kept a unit of
  // every later window back (5 processes over Redis, 100 per 10 s: a fourth window in a quarter of runs).
  if (state.refill === "window") {
    fromMs = observation.sentAtMs - windowMs + 1 - RESET_DRIFT_MARGIN_MS;
    toMs = observation.sentAtMs;
  } else if (state.refill === "fixed" && anchor.resetAtMs > 0 && observation.nowMs < anchor.resetAtMs) {
    fromMs = anchor.resetAtMs - windowMs - ROUNDING_MS;
    toMs = observation.nowMs;
  } else {
    return false;
  }
  let ours = 0;
  for (const [atMs, , slotUnits] of state.slots) if (atMs >= fromMs && atMs <= toMs) ours += slotUnits;
  return ours >= limit;
}

/**
 * A throttle on a budget the server showed means the model let through what the server did not
 * have: someone spends it unseen. Keep one more unit for them (up to half the limit). Clean answers
 * give it back slowly (a window's worth of them returns one unit), so the reserve settles where
 * collisions are about one per window. Not for a claim granted before a lesson already taken
 * (learnedAtSeq): a refilling bucket of 40 read as a concurrency limit let 40 more go at once, and
 * its 20 throttles kept half the limit back for the rest of the run (1.17 x ideal).
 */
function learnReserve(state: GovernorState, observation: Observation, units: number, probedSpent: boolean): void {
  if (state.anchor === null || state.limit === null) return;
  // A probe sent to learn when a window behind a count comes back (count-window.ts) was expected to be throttled.
  if (observation.kind === "throttled" && observation.limitType !== "quota" && !probedSpent) {
    if (observation.seq <= state.learnedAtSeq || ownStartsFillWindow(state, state.anchor, observation)) return;
    state.reserveUnits = Math.min(state.limit / 2, state.reserveUnits + units);
  } else if (observation.kind === "ok" && state.reserveUnits > 0) {
    state.reserveUnits = Math.max(0, state.reserveUnits - units / state.limit);
  }
}

/**
 * A throttle that shows no budget, in a scope whose successes show one, where executions cannot see
 * each other's claims (cross-flow state): the count the successes show paces the scope, and this
 * throttle is another limit (GitHub's secondary one beside the primary it shows) or others'
 * spending. Neither is measured by our own claims, which here are one execution's: taken as a
 * lesson, the few of them cut the shown limit of 20 per minute to 1 per 159 s (a rate measured from
 * a copy of the state loaded 53 s before), and the execution, finishing last, left that in the
 * state for the next ones, which deferred their jobs by 11 to 25 minutes (lab:random seed 2681 #5).
 * The throttle's own wait still holds the scope. Ours only over the 1,002 cross-flow scenarios of
 * the sweep: 1.317 -> 1.315 x ideal (geometric mean), jobs deferred with no quota spent 187 -> 182.
 */
function secondaryLimitUnseen(state: GovernorState, options: GovernorOptions): boolean {
  return options.claimsAllSeen === false && state.budgetOnSuccess;
}

function applyThrottle(state: GovernorState, observation: Observation, options: GovernorOptions, inFlightBefore: number): void {
  if (observation.budget !== null) estimateThrottled(state, observation);
  const told = toldConcurrency(state, observation, options.claimsAllSeen !== false);
  // The throttles of one told concurrency lesson (the claims out when it came) are one failure, not a streak.
  if (!(told && state.concurrency === "silent" && observation.seq <= state.learnedAtSeq)) state.throttleStreak += 1;
  if (state.throttleStreak >= options.breakerThreshold) state.breakerOpen = true;
  // A rejected request was not counted by the limiter: it leaves our log.
  state.slots = state.slots.filter(([, seq]) => seq !== observation.seq);
  // Under a concurrency limit a place frees when an answer comes, not at a time: our own backoff
  // holds back the request it belongs to, not the whole scope.
  const concurrent = told || holdsConcurrency(state);
  let outlasted = false;
  if (told) {
    toldConcurrencyThrottle(state, observation, inFlightBefore);
  } else if (state.concurrency === "silent") {
    silentThrottle(state, observation);
  } else if (observation.limitType === "concurrency" || concurrent) {
    concurrencyThrottle(state, observation, inFlightBefore);
  } else if (observation.budget === null) {
    const before: SilentRate = { limit: state.limit, refill: state.refill };
    const fresh = observation.seq > state.learnedAtSeq;
    if (!secondaryLimitUnseen(state, options)) outlasted = learnFromThrottle(state, observation);
    if (state.anchor === null) state.pacedCleanUnits = 0;
    if (fresh) silentProbeFailed(state, before);
  } else if (observation.budget.remaining > 0 && state.inFlightCap === null) {
    // Throttled with budget left: a limit the budget does not show (a secondary limit). Start
    // again one at a time and grow, so the next wave does not hit it all together.
    state.inFlightCap = 1;
    state.inFlightCapGrows = true;
  }
  // The scope holds for the throttle's wait: the server's, or the throttled request's own backoff
  // (not under a concurrency limit, above). A throttle that found the window longer than measured
  // holds it a quarter of the time measured instead (windowOutlastsLesson): the backoff doubles
  // with each of the request's attempts, and the next probe then landed up to twice past the
  // window, whose first success is taken for its length (a sliding 40 per 2 s behind Stripe's
  // silence read as 3,507 ms after probes at 1,062 and 1,739 ms, 1.75 x ideal). The request itself
  // still sleeps its backoff; the scope's next probe is another request's.
  if (outlasted || observation.waitMs === null || observation.waitMs < 0 || (!observation.waitFromServer && concurrent)) return;
  const untilMs = clampTime(observation.nowMs + observation.waitMs);
  if (untilMs > state.notBeforeMs) {
    state.notBeforeMs = untilMs;
    state.notBeforeReason = clip(observation.reason);
    state.notBeforeType = observation.limitType;
  }
}

/**
 * In flight once the cold scope's probe came back showing nothing: TCP's largest initial window for
 * small segments (RFC 5681 §3.1, https://www.rfc-editor.org/rfc/rfc5681#section-3.1: at most 4).
 * From two, four workers behind a limit they never reach lost two round trips to the ramp where
 * every peer lost none (2.7 to 4 % of runs of 200 to 300 jobs, each peer more than 2 % sooner); from
 * four, one. Ours only over 478 virtual scenarios: 63 sooner, 19 later, throttles 5,090 -> 5,118;
 * sweeps: random 87 -> 92 of 240, the fresh seed 341 batch 17 -> 18 of 30, probes 57 of 142 both.
 */
const SLOW_START_INITIAL_IN_FLIGHT = 4;

/**
 * Past this many in flight, a slow start doubles no faster than about once per
 * SLOW_START_DOUBLING_MS, however fast the answers come: the cap grows by rttMs / that per success
 * (one per success where answers take that long or longer, as RFC 5681 §3.1's slow start does,
 * https://www.rfc-editor.org/rfc/rfc5681#section-3.1). Doubling per 20 ms round trip, 50 workers
 * behind a silent fixed 100 per 2 s (Slack's bare 429 with Retry-After, lab:random seed 1951 #26)
 * had 98 in flight 100 ms in, and 44 of its 564 calls were throttled at the first window's end, all
 * sent before the first throttle came back; growing so, 9 of 529 (1.03 -> 1.05 x ideal). A window
 * is rarely shorter than a second, so the slower ramp costs a fast API little of one. Ours only over
 * all 4,854 sweep scenarios: throttles 56,406 -> 48,818, goals met 1,991 -> 2,005 (none lost), the
 * runs that met them as fast as before; where the ramp is the run (a concurrency limit behind
 * nothing, in one process, geometric mean of 944), 1.248 -> 1.274 x ideal.
 */
const SLOW_START_FREE_IN_FLIGHT = 8;
const SLOW_START_DOUBLING_MS = 1000;

/** Whether this success grows a slow start's cap (see SLOW_START_DOUBLING_MS): stateless, by the share of successive seqs. */
function slowStartGrows(state: GovernorState, seq: number): boolean {
  if ((state.inFlightCap ?? 0) < SLOW_START_FREE_IN_FLIGHT) return true;
  const rttMs = Math.min(SLOW_START_DOUBLING_MS, Math.max(1, state.rttMs));
  return Math.floor((seq * rttMs) / SLOW_START_DOUBLING_MS) !== Math.floor(((seq - 1) * rttMs) / SLOW_START_DOUBLING_MS);
}

function applyOk(state: GovernorState, observation: Observation, units: number, inFlightBefore: number, options: GovernorOptions): void {
  state.throttleStreak = 0;
  state.breakerOpen = false;
  // A replayed answer (an idempotency key seen before: Stripe's Idempotent-Replayed,
  // https://docs.stripe.com/api/idempotent_requests) was not admitted: it teaches nothing of the
  // budget. Counted as admitted, the replay of a write dropped before a silent throttle came back
  // inside a spent fixed window, read as what the window gave back since the lesson (one unit in
  // 650 ms), and a fixed 100 per 2 s was paced as a bucket of 1 per 650 ms: 2.96 x ideal (1.10 x).
  if (observation.counted === false) return;
  if (state.concurrency === "silent") {
    growSilentCap(state, units, inFlightBefore);
    return;
  }
  if (state.inFlightCapGrows && state.inFlightCap !== null) {
    // The slow start ends at the most claims a state tracks in flight, and the cap stays there: set
    // to none, it left the scope cold again (nothing learned, no cap), so the next claim probed
    // alone and the slow start began again from two, every 1,000 successes of an API that shows and
    // throttles nothing (50 workers: 21.1 s for 20,000 requests of 50 ms, against 20.0).
    if (slowStartGrows(state, observation.seq)) state.inFlightCap = Math.min(MAX_IN_FLIGHT, state.inFlightCap + 1);
    if (state.inFlightCap === MAX_IN_FLIGHT) state.inFlightCapGrows = false;
    // A slow start ends at the limit the scope knows (learned by a lesson, or shown beside a throttle
    // with budget left): the window paces from there.
    if (state.limit !== null && state.inFlightCap >= state.limit) {
      state.inFlightCap = null;
      state.inFlightCapGrows = false;
    }
  } else if (observation.budget === null && state.anchor === null && state.limit === null && state.inFlightCap === null) {
    // No budget shown: slow start, as TCP does (RFC 5681 §3.1): one more in flight per success.
    state.inFlightCap = SLOW_START_INITIAL_IN_FLIGHT;
    state.inFlightCapGrows = true;
  }
  if (observation.budget !== null) return;
  probeEstimatedRate(state, observation, units);
  if (options.probeSilentRate) probeSilentRate(state, observation, units);
  windowFromFirstSuccess(state, observation);
  const sentAtMs = clampTime(observation.sentAtMs);
  if (state.anchor === null && state.learnedAtSeq > 0 && observation.seq <= state.learnedAtSeq && state.windowStartMs > 0 && sentAtMs < state.windowStartMs) {
    // Sent before the throttle that taught the limit, answered after it: the limit was one more
    // (a limit counted from throttles; one the server shows is not raised by a reply without fields).
    if (state.limit !== null) state.limit = Math.min(MAX_FIGURE, state.limit + units);
    return;
  }
  // An assumed window keeps the start of the last lesson's units until the first success after it:
  // that success begins the next lesson's units. Kept on, a second lesson 17 s into a run took its
  // units as counted from the first request on, and lengthened a 10 s window to 17.8 s.
  const nextEpisode = windowIsGuessed(state) && state.okInWindow === 0 && observation.seq > state.learnedAtSeq;
  if (state.windowStartMs === 0 || sentAtMs < state.windowStartMs || nextEpisode) state.windowStartMs = sentAtMs;
  state.okInWindow += units;
}

/**
 * A probe sent after the reading's reset whose success shows no budget: the server shows its count only on
 * throttles (GitHub's X-RateLimit or IETF fields on a 403 or 429 alone). Held on to, the spent
 * reading asked for one probe after its reset, each probe's answer showed nothing, and so every
 * request went alone, one round trip each (a bucket of 60 per s, 20 workers: 3.6 x ideal). The
 * reset is taken to have brought the limit back, as X-RateLimit-Reset says of a fixed window (and
 * of a bucket whose reset is its time until full; a sliding log's units, sent in a burst, leave
 * about then too): the reading becomes the limit less our starts since the reset, with no reset of
 * its own, so the request after the last of them probes and the next throttle reads the count again.
 * Only a probe's answer, and only where no success has shown the budget: an answer without fields
 * (a replay from an idempotency key) from a server that shows its count on every success took a
 * spent window for a full one (a probe of 20 workers: 51 throttled; registration day's sliding log
 * spilled into an eleventh window in 4 of 5 seeds against 2).
 */
function budgetShownOnlyOnThrottles(state: GovernorState, observation: Observation): void {
  const anchor = state.anchor;
  const limit = state.limit;
  if (!anchor || state.budgetOnSuccess || anchor.resetAtMs === 0 || observation.sentAtMs < anchor.resetAtMs || limit === null || holdsConcurrency(state)) return;
  let sinceResetUnits = 0;
  for (const [atMs, , units] of state.slots) if (atMs >= anchor.resetAtMs) sinceResetUnits += units;
  state.anchor = { remaining: Math.max(0, limit - sinceResetUnits), seq: state.seq, atMs: observation.sentAtMs, resetAtMs: 0, lateUnits: 0, answeredAtMs: observation.nowMs, ownOutAtSend: 0 };
}

/**
 * A success showing nothing, after the reading budgetShownOnlyOnThrottles took back at a reset (no
 * reset of its own), where no window is known. Once that reading was spent, each start waited for one
 * probe's answer, one request per round trip (a token bucket of 60 per s behind IETF fields on its
 * 429s only, 50 workers: 4.92 x ideal; a concurrency limit of 8 behind GitHub's: 6.15 x). The server
 * took this request, so the reading is taken again from here: what it left less our claims since,
 * and this request's unit and one more back; spent, two go where one probe went, until a throttle
 * reads the count again (2.59 x and 3.62 x). Only the first success after each reading takes it
 * again (claims granted before it are in what it left), and not only once it is spent: the extra
 * unit a round trip makes sliding logs behind the same headers overshoot a little (seed 61 #19 15 ->
 * 32 throttled of 500 jobs, 1.08 -> 1.09 x); taken only once spent, they gave back fewer throttles
 * but were slower still (1.11 x).
 */
function spentReadingAnswered(state: GovernorState, observation: Observation, units: number): void {
  const anchor = state.anchor;
  const limit = state.limit;
  if (!anchor || state.budgetOnSuccess || anchor.resetAtMs !== 0 || state.windowMs !== null || limit === null || holdsConcurrency(state) || observation.seq <= anchor.seq) return;
  const left = anchor.remaining - unreflectedUnits(state, anchor);
  state.anchor = { remaining: Math.max(0, Math.min(limit, left + 2 * units)), seq: state.seq, atMs: clampTime(observation.nowMs), resetAtMs: anchor.resetAtMs, lateUnits: 0, answeredAtMs: anchor.answeredAtMs, ownOutAtSend: anchor.ownOutAtSend };
}

/** A claim's slot, searched from the newest end (an answer's claim is most often among the last granted). */
function ownSlot(state: GovernorState, seq: number): SlotTuple | undefined {
  for (let i = state.slots.length - 1; i >= 0; i--) if (state.slots[i]![1] === seq) return state.slots[i];
  return undefined;
}

/** Applies one answer (or its absence) to the scope's state. Pure. */
export function observe(current: GovernorState, observation: Observation, options: GovernorOptions): GovernorState {
  return observeInPlace(copyState(current), observation, options);
}

/** observe() on a state the caller owns (a store's own copy): changed in place, no copy made. */
export function observeInPlace(state: GovernorState, given: Observation, options: GovernorOptions): GovernorState {
  const observation = checked(given, state);
  const nowMs = observation.nowMs;
  state.updatedAtMs = Math.max(state.updatedAtMs, nowMs);
  let inFlightBefore = 0;
  for (const [, untilMs] of state.inFlight) if (untilMs > nowMs) inFlightBefore += 1;
  const units = ownSlot(state, observation.seq)?.[2] ?? state.unitsPerRequest;
  const entry = state.inFlight.find(([seq]) => seq === observation.seq);
  const wasInFlight = entry !== undefined;
  if (wasInFlight) state.inFlight = state.inFlight.filter(([seq]) => seq !== observation.seq);
  // A claim the server's last reading counted as late (still out, granted before the reading's
  // claim) that the server did not count after all (rejected, or a replayed answer) will never
  // reach that count: it no longer holds a unit back.
  const anchor = state.anchor;
  if (anchor && wasInFlight && observation.seq < anchor.seq && (observation.kind === "throttled" || observation.counted === false || countedBeforeAnchor(state, anchor, observation))) {
    anchor.lateUnits = Math.max(0, anchor.lateUnits - units);
  }
  if (observation.kind !== "lost") {
    const sampleMs = Math.max(0, nowMs - observation.sentAtMs);
    state.rttMs = state.rttMs === 0 ? sampleMs : Math.round(state.rttMs * 0.8 + sampleMs * 0.2);
  }
  // Only the probe's own answer tells what it was sent to learn (its lease frees the others if it never comes).
  const answersProbe = state.probe?.seq === observation.seq;
  if (answersProbe) state.probe = null;
  const answersTrial = state.trialSeq !== 0 && state.trialSeq === observation.seq;
  if (answersTrial) state.trialSeq = 0;
  if (answersTrial && observation.budget === null && windowTrialAnswered(state, observation)) {
    // A failed trial is no lesson: the window is as learned, only proven longer than the trial's distance.
    if (wasInFlight) state.lastAnsweredAtMs = Math.max(state.lastAnsweredAtMs, nowMs);
    prune(state, nowMs);
    return state;
  }
  // A throttle of a claim granted before the last lesson (the wave a throttle read the limit from,
  // concurrency.ts throttledPastTwiceTheCount) disproves nothing: it was out before the reading.
  if (observation.kind === "throttled" && observation.seq > state.learnedAtSeq) ruleOutInferredConcurrency(state);
  const probedSpent = answersProbe && probesForWindowLength(state);
  if (observation.budget && !applyConcurrentBudget(state, observation, observation.budget, options.leaseMs, entry?.[2] ?? 0, answersProbe)) {
    applyShape(state, observation.budget);
    learnBucketFromAdmitted(state, observation, observation.budget.remaining);
    applyAnchor(state, observation, observation.budget, options.leaseMs);
    lengthenFromThrottle(state, observation, observation.budget.remaining, observation.budget.resetAtMs ?? 0, options.claimsAllSeen !== false);
    holdPolicyWindow(state, observation.budget.policyWindowMs ?? null);
  }
  // A replayed answer spent nothing: the request leaves our log, as a rejected one does.
  if (observation.counted === false) state.slots = state.slots.filter(([, seq]) => seq !== observation.seq);
  if (observation.kind === "throttled") applyThrottle(state, observation, options, inFlightBefore);
  else if (observation.kind === "ok") applyOk(state, observation, units, inFlightBefore, options);
  if (observation.budget === null && (observation.kind === "ok" || observation.kind === "throttled")) learnSilentConcurrency(state, observation);
  if (answersProbe && observation.kind === "ok" && observation.budget === null) budgetShownOnlyOnThrottles(state, observation);
  else if (observation.kind === "ok" && observation.budget === null) spentReadingAnswered(state, observation, units);
  learnReserve(state, observation, units, probedSpent);
  if (wasInFlight) state.lastAnsweredAtMs = Math.max(state.lastAnsweredAtMs, nowMs);
  prune(state, nowMs);
  return state;
}
