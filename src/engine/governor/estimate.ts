/**
 * A bucket whose rate is an estimate: Shopify REST's used/limit header names no rate, so its
 * documented rate for the bucket's size is taken (limit / 20 s,
 * https://shopify.dev/docs/api/admin-rest/usage/rate-limits), and the count the
 * server shows shortens it where units came back faster (shortenToProvenRefill). Where the count
 * shows only on 429s, a success shows nothing: at the estimated pace nothing is ever throttled, so
 * nothing ever shows the bucket refills faster. A sliding 10 per 10 s behind the header on its 429s
 * went at the documented 10 per 20 s all run (2.0 x ideal).
 *
 * So clean starts that the estimate paced (each waited for its refill) halve the window, from then
 * on: the rate is probed upward, as a TCP sender probes its path (RFC 5681 §3.1), two after the
 * reading, then a bucketful at each rate before the next. A 429 showing the count while probing ends
 * it: the window goes back to the last one paced cleanly, shortened only as far as the count since
 * proves, and each later probe waits for a bucketful.
 */
import { bucketFullAtMs } from "./model";
import { bucketRateEstimated, clampTime, MAX_FIGURE } from "./state";
import type { GovernorState, Observation } from "./types";

/**
 * An estimated bucket's window, shortened where provenUnits came back from sinceMs to sentAtMs (at
 * least two, the span taken a round trip longer: the server counted each request on arrival).
 */
export function shortenToProvenRefill(state: GovernorState, limit: number, windowMs: number, sinceMs: number, sentAtMs: number, provenUnits: number): void {
  if (provenUnits < 2 || sentAtMs <= sinceMs) return;
  const spanMs = sentAtMs - sinceMs + Math.max(1, state.rttMs);
  const provenWindowMs = Math.ceil((limit * spanMs) / provenUnits);
  if (provenWindowMs < windowMs) state.windowMs = Math.max(1, provenWindowMs);
}

/**
 * Paced starts before the first probe. The reading it follows showed the bucket empty, so only what
 * two starts' spacing refilled can mask a rate too fast; the probe itself must then last a bucketful
 * (below). After a probe has failed the bucket may be anywhere: a bucketful first.
 */
const FIRST_PROBE_UNITS = 2;

/** A start this share of its units' spacing after the one before it waited for the refill. */
const PACED_SHARE = 0.9;

/** Whether the answered claim's start was paced by the estimate: it came a unit's spacing after the claim before it. */
function pacedByEstimate(state: GovernorState, seq: number, units: number, limit: number, windowMs: number): boolean {
  const at = state.slots.findIndex(([, slotSeq]) => slotSeq === seq);
  if (at <= 0) return false;
  return state.slots[at]![0] - state.slots[at - 1]![0] >= (PACED_SHARE * units * windowMs) / limit;
}

/**
 * A success that showed no count, on an estimated bucket whose count shows only on throttles. Only
 * a start the estimate paced counts toward the clean bucketful: a burst from a full bucket (after a
 * Retry-After of a minute) says nothing of the rate, and probing after it cost a sliding 5 per 60 s
 * a 429 (and an attempt) every minute, and three jobs their last attempt.
 */
export function probeEstimatedRate(state: GovernorState, observation: Observation, units: number): void {
  const { limit, windowMs, anchor } = state;
  if (!bucketRateEstimated(state) || state.budgetOnSuccess || anchor === null || limit === null || windowMs === null) return;
  if (observation.seq <= anchor.seq || !pacedByEstimate(state, observation.seq, units, limit, windowMs)) return;
  state.pacedCleanUnits = Math.min(MAX_FIGURE, state.pacedCleanUnits + units);
  const firstProbe = state.probedFromWindowMs === 0 && !state.estimateProbeFailed;
  if (state.pacedCleanUnits < (firstProbe ? Math.min(limit, FIRST_PROBE_UNITS) : limit)) return;
  // The faster rate counts from now: what the slower one's claims took stays taken. Halved over the
  // whole time since the reading, the bucket would have refilled twice as much back then too, and
  // half a bucket went at once.
  const perMs = limit / windowMs;
  const fullAtMs = bucketFullAtMs(state, anchor, limit, perMs);
  const nowMs = clampTime(observation.nowMs);
  const tokens = limit - (fullAtMs - nowMs) * perMs;
  const atMs = tokens >= 0 ? nowMs : clampTime(Math.ceil(fullAtMs - limit / perMs));
  state.anchor = { remaining: Math.max(0, Math.min(limit, Math.floor(tokens))), seq: state.seq, atMs, resetAtMs: 0, lateUnits: 0, answeredAtMs: nowMs, ownOutAtSend: anchor.ownOutAtSend };
  state.probedFromWindowMs = windowMs;
  state.windowMs = Math.max(1, Math.round(windowMs / 2));
  state.pacedCleanUnits = 0;
}

/**
 * A throttle that showed the count (its reading already taken): the clean bucketful starts again,
 * and a probe ends at the window paced cleanly before it, shortened as far as the count proves.
 */
export function estimateThrottled(state: GovernorState, observation: Observation): void {
  state.pacedCleanUnits = 0;
  const { limit } = state;
  if (state.probedFromWindowMs === 0 || limit === null) return;
  state.windowMs = Math.max(state.windowMs ?? 0, state.probedFromWindowMs);
  state.probedFromWindowMs = 0;
  state.estimateProbeFailed = true;
  if (state.refillSinceMs > 0) shortenToProvenRefill(state, limit, state.windowMs, state.refillSinceMs, observation.sentAtMs, state.refillSeenUnits - 1);
}
