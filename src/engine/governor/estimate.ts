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
import { bucketRateEstimated, clampTime, MAX_FIGURE, windowAtRateMs } from "./state";
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

/** How long after the start before it in the log the answered claim started, or null where it is first or not in the log. */
function gapBeforeMs(state: GovernorState, seq: number): number | null {
  const at = state.slots.findIndex(([, slotSeq]) => slotSeq === seq);
  return at <= 0 ? null : state.slots[at]![0] - state.slots[at - 1]![0];
}

/** Whether the answered claim's start was paced by the estimate: it came a unit's spacing after the claim before it. */
function pacedByEstimate(state: GovernorState, seq: number, units: number, limit: number, windowMs: number): boolean {
  const gapMs = gapBeforeMs(state, seq);
  return gapMs !== null && gapMs >= (PACED_SHARE * units * windowMs) / limit;
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
  if (limit === null) return;
  if (state.probedFromWindowMs === 0) {
    floorThrottled(state, observation, limit);
    return;
  }
  state.windowMs = Math.max(state.windowMs ?? 0, state.probedFromWindowMs);
  state.probedFromWindowMs = 0;
  state.estimateProbeFailed = true;
  if (state.refillSinceMs > 0) shortenToProvenRefill(state, limit, state.windowMs, state.refillSinceMs, observation.sentAtMs, state.refillSeenUnits - 1);
}

/**
 * A 429 on a claim granted after the provider's slowest documented rate began to pace a bucket
 * smaller than it documents (observe.ts applyShape), or after the last such lesson: the floor was
 * too fast, and the window doubles, up to the documented rate's for the size, once per round of
 * claims (as a TCP sender halves its rate once per window of losses, RFC 5681 §3.1,
 * https://www.rfc-editor.org/rfc/rfc5681#section-3.1). A claim granted before it (the burst that
 * drained the bucket before the first reading) is no lesson. Paced at the floor all run, a bucket of
 * 10 per 60 s behind the count took 84 429s for 80 jobs (lab:random seed 901 #26; 10 with this).
 */
function floorThrottled(state: GovernorState, observation: Observation, limit: number): void {
  const rate = observation.budget?.restoreEstimated === true ? observation.budget.restorePerSecond : null;
  if (!bucketRateEstimated(state) || state.estimateFloorSeq === 0 || observation.seq <= state.estimateFloorSeq || rate === null || rate === undefined || !(rate > 0) || state.windowMs === null) return;
  const documentedMs = windowAtRateMs(limit, rate);
  if (state.windowMs >= documentedMs) return;
  state.windowMs = Math.min(documentedMs, state.windowMs * 2);
  state.estimateFloorSeq = Math.max(1, state.seq);
}

/** A silent rate's start counts as paced between PACED_SHARE and this share of a unit's spacing after the start before it (later is idleness, not the pace). */
const SILENT_PACED_MAX_SHARE = 1.5;
/**
 * A probe speeds a silent rate up by one unit per window, and by at most half: a limit of one
 * would double at each clean start.
 */
const SILENT_PROBE_MIN_UNITS = 2;
/** After a probed silent rate was throttled, this many bucketfuls paced cleanly before the next probe. */
const SILENT_BUCKETFULS_AFTER_FAILED_PROBE = 8;

/**
 * A rate learned from throttles alone (nothing shown, read as a bucket): each lesson only slows it
 * down (relearn), so one that came out below the server's refill stayed there for good: a bucket of
 * 15 per 10 s behind Stripe's silence was paced at 7 per 6 s for 24 s without a throttle (1.30 x
 * ideal), a bucket of 5 per 10 s behind Slack's 429 at 1.72 x. A bucketful of starts paced cleanly
 * at it (each about a unit's spacing after the last: demand set the pace, not idleness) adds one
 * unit per window, as a TCP sender probes its path in congestion avoidance (RFC 5681 §3.1,
 * https://www.rfc-editor.org/rfc/rfc5681#section-3.1). A throttle before the next clean bucketful
 * sends it back to the rate paced cleanly (silentProbeFailed), and each later probe waits for
 * SILENT_BUCKETFULS_AFTER_FAILED_PROBE of them. Ours only over 599 virtual scenarios: 25 sooner
 * (9 by 0.1 x ideal or more: seed 171 #6 1.30 -> 1.00 x, seed 121 #20 1.72 -> 1.12 x), 6 later (at
 * most 1.05 -> 1.11 x), 153 more throttles of 7,088, and one job of a 15-job run deferred after
 * its last attempt.
 */
export function probeSilentRate(state: GovernorState, observation: Observation, units: number): void {
  const { limit, windowMs } = state;
  if (state.refill !== "bucket" || state.anchor !== null || state.budgetOnSuccess || state.windowSource === "shown" || limit === null || windowMs === null) return;
  if (observation.seq <= state.learnedAtSeq) return;
  const gapMs = gapBeforeMs(state, observation.seq);
  const spacingMs = (units * windowMs) / limit;
  if (gapMs === null || gapMs < PACED_SHARE * spacingMs || gapMs > SILENT_PACED_MAX_SHARE * spacingMs) return;
  state.pacedCleanUnits = Math.min(MAX_FIGURE, state.pacedCleanUnits + units);
  if (state.pacedCleanUnits < (state.estimateProbeFailed ? SILENT_BUCKETFULS_AFTER_FAILED_PROBE : 1) * limit) return;
  state.pacedCleanUnits = 0;
  state.probedFromWindowMs = windowMs;
  state.windowMs = Math.max(1, Math.round(windowMs / (1 + 1 / Math.max(limit, SILENT_PROBE_MIN_UNITS))));
}

/** The rate a silent throttle found, before its lesson was taken. */
export interface SilentRate {
  limit: number | null;
  refill: GovernorState["refill"];
}

/**
 * A fresh silent throttle while a probed rate is not yet confirmed by a clean bucketful: the probe
 * was too fast. The rate goes back to the one paced cleanly before it (the lesson just taken would
 * have cut below it), and later probes wait longer.
 */
export function silentProbeFailed(state: GovernorState, before: SilentRate): void {
  if (state.anchor !== null || state.probedFromWindowMs === 0 || before.limit === null) return;
  state.limit = before.limit;
  state.refill = before.refill;
  state.windowMs = state.probedFromWindowMs;
  state.probedFromWindowMs = 0;
  state.estimateProbeFailed = true;
}
