/**
 * The budget model: given what the governor knows, the earliest time a request of `units` may
 * start. Three readings, each conservative (a unit is counted back only when it certainly is):
 *
 * - the server's own count (the anchor: `remaining` after a known claim), less the claims sent
 *   since, plus the units of ours that came back since (a window refill);
 * - after the server's reset: a fixed window's full limit again (once a reset was seen to bring it
 *   back), or our own log of starts (no more than `limit` in any `windowMs`: safe for sliding
 *   logs, fixed windows and buckets alike), or, when nothing is known, one probe whose answer
 *   tells the rest;
 * - a bucket whose restore rate the server shows (Shopify's GraphQL cost): units come back
 *   continuously, the GCRA reading (https://en.wikipedia.org/wiki/Generic_cell_rate_algorithm).
 *
 * All loops are linear in the number of slots (they are sorted), so a Lua port can run them
 * inside Redis without blocking it.
 */
import type { Anchor, GovernorState } from "./types";

export type Earliest =
  | { atMs: number; probe: boolean; why: string }
  | { probeWanted: true; atMs: number; why: string; trial?: true }
  /** Not now, but answers due within a round trip may show the units free: ask again then instead of taking atMs. */
  | { answersDue: true; atMs: number; why: string };

/**
 * Whether the state shows no one spending its budget unseen: the server's count has lost nothing
 * beyond our own claims (othersPerMs) and no throttle came where the count said a unit was free
 * (reserveUnits). The count is then ours alone: what our claims explain in it tells a limit's kind
 * (concurrency.ts, sliding.ts, observe.ts), and a request that got no answer is accounted for
 * (plan.ts AttemptHistory.claimsAllSeen): its slot stays in our log as a unit spent (a "lost"
 * answer does not take it out), its retry claims a slot of its own, and where the server's count
 * is read the unit shows there too.
 */
export function seesEveryClaim(state: GovernorState): boolean {
  return state.othersPerMs === 0 && state.reserveUnits === 0;
}

/** Units of our claims granted after the claim fromSeq, up to and including toSeq. */
export function unitsClaimedBetween(state: GovernorState, fromSeq: number, toSeq: number): number {
  let units = 0;
  for (const [, seq, slotUnits] of state.slots) if (seq > fromSeq && seq <= toSeq) units += slotUnits;
  return units;
}

/** Units of claims the anchor's count does not include yet (sent after the observed one). */
export function unreflectedUnits(state: GovernorState, anchor: Anchor): number {
  let units = anchor.lateUnits;
  for (const slot of state.slots) if (slot[1] > anchor.seq) units += slot[2];
  return units;
}

/**
 * How many others may be reaching for the same units right now: those arriving within one round
 * trip at the rate they were seen spending, or, when throttles showed that others spend unseen
 * (executions that load the same stale state), the reserve those throttles taught.
 */
function contenders(state: GovernorState): number {
  return Math.max(state.othersPerMs * Math.max(1, state.rttMs), state.reserveUnits);
}

/**
 * What is left for us of `available`: others spending this budget unseen (executions that load
 * the same stale state, other apps on the key) took up to one round trip of their spending since
 * the reading, and the reserve that collisions taught stays theirs; at most takenAtMostUnits of it.
 */
function afterOthers(state: GovernorState, anchor: Anchor, fromMs: number, available: number, takenAtMostUnits = Number.POSITIVE_INFINITY): number {
  const spentByOthers = state.othersPerMs > 0 ? Math.min(state.othersPerMs * Math.max(0, fromMs - anchor.atMs), contenders(state)) : 0;
  return available - Math.min(takenAtMostUnits, Math.max(spentByOthers, state.reserveUnits));
}

/** When a bucket refilling perMs would be full again: from the reading, pushed on by each claim the reading does not include (GCRA's theoretical arrival time). */
export function bucketFullAtMs(state: GovernorState, anchor: Anchor, limit: number, perMs: number): number {
  let fullAtMs = anchor.atMs + (limit - anchor.remaining + anchor.lateUnits) / perMs;
  for (const [atMs, seq, slotUnits] of state.slots) if (seq > anchor.seq) fullAtMs = Math.max(fullAtMs, atMs) + slotUnits / perMs;
  return fullAtMs;
}

/**
 * A bucket, read as GCRA reads it (https://en.wikipedia.org/wiki/Generic_cell_rate_algorithm): the
 * instant it would be full again, from the reading, pushed on by each claim the reading does not
 * include, from that claim's own start where the bucket was full by then; the units at fromMs are
 * what that instant leaves of the limit, less what others take. Taking the refill up to the limit
 * at fromMs and every claim since off it at once counted as lost the refill between claims spread
 * over the time to come: 50 workers on a bucket of 10 per 5 s were granted starts 556 ms further
 * apart each (the 29th two minutes out), and 20 jobs were deferred.
 */
function fromBucket(state: GovernorState, anchor: Anchor, fromMs: number, units: number, limit: number, windowMs: number, draw: number | undefined): number {
  const perMs = limit / windowMs;
  const fullAtMs = bucketFullAtMs(state, anchor, limit, perMs);
  const tokens = Math.min(limit, limit - (fullAtMs - fromMs) * perMs);
  // Others take no more than a full bucket leaves us a request's units of: a reserve taught while
  // the limit read higher, kept when a later lesson lowered it (a reserve of 2.7 units, a bucket of
  // 1 per 1.6 s across cross-flow executions), left less than a request even when full, and each
  // claim laid its start that far beyond its own time: asked again and again, every request waited
  // out its 10 minutes and was deferred.
  const left = afterOthers(state, anchor, fromMs, tokens, Math.max(0, limit - units));
  if (left >= units) return fromMs;
  return Math.ceil(fromMs + (units - left) / perMs + spreadMs(state, draw));
}

/**
 * The units the server still counts at the anchor: our most recent reflected slots, up to
 * (limit - remaining) units. Older slots of ours are already out of its count, so they must not
 * come back a second time. Returns the index of the first held slot and of the last reflected one.
 * With skipLate, claims still out that were late for the reading (anchor.lateUnits: granted before
 * it, unanswered when it came) are passed over: they are held back as unreflected already, and
 * counted among the reading's units as well they stopped the walk a claim short: the oldest unit
 * the reading does count was never seen to leave. Behind a sliding 6 per s with 5 % of answers
 * 3 s late (a 1 s client timeout), each window that held such a claim sent 5 (1.14 -> 1.10 x ideal).
 */
export function heldSlots(state: GovernorState, anchor: Anchor, skipLate = false): { first: number; last: number; ownUnits: number } {
  let last = -1;
  for (let i = state.slots.length - 1; i >= 0; i--) {
    if (state.slots[i]![1] <= anchor.seq) {
      last = i;
      break;
    }
  }
  if (last < 0) return { first: 0, last: -1, ownUnits: 0 };
  let counted = state.limit === null ? Number.POSITIVE_INFINITY : state.limit - anchor.remaining;
  let lateLeft = skipLate ? anchor.lateUnits : 0;
  let first = last + 1;
  let ownUnits = 0;
  while (first > 0 && counted > 0) {
    first -= 1;
    const [, seq, units] = state.slots[first]!;
    if (lateLeft >= units && seq < anchor.seq && state.inFlight.some(([s]) => s === seq)) {
      lateLeft -= units;
      continue;
    }
    counted -= units;
    ownUnits += units;
  }
  return { first, last, ownUnits };
}

/**
 * The anchor's reading before its reset: remaining - unreflected, plus the units of ours the
 * server still counts as they leave the window (sliding refill with a known window). Null when
 * the budget does not allow the request before the reset (or ever, without a reset).
 */
function fromAnchor(state: GovernorState, anchor: Anchor, fromMs: number, units: number, draw: number | undefined): number | null {
  let available = afterOthers(state, anchor, fromMs, anchor.remaining - unreflectedUnits(state, anchor));
  if (available >= units) return fromMs;
  const windowMs = state.windowMs;
  if (state.refill !== "window" || windowMs === null) return null;
  const held = heldSlots(state, anchor, true);
  for (let i = held.first; i <= held.last; i++) {
    const [atMs, , slotUnits] = state.slots[i]!;
    const freeAtMs = atMs + windowMs;
    if (anchor.resetAtMs > 0 && freeAtMs >= anchor.resetAtMs) return null;
    available += slotUnits;
    if (available >= units) return Math.max(fromMs, freeAtMs + spreadMs(state, draw));
  }
  return null;
}

/** The smoothed answer time, or 100 ms before any answer came. */
export function roundTripMs(state: GovernorState): number {
  return state.rttMs > 0 ? state.rttMs : 100;
}

/**
 * Units of our claims sent within the last two round trips before fromMs and still out, whose
 * answers are due: those granted before the reading's claim ("before": the reading may or may not
 * count them) or after it ("after": the reading does not).
 */
function unitsAnswersDue(state: GovernorState, fromMs: number, anchorSeq: number, side: "before" | "after"): number {
  const sinceMs = fromMs - 2 * roundTripMs(state);
  let units = 0;
  for (let i = state.slots.length - 1; i >= 0; i--) {
    const [atMs, seq, slotUnits] = state.slots[i]!;
    if (atMs <= sinceMs) break;
    if (atMs > fromMs || (side === "before" ? seq >= anchorSeq : seq <= anchorSeq)) continue;
    if (state.inFlight.some(([s]) => s === seq)) units += slotUnits;
  }
  return units;
}

/**
 * Whether the units held back for claims sent within the last two round trips, whose answers are
 * due, would let this claim go now. Each such claim is held back as spent after the reading, but
 * where executions or processes share the state the server may have counted it before the reading
 * (slots granted in one order reach it in another); its answer tells which. Granting the next
 * window instead would leave that unit unused (grants never move earlier), one per window's end.
 */
function answersMayFree(state: GovernorState, anchor: Anchor, fromMs: number, units: number): boolean {
  const answering = unitsAnswersDue(state, fromMs, anchor.seq, "before");
  return answering > 0 && afterOthers(state, anchor, fromMs, anchor.remaining - unreflectedUnits(state, anchor) + Math.min(answering, anchor.lateUnits)) >= units;
}

/**
 * Whether the next fixed window, granted whole at its reset, should wait for the answers due within
 * two round trips to claims sent since the reading. The window's kind rests on a count that came
 * back in full at a reset, and a bucket whose reset is the time until it is full again reads the
 * same there: its next readings show the reset moved on as the count ran down (observe.ts
 * resetMovedOn), but grants already laid at the next "reset" stand (grants never move later). A
 * token bucket of 20 per 2 s behind IETF fields, 50 workers (lab:random seed 571 #8): the probe
 * after a reset read it as a fixed 20 per 1.1 s, the 30 workers waiting were granted that next
 * reset before the 19 answers due 100 ms later told a bucket, and 9 of them were throttled. Asked
 * again when those answers are in, a fixed window's next starts are the same.
 */
function answersMayTellKind(state: GovernorState, anchor: Anchor, fromMs: number): boolean {
  return state.refill === "fixed" && unitsAnswersDue(state, fromMs, anchor.seq, "after") > 0;
}

/**
 * When others share the budget unseen (executions that loaded the same state), they predict the
 * same free instant; each takes a random place among the contenders' share of the refill, so
 * they do not all arrive at once.
 */
function spreadMs(state: GovernorState, draw: number | undefined): number {
  const rivals = contenders(state);
  if (rivals <= 0 || draw === undefined) return 0;
  // One unit's refill time, when known; else a round trip.
  const unitMs = state.limit !== null && state.windowMs !== null ? state.windowMs / state.limit : Math.max(10, state.rttMs);
  return Math.round(draw * rivals * unitMs);
}

/**
 * How long past a shown window a unit of ours is still counted while its request is unanswered.
 * The server counts arrivals, not our sends, and a window's edge may be inclusive (a unit that
 * arrived exactly one window ago still counted) or not, so a start on the edge races the unit
 * leaving, and loses where the server holds the request till it answers: a limit of 10 requests in
 * flight behind HubSpot's headers, its X-HubSpot-RateLimit-Interval-Milliseconds the answers' own
 * 100 ms (https://developers.hubspot.com/docs/guides/apps/api-usage/usage-details), had the
 * next ten go at the instant the ten before them answered, each time: 20.5 % throttled
 * (src/lab/scenarios/probes/concurrency-10-hubspot-headers-20-workers-faults.json). An answered
 * unit keeps the edge: it costs nothing where each worker sends on its own answer (1 ms a round
 * is 5 % of a 20 ms one). A learned window is an estimate with its own slack and keeps it too: 1 ms
 * more there pushed a 60 s window's second-next start past the 2 min inline-wait cap (deferred).
 */
const SHOWN_WINDOW_EDGE_MS = 1;

type Slot = GovernorState["slots"][number];

/** When a slot's unit leaves the window: windowMs after its start, edgeMs later while its request is unanswered. */
function leavesAtMs(state: GovernorState, slot: Slot, windowMs: number, edgeMs: number): number {
  return slot[0] + windowMs + (edgeMs > 0 && state.inFlight.some(([seq]) => seq === slot[1]) ? edgeMs : 0);
}

/** Our own log: at most `limit` units started in any `windowMs` (see SHOWN_WINDOW_EDGE_MS). */
export function fromOwnLog(state: GovernorState, fromMs: number, units: number, limit: number, windowMs: number): number {
  const edgeMs = state.windowSource === "shown" ? SHOWN_WINDOW_EDGE_MS : 0;
  let used = 0;
  let first = state.slots.length;
  for (let i = state.slots.length - 1; i >= 0 && state.slots[i]![0] > fromMs - windowMs - edgeMs; i--) {
    const slot = state.slots[i]!;
    if (slot[0] + windowMs > fromMs || leavesAtMs(state, slot, windowMs, edgeMs) > fromMs) used += slot[2];
    first = i;
  }
  if (limit - used >= units) return fromMs;
  let leftAtMs = fromMs;
  for (let i = first; i < state.slots.length; i++) {
    const slot = state.slots[i]!;
    const slotLeavesAtMs = leavesAtMs(state, slot, windowMs, edgeMs);
    if (slotLeavesAtMs <= fromMs) continue;
    used -= slot[2];
    leftAtMs = Math.max(leftAtMs, slotLeavesAtMs);
    if (limit - used >= units) return leftAtMs;
  }
  const last = state.slots[state.slots.length - 1];
  return Math.max(fromMs, last ? leavesAtMs(state, last, windowMs, edgeMs) : fromMs);
}

/**
 * A rate learned from throttles where the budget refills continuously (a bucket whose rate the API
 * does not show): one unit every windowMs / limit after the last start, GCRA with no burst
 * (https://en.wikipedia.org/wiki/Generic_cell_rate_algorithm), so that workers are spaced and a
 * bucket that is empty is not hit by a burst.
 */
function fromLearnedBucket(state: GovernorState, fromMs: number, limit: number, windowMs: number): number {
  const last = state.slots[state.slots.length - 1];
  if (!last) return fromMs;
  return Math.max(fromMs, Math.ceil(last[0] + (last[2] * windowMs) / limit));
}

/** A fixed window known to refill fully at each reset: the window holding fromMs, or the next. */
/**
 * How far a reset read from whole-second fields may sit after the server's: the client measures
 * them against the server's Date, whose offset estimate moves by some tens of ms as answers narrow
 * it (src/engine/server-clock.ts assumes clocks agree within 25 ms where the evidence allows more,
 * and slow answers leave the estimate wider). A start this close before a
 * window's reset may have been counted in the window it opens.
 */
const RESET_DRIFT_MS = 100;

/** Units of our starts in the fixed window that begins at windowStartMs (or just before it: the clocks' drift). */
function unitsInWindow(state: GovernorState, windowStartMs: number): number {
  let used = 0;
  for (let i = state.slots.length - 1; i >= 0 && state.slots[i]![0] >= windowStartMs - RESET_DRIFT_MS; i--) used += state.slots[i]![2];
  return used;
}


/**
 * Whether a fixed window's count is still untold from one of requests in flight, and could be told:
 * the same count, shown with its reset, read the same way under both (see keepsLastUnitForTest).
 */
export function windowKindUntold(state: GovernorState, anchor: Anchor, limit: number): boolean {
  return state.concurrency === "unknown" && limit >= 2 && anchor.resetAtMs > 0 && state.unitsPerRequest === 1 && seesEveryClaim(state);
}

/**
 * A fixed window's last unit, while the window's kind is untold, waits for an answer of the window.
 * Read through resets alone, a limit on requests in flight whose count shows the next whole second
 * as its reset looks like a fixed window: granted the whole limit at each reset, every request of a
 * window goes before any of them answers, and nothing ever shows the count come back (a
 * concurrency limit of 3 with 20 ms answers behind GitHub's headers, whose first answers were
 * dropped connections, went at 3 per second for good: 51.65 x ideal, lab:random seed 201 #29). Sent
 * after an answer, the last unit's own reading tells them apart: a window's count only grows until
 * its reset (countOutgrewOurs rules a concurrency limit out), a count of requests in flight is back
 * down (countCameBack infers it). A fixed window pays one answer's time, once. That run now takes
 * 5.80 x (the first two windows, before the drops let the count be read as fixed, are still paced
 * so); ours only on 118 suite and probe scenarios and 270 random ones (seeds 11, 61, 121, 171, 191
 * to 231), throttles unchanged, two makespans 0.01 to 0.02 x longer (a sliding window read as
 * fixed whose last unit went an answer later), one 0.11 x shorter (probe sliding 8 per 1 s).
 */
function keepsLastUnitForTest(state: GovernorState, windowStartMs: number, used: number, units: number, limit: number): boolean {
  if (limit - used !== units || used === 0) return false;
  const out = new Set(state.inFlight.map(([seq]) => seq));
  for (let i = state.slots.length - 1; i >= 0 && state.slots[i]![0] >= windowStartMs - RESET_DRIFT_MS; i--) if (!out.has(state.slots[i]![1])) return false;
  return true;
}

const FIXED_WHY = "fixed window: the limit is back at each reset";

/** After the anchor's reset (fromMs >= resetAtMs): what is known of the next window. */
function afterReset(state: GovernorState, anchor: Anchor, fromMs: number, units: number): Earliest {
  const { windowMs } = state;
  // The reserve others took from under our claims stays theirs in the next window too.
  const limit = state.limit === null ? null : Math.max(units, state.limit - Math.ceil(state.reserveUnits));
  if (limit !== null && windowMs !== null && state.refill === "fixed") {
    // The fixed window fromMs falls in: the limit is back at each reset, laid end to end.
    const startMs = anchor.resetAtMs + Math.floor((fromMs - anchor.resetAtMs) / windowMs) * windowMs;
    const used = unitsInWindow(state, startMs);
    if (limit - used < units) return { atMs: startMs + windowMs, probe: false, why: FIXED_WHY };
    if (windowKindUntold(state, anchor, limit) && keepsLastUnitForTest(state, startMs, used, units, limit)) {
      return { answersDue: true, atMs: fromMs, why: "fixed window: its last unit waits for an answer, which tells a window from a limit on requests in flight" };
    }
    return { atMs: fromMs, probe: false, why: FIXED_WHY };
  }
  if (limit !== null && windowMs !== null) {
    // The window is known: our own log says when units come back (a fixed window shows itself
    // when the first request after the reset finds the limit back in full).
    const atMs = fromOwnLog(state, fromMs, units, limit, windowMs);
    return { atMs, probe: false, why: atMs > fromMs ? "own log: waits for units to leave the last window" : "own log: room in the last window" };
  }
  // The server said a unit is back by its reset; one request goes and its answer shows the rest.
  return { probeWanted: true, atMs: fromMs, why: "after the server's reset: one request learns the new budget" };
}

/**
 * The earliest start at or after fromMs for `units`. `probeWanted` means the model cannot tell
 * without asking the server: the caller grants one probe (if none is out) and holds the rest.
 */
export function earliestStart(state: GovernorState, fromMs: number, units: number, draw?: number): Earliest {
  const anchor = state.anchor;
  const { limit, windowMs } = state;
  if (anchor && state.refill === "bucket" && limit !== null && windowMs !== null) {
    const atMs = fromBucket(state, anchor, fromMs, units, limit, windowMs, draw);
    return { atMs, probe: false, why: atMs > fromMs ? "bucket: waits for the units to be restored" : "bucket: the units are there" };
  }
  // With no reset shown but a known window, every unit counted at the reading has left the
  // window one window later: that is the reading's reset at the latest.
  const resetAtMs = anchor ? anchor.resetAtMs || (windowMs !== null ? anchor.atMs + windowMs : 0) : 0;
  if (anchor && (resetAtMs === 0 || fromMs < resetAtMs)) {
    const reading = resetAtMs === anchor.resetAtMs ? anchor : { ...anchor, resetAtMs };
    const atMs = fromAnchor(state, reading, fromMs, units, draw);
    if (atMs !== null) return { atMs, probe: false, why: atMs > fromMs ? "the server's count: waits for units to leave the window" : "the server's count allows it" };
    if (resetAtMs === 0) return { probeWanted: true, atMs: fromMs, why: "the budget is spent and the server shows neither reset nor window: one request probes" };
    const next = afterReset(state, reading, resetAtMs, units);
    if (next.atMs - fromMs > 2 * roundTripMs(state) && answersMayFree(state, reading, fromMs, units)) {
      return { answersDue: true, atMs: next.atMs, why: "answers still out may show units free before the reset: asking again when they are in" };
    }
    if (next.atMs - fromMs > 2 * roundTripMs(state) && answersMayTellKind(state, reading, fromMs)) {
      return { answersDue: true, atMs: next.atMs, why: "fixed window: answers still out may show it is none, before its next window is granted" };
    }
    return next;
  }
  if (anchor) return afterReset(state, { ...anchor, resetAtMs }, fromMs, units);
  if (limit !== null && windowMs !== null && state.refill === "bucket") return { atMs: fromLearnedBucket(state, fromMs, limit, windowMs), probe: false, why: "learned rate: one unit at a time" };
  if (limit !== null && windowMs !== null) {
    const atMs = fromOwnLog(state, fromMs, units, limit, windowMs);
    const trialAtMs = windowTrialAtMs(state, fromMs, units, limit, windowMs, atMs);
    if (trialAtMs !== null) return { probeWanted: true, trial: true, atMs: trialAtMs, why: WINDOW_TRIAL_WHY };
    return { atMs, probe: false, why: "own log: learned limit per window" };
  }
  return { atMs: fromMs, probe: false, why: "no budget known: slow start" };
}

export const WINDOW_TRIAL_WHY = "a window learned from throttles alone may be shorter: one request tries the next window early, the others wait for its answer";

/** A trial must gain at least this many round trips (the others wait one for its answer). */
const WINDOW_TRIAL_MIN_GAIN_RTTS = 2;
/**
 * Nor less than this share of the window: a failed trial costs a throttle, and its request's backoff
 * doubles. With 20 ms answers, two round trips let trials go at 61 ms from a 10.1 s window. Since
 * the probes go at the documented lengths (observe.ts outlastProbeAtMs), a window of such a length
 * is bounded by it and the one before, often half of it, and every trial between fails: five at a
 * hundredth of the window, three at a twentieth; a window of no documented length is left up to a
 * twentieth or so long. Over the 2,134 sweep scenarios behind silence, with those probes: goals 349
 * -> 351, throttles 32,765 -> 32,541; with the probes spaced as before, no change (348 both).
 */
const WINDOW_TRIAL_MIN_GAIN_SHARE = 0.05;
/** Trials only where our log holds each unit as its own slot (older ones are merged, their times rounded later). */
const WINDOW_TRIAL_MAX_LIMIT = 128;

/**
 * A window learned from throttles alone (nothing shown, no wait told) is known only between two
 * bounds: a throttle proved it longer than the time from the episode's first unit to its send
 * (windowFloorMs), and the first success after them shorter than to its send (windowMs, which the
 * own log paces by). The probes between them are spaced a quarter of the time measured, so the
 * window is taken up to a quarter too long, for good: Stripe's silence over a fixed 100 per 10 s was
 * paced at about 12 s (1.20 x ideal). So when the log is full, the first start of the next window
 * is tried at the middle of the two bounds, alone, as a probe: its success starts the window there
 * (the window's units are taken to leave as soon as the success proved, observe.ts
 * windowTrialAnswered), its throttle raises the floor, and the others go at the upper bound as
 * before. A sliding log's success proves the window no longer than the trial's distance from the
 * window's first unit; a fixed window's proves its reset came by then; a throttle proves the window
 * longer in both. The bounds close by halves, at one throttle per failed trial, as a search would.
 * Returns the trial's start, or null where no trial is due.
 */
function windowTrialAtMs(state: GovernorState, fromMs: number, units: number, limit: number, windowMs: number, regularAtMs: number): number | null {
  const floorMs = state.windowFloorMs;
  if (floorMs <= 0 || floorMs >= windowMs || state.windowSource !== "inferred" || state.refill !== "window" || state.trialSeq !== 0 || limit > WINDOW_TRIAL_MAX_LIMIT) return null;
  if (regularAtMs <= fromMs) return null;
  const midMs = Math.ceil((floorMs + windowMs) / 2);
  const gainMs = windowMs - midMs;
  if (gainMs <= Math.max(WINDOW_TRIAL_MIN_GAIN_RTTS * roundTripMs(state), windowMs * WINDOW_TRIAL_MIN_GAIN_SHARE)) return null;
  const trialAtMs = fromOwnLog(state, fromMs, units, limit, midMs);
  return trialAtMs <= regularAtMs - gainMs / 2 ? trialAtMs : null;
}
