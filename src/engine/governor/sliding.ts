/**
 * A sliding window's length, learned from the server's count when no signal shows it. Two
 * readings bound it from above: the reset (when the oldest counted unit leaves, rounded up to whole
 * seconds: inferWindow) and units of ours the count no longer holds (they have left: trimWindow).
 * Both are upper bounds, so the tightest is kept. Resets rounded up to whole seconds leave up to a
 * second of slack in the first; the second takes that slack out (a window bound at 1,050 ms for a
 * 1 s window paced 10 per 1.05 s, 5 % slower than the server allows). And a window shown as
 * rolling whose count comes back faster than its units can leave is a bucket
 * (learnRefillBehindShownWindow).
 */
import { heldSlots, seesEveryClaim, unitsClaimedBetween } from "./model";
import { MAX_FIGURE, RESET_DRIFT_MARGIN_MS, ROUNDING_MS } from "./state";
import type { Anchor, GovernorState, Observation } from "./types";

/**
 * A sliding window's reset is when its oldest counted unit leaves. When the budget is spent and
 * we are the only client, the units the server counts are our most recent `limit` ones, so the
 * window is at most (reset - the oldest of them). Each such reading is an upper bound (resets are
 * rounded up to whole seconds), so the tightest one is kept. A reading where the server counts
 * more than we sent (another client shares the budget) says nothing and is skipped, and so does a
 * throttled answer (its request is not in the count: the window spent when it came was 728 ms of
 * our starts for a 1 s window, and paced at that the next ones were throttled too).
 */
export function inferWindow(state: GovernorState, observation: Observation, remaining: number, resetAtMs: number): void {
  if (observation.kind !== "ok" || state.refill !== "window" || state.windowSource === "shown" || resetAtMs === 0 || state.limit === null || remaining > 0) return;
  const held = heldSlots(state, { remaining, seq: observation.seq, atMs: observation.sentAtMs, resetAtMs, lateUnits: 0, answeredAtMs: observation.nowMs, ownOutAtSend: 0 });
  if (held.last < 0 || held.ownUnits < state.limit) return;
  const oldestMs = state.slots[held.first]![0];
  if (resetAtMs <= oldestMs) return;
  const observedMs = resetAtMs - oldestMs;
  state.windowMs = Math.min(MAX_FIGURE, state.windowSource === "inferred" && state.windowMs !== null ? Math.min(state.windowMs, observedMs) : observedMs);
  state.windowSource = "inferred";
}

/**
 * A throttle whose count is spent, in a sliding window whose length was inferred: where every unit
 * the server counts is ours, it counts the limit's worth of our newest units sent before the
 * throttled one (throttled ones leave our log: the server did not count them), and its reset is
 * when the oldest of those leaves, rounded up by under a second. So the window is at least that
 * reset less a second, less that unit's send. The Date's drift and the unit's way to the server
 * are not taken off: they make the bound tens of ms long at most, on the slow side (a window read
 * longer paces later), where taking them off left it under the window (1,750 ms for 2 s) and the
 * next start was throttled too. inferWindow's bounds are upper ones, and a window read too short
 * (a probe that reached a sliding window just as most of the last burst left, read as a fixed
 * window's full refill) is never lengthened by them: a sliding 10 per 2 s read as 1,020 ms let 8
 * go at each of its starts and throttled 25 of 76 calls (lab:random seed 1661 #2).
 */
export function lengthenFromThrottle(state: GovernorState, observation: Observation, remaining: number, resetAtMs: number, claimsAllSeen: boolean): void {
  const { limit, windowMs } = state;
  if (observation.kind !== "throttled" || state.refill !== "window" || state.windowSource !== "inferred" || windowMs === null || limit === null) return;
  if (remaining > 0 || resetAtMs <= observation.sentAtMs || !claimsAllSeen || !seesEveryClaim(state)) return;
  let uncounted = limit;
  for (let i = state.slots.length - 1; i >= 0; i--) {
    const [atMs, seq, units] = state.slots[i]!;
    if (atMs > observation.sentAtMs || seq === observation.seq) continue;
    uncounted -= units;
    if (uncounted > 0) continue;
    const boundMs = resetAtMs - ROUNDING_MS - atMs;
    if (boundMs > windowMs) state.windowMs = Math.min(MAX_FIGURE, boundMs);
    return;
  }
}

/**
 * Where the bound trimmed from units that left is kept: it is measured between two sends on our
 * clock, while the server counted two arrivals, and answers' latencies differ by some ms.
 */
const LEFT_UNITS_MARGIN = 0.01;

/**
 * The newest of our sends whose unit the reading no longer counts, and the oldest it still counts.
 * Walking back from the observed send, the server counts (limit - remaining) units at most, the
 * observed one's included; the next older unit of ours has left. Claims still out are skipped (they
 * may reach the server after the observed one), and so are sends at the observed instant (they may
 * have reached it first): either way the bound only gets looser. Units of others in the count make
 * fewer of ours counted, which loosens it too.
 */
function leftAndOldestCounted(state: GovernorState, observation: Observation, remaining: number, limit: number): { leftAtMs: number; oldestCountedMs: number } | null {
  const sentAtMs = observation.sentAtMs;
  const observedUnits = state.slots.find(([, seq]) => seq === observation.seq)?.[2] ?? state.unitsPerRequest;
  let counted = limit - remaining - observedUnits;
  if (counted < 0) return null;
  const out = new Set(state.inFlight.map(([seq]) => seq));
  let oldestCountedMs = sentAtMs;
  for (let i = state.slots.length - 1; i >= 0; i--) {
    const [atMs, seq, units] = state.slots[i]!;
    if (atMs >= sentAtMs || seq === observation.seq || out.has(seq)) continue;
    if (counted < units) return { leftAtMs: atMs, oldestCountedMs };
    counted -= units;
    oldestCountedMs = atMs;
  }
  return null;
}

/**
 * Units of ours that the server no longer counts have left the window: a unit sent at s is gone by
 * the observed send t, so the window is at most t - s. Only a sliding window's bound inferred from
 * whole-second resets is trimmed, and by less than half a second: a fixed window read before its
 * reset (rounded up, the reset we read is late) also shows units gone, from just before the
 * server's reset. And the trimmed window must still fit the reading's reset: a sliding log's reset
 * is its oldest counted unit's send plus the window, rounded up by less than a second (a bucket's
 * time until full, read as a sliding window, does not fit it).
 */
export function trimWindow(state: GovernorState, observation: Observation, remaining: number, resetAtMs: number): void {
  const { limit, windowMs } = state;
  if (observation.kind !== "ok" || state.refill !== "window" || state.windowSource !== "inferred" || windowMs === null || limit === null || resetAtMs === 0) return;
  const found = leftAndOldestCounted(state, observation, remaining, limit);
  if (found === null) return;
  const boundMs = Math.ceil((observation.sentAtMs - found.leftAtMs) * (1 + LEFT_UNITS_MARGIN));
  if (boundMs >= windowMs || boundMs < windowMs - ROUNDING_MS / 2) return;
  if (boundMs < resetAtMs - found.oldestCountedMs - ROUNDING_MS - RESET_DRIFT_MARGIN_MS) return;
  state.windowMs = boundMs;
}

/** Starts the refill count at sinceMs (0: not counting). */
export function countRefillFrom(state: GovernorState, sinceMs: number): void {
  state.refillSinceMs = sinceMs;
  state.refillSeenUnits = 0;
}

/** A count come back by this many units more than our own units leaving explain is a refill, not a floor's rounding. */
const REFILL_PROOF_UNITS = 2;

/** Whether the state is a window shown with no reset, whose refill learnRefillBehindShownWindow tests (and counts in refillSeenUnits). */
export function refillTestedBehindShownWindow(state: Pick<GovernorState, "refill" | "windowSource">): boolean {
  return state.refill === "window" && state.windowSource === "shown";
}

/** Units the count came back by between two readings beyond our units leaving explain, or null where the pair cannot tell. */
function cameBackBetween(state: GovernorState, previous: Anchor, observation: Observation, remaining: number, lateUnits: number): number | null {
  const { limit, windowMs } = state;
  if (limit === null || windowMs === null || !seesEveryClaim(state)) return null;
  if (observation.kind !== "ok" || observation.seq <= previous.seq || previous.resetAtMs > 0 || (observation.budget?.resetAtMs ?? null) !== null) return null;
  const held = heldSlots(state, previous, true);
  if (held.ownUnits < limit - previous.remaining) return null;
  if (held.last >= held.first && state.slots[held.first]![0] <= previous.atMs - windowMs) return null;
  let leftUnits = 0;
  for (let i = held.first; i <= held.last; i++) if (state.slots[i]![0] + windowMs <= observation.sentAtMs) leftUnits += state.slots[i]![2];
  const claimedBetween = unitsClaimedBetween(state, previous.seq, observation.seq);
  // Not a fixed window's reset between the two: that gives the whole limit back at once, less only
  // what we sent since.
  if (remaining >= limit - claimedBetween - 1) return null;
  return remaining - (previous.remaining - (previous.lateUnits - lateUnits + claimedBetween) + leftUnits);
}

/**
 * A window whose length is shown with no reset (HubSpot's X-HubSpot-RateLimit-Interval-Milliseconds,
 * a rolling window: https://developers.hubspot.com/docs/api/usage-details) gives a
 * unit back only when one it counted leaves, a window after it was spent. Where every unit a
 * reading counted was ours, sent within the window before it, nothing but our own units can
 * leave, and others spending only lower the count: one come back by more than ours that left is a
 * bucket refilling as it goes, at the limit per interval shown. Read as a rolling window, a token
 * bucket of 100 per 2 s behind those headers waited for each unit to leave: 1.22 x ideal.
 *
 * The units come back add up across a run of readings (refillSeenUnits since refillSinceMs), as
 * learnBucketRefill's do: the shown remainders' floors cancel but for the two ends. Compared two
 * readings at a time, answers 50 ms apart each showed less than a unit of a bucket of 40 per 3 s
 * come back, and 4 workers at 20 per s were read as a rolling window and waited a second for units
 * to leave (1.16 x ideal). A pair that cannot tell starts the count afresh, and no more may come
 * back than such a bucket refills over the count's span (and a unit for the floors).
 */
export function learnRefillBehindShownWindow(state: GovernorState, previous: Anchor, observation: Observation, remaining: number, lateUnits: number): void {
  const { limit, windowMs } = state;
  if (!refillTestedBehindShownWindow(state) || limit === null || windowMs === null) return;
  const cameBackUnits = cameBackBetween(state, previous, observation, remaining, lateUnits);
  if (cameBackUnits === null) return countRefillFrom(state, 0);
  if (state.refillSinceMs === 0 || state.refillSinceMs > previous.atMs) countRefillFrom(state, previous.atMs);
  state.refillSeenUnits += cameBackUnits;
  if (Math.abs(state.refillSeenUnits) > MAX_FIGURE) return countRefillFrom(state, 0);
  const refillAtMostUnits = (limit * Math.max(0, observation.sentAtMs - state.refillSinceMs)) / windowMs + 1;
  if (state.refillSeenUnits >= REFILL_PROOF_UNITS && state.refillSeenUnits <= refillAtMostUnits) state.refill = "bucket";
}
