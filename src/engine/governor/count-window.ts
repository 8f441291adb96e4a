/**
 * A count shown with no reset and no window (Shopify REST's X-Shopify-Shop-Api-Call-Limit,
 * used/limit: https://shopify.dev/docs/api/admin-rest/usage/rate-limits) is read as a bucket at
 * the rate documented for its size (estimate.ts), and its own count proves the rate faster where
 * units come back sooner. A count that comes back in jumps is no such bucket: a fixed window behind
 * the same header gives nothing back until its reset, then the whole limit. Read as a bucket, a
 * fixed 40 per 1 s (8 workers) waited a second at the documented rate after its first window, then
 * took the jump for a bucket of 40 per 1.6 s, whose refill between jumps met throttles: 1.34 x
 * ideal, 9 throttled of 209 calls.
 *
 * What tells: a throttle's own wait says when the server admits again (Retry-After: the next unit
 * of a bucket, a fixed window's reset). Where the first reading after that instant shows the count
 * back in full, more than the bucket's rate (as estimated or proven so far) can have refilled since
 * the count was last seen spent, the count is a window's, and that instant was its reset. Its
 * length is the distance to the next reset a throttle tells (whole seconds, as rate limits are
 * stated); until then, a window spent sends one request to learn it. With the length, each reading
 * takes the window's next reset as its own, and the fixed-window rules apply as to a count whose
 * reset is shown (observe.ts learnFromReset: a count not back in full at a reset makes it a
 * sliding log of that length). Shopify's own bucket gives a unit or a few back at the wait it tells
 * (Retry-After: 2.0 at 2 per s), never the whole bucket: it stays a bucket.
 */
import { holdsConcurrency } from "./concurrency";
import { unitsClaimedBetween } from "./model";
import { bucketRateEstimated, clampTime, fullRefillToleranceUnits, MAX_FIGURE, wholeSecondsNear } from "./state";
import type { Anchor, GovernorState, Observation, ObservedBudget } from "./types";

/** A window behind a count whose length is not known yet: its spent count sends one request, whose throttle tells the next reset. */
export function probesForWindowLength(state: GovernorState): boolean {
  return state.countResetAtMs > 0 && state.refill === "fixed" && state.windowMs === null && state.anchor !== null && state.anchor.resetAtMs === 0;
}

/** Whether the budget is a count with neither reset nor shown rate: the one this file reads. */
export function countShowsNoReset(budget: ObservedBudget): boolean {
  return budget.resetAtMs === null && budget.restoreEstimated === true;
}

/** The instant a throttle whose reading shows the count spent said the server admits again (0: none told). */
function toldResetAtMs(observation: Observation, remaining: number): number {
  if (observation.kind !== "throttled" || !observation.waitFromServer || observation.waitMs === null || observation.waitMs <= 0 || remaining > 0) return 0;
  return clampTime(observation.nowMs + observation.waitMs);
}

/** Our units started at or after `fromMs`, up to the observed claim: the ones a reset's count may still hold. */
function oursSince(state: GovernorState, fromMs: number, observedSeq: number): number {
  let units = 0;
  for (const [atMs, seq, slotUnits] of state.slots) if (seq <= observedSeq && atMs >= fromMs) units += slotUnits;
  return units;
}

/**
 * The reading after a told reset shows the count back in full, beyond what the bucket's rate can
 * have refilled since the previous reading (the count spent, or nearly): a window's reset. The
 * scope becomes a fixed window of unknown length whose last reset was then.
 */
function cameBackAsWindow(state: GovernorState, previous: Anchor, observation: Observation, remaining: number): boolean {
  const { limit, windowMs } = state;
  const resetMs = state.countResetAtMs;
  if (limit === null || windowMs === null || resetMs === 0 || observation.sentAtMs < resetMs || holdsConcurrency(state) || state.concurrency !== "unknown") return false;
  const fullUnits = limit - oursSince(state, resetMs, observation.seq) - fullRefillToleranceUnits(limit);
  if (fullUnits < 1 || remaining < fullUnits) return false;
  const refilledUnits = ((observation.sentAtMs - previous.atMs) * limit) / windowMs;
  return previous.remaining + refilledUnits < fullUnits;
}

/**
 * The count came back in full between two readings (less our claims in between): a fixed window's
 * reset. A count that rises by less is a sliding window's units leaving, or a bucket's refill,
 * and says nothing of a reset. Only a reading sent after the previous one was answered, and that
 * found the count spent by at least a unit: one sent before may have reached the server first.
 */
function cameBackInFullSince(state: GovernorState, previous: Anchor, observation: Observation, remaining: number): boolean {
  const limit = state.limit;
  if (limit === null || observation.seq <= previous.seq || observation.sentAtMs < previous.answeredAtMs) return false;
  const claimedUnits = unitsClaimedBetween(state, previous.seq, observation.seq);
  const fullUnits = limit - claimedUnits - fullRefillToleranceUnits(limit);
  return remaining >= fullUnits && remaining > previous.remaining - claimedUnits + 1;
}

/** The next reset of a fixed window of windowMs whose reset came at resetMs, after sentAtMs. */
function nextResetAfterMs(resetMs: number, windowMs: number, sentAtMs: number): number {
  if (sentAtMs < resetMs) return resetMs;
  return clampTime(resetMs + (Math.floor((sentAtMs - resetMs) / windowMs) + 1) * windowMs);
}

/**
 * The count came back in full at a told reset, as no bucket at its rate refills (cameBackAsWindow):
 * the scope becomes a fixed window of unknown length whose last reset was then.
 */
function turnWindow(state: GovernorState, previous: Anchor, observation: Observation): void {
  // The previous reading is that window's: this one is the next window's first (observe.ts
  // applyAnchor reads it after the previous reading's reset, and takes its count as it is).
  previous.resetAtMs = state.countResetAtMs;
  state.refill = "fixed";
  state.windowMs = null;
  state.windowSource = null;
  // Starts laid out at the estimated rate are no queue for the window's units: they keep their
  // places, and the units the count shows go now (else the window that just began goes unused,
  // and the next reset a throttle tells is two windows on).
  state.lastGrantMs = Math.min(state.lastGrantMs, clampTime(observation.nowMs));
  // The throttles the estimated rate met were its refill not coming, and the count it read
  // falling faster than its refill was the window's units not coming back: not others spending
  // unseen. The reserve they taught would keep a unit of each window back for windows to come.
  // Claims granted so far were laid out by that estimate, and their throttles teach none either.
  state.reserveUnits = 0;
  state.othersPerMs = 0;
  state.learnedAtSeq = state.seq;
  state.probedFromWindowMs = 0;
  state.pacedCleanUnits = 0;
  state.refillSinceMs = 0;
  state.refillSeenUnits = 0;
}

/**
 * A window behind a count: its reset as this reading learns it. A count back in full between two
 * readings is a reset between their sends; the first one after the last reset read gives the
 * window's length (whole seconds: the jump is read a reading late), and with the length known only
 * a reset that came sooner than the one laid moves the window on (a jump read up to a reading late,
 * taken each time, would drift the windows later). A throttle's told wait is the server's reset,
 * and the distance to it from the last one read the length where it is not known yet. With the
 * length, the window's next reset after the send.
 */
function windowReset(state: GovernorState, previous: Anchor | null, observation: Observation, remaining: number, toldMs: number): number {
  if (toldMs === 0 && previous !== null && cameBackInFullSince(state, previous, observation, remaining)) {
    if (state.windowMs === null && observation.sentAtMs > state.countResetAtMs) {
      state.windowMs = Math.min(MAX_FIGURE, wholeSecondsNear(observation.sentAtMs - state.countResetAtMs));
      state.windowSource = "inferred";
      state.countResetAtMs = clampTime(observation.sentAtMs);
    } else if (state.windowMs === null || observation.sentAtMs < nextResetAfterMs(state.countResetAtMs, state.windowMs, previous.atMs)) {
      state.countResetAtMs = clampTime(observation.sentAtMs);
    }
  }
  // A throttle sent before the last reset (answered late) tells that reset again, not the next one.
  if (toldMs > 0 && observation.sentAtMs >= state.countResetAtMs) {
    if (state.windowMs === null) {
      state.windowMs = Math.min(MAX_FIGURE, wholeSecondsNear(toldMs - state.countResetAtMs));
      state.windowSource = "inferred";
    }
    state.countResetAtMs = toldMs;
    return toldMs;
  }
  if (state.refill !== "fixed" || state.windowMs === null) return 0;
  const nextMs = nextResetAfterMs(state.countResetAtMs, state.windowMs, observation.sentAtMs);
  return nextMs > observation.sentAtMs ? nextMs : 0;
}

/**
 * The reset of a reading behind a count with no reset (0: none known), learning as it goes: as a
 * bucket at an estimated rate, the wait a throttle told, and the turn to a window where the count
 * came back in full at it; as a window, windowReset.
 */
export function resetBehindCount(state: GovernorState, previous: Anchor | null, observation: Observation, remaining: number): number {
  const toldMs = toldResetAtMs(observation, remaining);
  if (bucketRateEstimated(state)) {
    if (previous !== null && cameBackAsWindow(state, previous, observation, remaining)) turnWindow(state, previous, observation);
    else if (toldMs > 0) state.countResetAtMs = toldMs;
    return 0;
  }
  if (state.countResetAtMs === 0 || state.refill === "bucket") return 0;
  return windowReset(state, previous, observation, remaining, toldMs);
}
