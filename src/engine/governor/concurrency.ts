/**
 * A budget that counts requests in flight, not requests per window. Some APIs limit concurrent
 * requests (Xero's 5 per tenant, Dataverse's 52, QuickBooks' 10) and some show that count as a
 * remaining budget: the IETF RateLimit-Policy names it with qu="concurrent-requests"
 * (https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/, "Quota Unit"), while an
 * X-RateLimit family shows it like any other budget. Read as a rate, such a budget paces requests
 * for a window that does not exist (one limit's worth per announced reset, five times too slow at
 * a 200 ms answer and a whole-second reset). Held as what it is, it is an in-flight cap: a request
 * goes as soon as an answer frees a place.
 *
 * Without qu, the count itself tells: a request sent after an earlier answer came, reading the same
 * reset, reached the server after the counted one; a window's count (fixed, or sliding with
 * windows longer than the gap between them) can only have fallen by then, while an in-flight count
 * is back up. A bucket that refills between two requests shows the same, so the inference is only
 * kept while nothing contradicts it: the first throttle rules it out for good (alone under a cap of
 * the limit, a concurrency limit never throttles), and the scope relearns the budget by probing.
 * A count shown with no reset at all (Shopify REST's used/limit) is read as a bucket at its
 * documented rate, and tells the same when it came back faster than that rate can
 * (estimatedBucketCount).
 *
 * With no count shown at all, throttles tell it (concurrency "silent", learnSilentConcurrency): the
 * cap is then an estimate, lowered by each throttle and ruled out only at one.
 */
import { heldSlots, seesEveryClaim } from "./model";
import { bucketRateEstimated, bucketWindowBoundMs, clampTime, MAX_IN_FLIGHT, RESET_DRIFT_MARGIN_MS, ROUNDING_MS, windowIsGuessed } from "./state";
import type { Anchor, GovernorState, Observation, ObservedBudget } from "./types";

export function holdsConcurrency(state: GovernorState): boolean {
  return state.concurrency === "shown" || state.concurrency === "testing" || state.concurrency === "inferred" || state.concurrency === "silent";
}

/** A concurrency limit read from the count (under test or tested), which a count or a throttle may still disprove. */
export function inferenceHeld(state: GovernorState): boolean {
  return state.concurrency === "testing" || state.concurrency === "inferred";
}

/** Claims granted before the last lesson (after its throttled one) that have not answered yet. */
export function lessonClaimsOut(state: GovernorState): boolean {
  return state.inFlight.some(([seq]) => seq > state.lessonSeq && seq <= state.learnedAtSeq);
}

/** Above this share of what the learned rate explains, successes after a lesson's throttle are no rate's. */
const SILENT_EVIDENCE_RATIO = 1.2;

/**
 * Our successes sent within a round trip after the lesson's throttled request (at or after its
 * send) among the claims granted before the lesson was read, as [send, units] in send order.
 */
function admittedAfterLesson(state: GovernorState): Array<[number, number]> {
  const out = new Set(state.inFlight.map(([seq]) => seq));
  const untilMs = state.lessonSentAtMs + Math.max(1, state.rttMs);
  const admitted: Array<[number, number]> = [];
  for (const [atMs, seq, slotUnits] of state.slots) {
    if (seq <= state.lessonSeq || seq > state.learnedAtSeq || out.has(seq) || atMs < state.lessonSentAtMs || atMs > untilMs) continue;
    admitted.push([atMs, slotUnits]);
  }
  return admitted.sort((a, b) => a[0] - b[0]);
}

/**
 * Whether the successes after the lesson, counted up to some instant of their sends, are well
 * above what the rate it learned gives back by then (plus one unit; a limit already raised by
 * them, applyOk, taken without them). Counted to each instant in turn, not only to the last: the
 * successes sent with the throttled request itself (counted ahead of it by the server) show a
 * concurrency limit before the next round's sends, a round trip on, stretch the time the rate is
 * given. NetSuite's 15 in flight with 400 ms answers, 40 workers: 14 sent with the throttled one,
 * read with one more a round trip later as 15 over 600 ms, within 1.2 x the 13 that a rate of 40
 * per assumed 2 s gives back, so the limit was paced as a rate for three lessons (1.38 x ideal; 1.10 x).
 */
function admittedBeyondRate(state: GovernorState, admitted: ReadonlyArray<[number, number]>, limit: number, windowMs: number): boolean {
  let units = 0;
  for (let i = 0; i < admitted.length; i++) {
    const [atMs, slotUnits] = admitted[i]!;
    units += slotUnits;
    if (i + 1 < admitted.length && admitted[i + 1]![0] === atMs) continue;
    const spanMs = atMs - state.lessonSentAtMs + Math.max(1, state.rttMs / 2);
    const lessonLimit = !windowIsGuessed(state) && state.windowStartMs > state.lessonSentAtMs ? Math.max(1, limit - units) : limit;
    if (units >= 2 && units > SILENT_EVIDENCE_RATIO * ((lessonLimit * spanMs) / windowMs + 1)) return true;
  }
  return false;
}

/**
 * A concurrency limit that shows nothing (no budget, a generic 429, perhaps a Retry-After) is
 * learned from throttles as a rate, and the rate is its slow start's: 10 in flight with 100 ms
 * answers (100 per s) read as 20 per s took 9.5 x ideal. A rate's budget, once a throttle found
 * it spent, admits only what comes back after (a window's units leaving, a bucket's refill), while
 * a concurrency limit admits one more request per answer at once. So when every claim out at a
 * lesson has answered, the successes sent within a round trip after the throttled one are
 * compared with what the learned rate gives back in that time (admittedBeyondRate): well above it
 * (SILENT_EVIDENCE_RATIO, and at least two), the budget is taken as a concurrency limit of those
 * successes, all of them (concurrency "silent"). Two
 * suffice: at three, 2 in flight behind a bare 429 (6 writers, 100 ms answers) was paced as 3 per
 * assumed second for good (6.45 x ideal), and no scenario of the lab's 332 read a rate so at two.
 * A fixed window whose next window began just after the throttle can look so too; its throttles
 * then lower the cap to one and rule the reading out (silentThrottle).
 */
export function learnSilentConcurrency(state: GovernorState, observation: Observation): void {
  const { limit, windowMs } = state;
  if (state.concurrency !== "unknown" || state.anchor !== null || limit === null || windowMs === null || state.lessonSeq === 0) return;
  if (observation.seq <= state.lessonSeq || observation.seq > state.learnedAtSeq) return;
  if (lessonClaimsOut(state)) return;
  const admitted = admittedAfterLesson(state);
  if (!admittedBeyondRate(state, admitted, limit, windowMs)) return;
  const units = admitted.reduce((sum, [, slotUnits]) => sum + slotUnits, 0);
  state.concurrency = "silent";
  state.inFlightCap = Math.min(MAX_IN_FLIGHT, Math.max(1, Math.floor(units / state.unitsPerRequest)));
  // Where the throttles tell a wait (Slack's Retry-After: 1), finding the cap's top would cost the
  // whole scope that wait: the lower bound is kept.
  const waitsWereOurs = windowIsGuessed(state);
  state.inFlightCapGrows = waitsWereOurs;
  // Where they told none, the scope's hold is the lesson's own backoffs, laid while it was read as
  // a rate: a concurrency limit frees a place when an answer comes, not at a time, so the hold ends
  // here (each throttled request still sleeps its own backoff). Kept, 10 in flight behind a generic
  // 429 with 35 workers and 50 ms answers stood idle from the lesson (300 ms) to 776 ms: 2.87 ->
  // 1.59 x ideal (lab:random seed 121 #26).
  if (waitsWereOurs && state.notBeforeMs > observation.nowMs) state.notBeforeMs = clampTime(observation.nowMs);
  forgetRate(state);
  // The claims granted under the rate (starts laid ahead) are that same lesson: their throttles leave the cap.
  state.learnedAtSeq = state.seq;
}

/** A budget read as a rate turns out to be a concurrency limit: the rate's window, reserve and probe go. */
function forgetRate(state: GovernorState): void {
  state.limit = null;
  state.windowMs = null;
  state.windowSource = null;
  state.refill = "window";
  state.reserveUnits = 0;
  state.othersPerMs = 0;
  state.probe = null;
  state.okInWindow = 0;
  state.windowStartMs = 0;
}

/**
 * A throttle whose answer names a limit on requests in flight (limitType "concurrency": Stripe's
 * Stripe-Rate-Limited-Reason global-concurrency, https://docs.stripe.com/rate-limits; Twilio's
 * 20429; Mailchimp's "simultaneous connections"; a 429 body that says concurrent, dialects/generic.ts)
 * where no count is shown: the server has said what the throttles learn otherwise (learnSilentConcurrency).
 */
export function toldConcurrency(state: GovernorState, observation: Observation, claimsAllSeen: boolean): boolean {
  // Executions blind to each other (cross-flow state) cannot keep a cap between them: for them the
  // throttled request's backoff, held over the scope, is what spreads the next ones. Held as a cap,
  // 35 executions over Stripe's 5 in flight were throttled 60 times in 160 calls (33 with the backoff held).
  if (!claimsAllSeen) return false;
  return observation.limitType === "concurrency" && observation.budget === null && state.anchor === null && (state.concurrency === "unknown" || state.concurrency === "silent");
}

/**
 * How many others of ours were out when a request sent at sentAtMs reached the server: those still
 * unanswered, or, where more, the counted ones (our log) sent within a round trip before it. The
 * answers of a burst come in any order, and those applied before a throttle are no longer in flight:
 * 16 sent together under a limit of 10, the ten successes applied first, the first throttle found 5
 * in flight, and the cap went to 1 with the lesson's other throttles.
 */
function oursOutAtSend(state: GovernorState, sentAtMs: number, inFlightBefore: number): number {
  const fromMs = sentAtMs - Math.max(1, state.rttMs);
  let units = 0;
  for (const [atMs, , slotUnits] of state.slots) if (atMs > fromMs && atMs <= sentAtMs) units += slotUnits;
  return Math.max(inFlightBefore - 1, Math.floor(units / state.unitsPerRequest));
}

/**
 * A told concurrency throttle (toldConcurrency). The first of a lesson sets the cap to the others of
 * ours out when it reached the server (oursOutAtSend), and every further throttle of the claims out then
 * lowers it by one more: each was one over the limit too. A burst sent together is so read at its
 * limit: 16 out, 10 admitted, 6 throttled is a cap of 10. Taken for a rate's first lesson instead
 * (the throttle said nothing else), the cap stayed the slow start's 15 and the throttled requests'
 * own backoffs held the whole scope: ElevenLabs' 10 in flight with 1.5 s answers, 16 workers, 8.3 x
 * ideal. Held so, a place frees at an answer, not at a time, and the cap grows no more: the
 * throttles found its top.
 */
export function toldConcurrencyThrottle(state: GovernorState, observation: Observation, inFlightBefore: number): void {
  if (state.concurrency === "silent" && observation.seq <= state.learnedAtSeq) {
    state.inFlightCap = Math.max(1, (state.inFlightCap ?? 1) - 1);
    return;
  }
  const cap = Math.max(1, Math.min(state.inFlightCap ?? MAX_IN_FLIGHT, oursOutAtSend(state, observation.sentAtMs, inFlightBefore)));
  if (state.concurrency === "unknown") {
    // The scope's hold was the throttled requests' own backoffs, laid while the limit was read as a rate.
    if (windowIsGuessed(state) && state.notBeforeMs > observation.nowMs) state.notBeforeMs = clampTime(observation.nowMs);
    forgetRate(state);
    state.concurrency = "silent";
  }
  state.inFlightCap = cap;
  state.inFlightCapGrows = false;
  state.learnedAtSeq = state.seq;
}

/**
 * The successes right after a lesson are a lower bound of a silent concurrency limit (some places
 * freed while none of ours was on its way): until a throttle shows where it is, the cap grows by
 * one per cap's worth of successes answered while it was full, a round trip at a time (TCP's
 * congestion avoidance, https://www.rfc-editor.org/rfc/rfc5681#section-3.1), so its overshoot is a
 * throttle or two, not a doubling's. The successes are counted in okInWindow, which no window uses
 * under a concurrency limit.
 */
export function growSilentCap(state: GovernorState, units: number, inFlightBefore: number): void {
  const cap = state.inFlightCap;
  if (!state.inFlightCapGrows || cap === null || inFlightBefore < cap) return;
  state.okInWindow += units;
  if (state.okInWindow < cap * state.unitsPerRequest) return;
  state.okInWindow = 0;
  state.inFlightCap = Math.min(MAX_IN_FLIGHT, cap + 1);
}

/**
 * A throttle under a silent concurrency limit: the cap was too high. It becomes one less, once for
 * all the claims out under it (their throttles are one lesson), and grows no more. At a cap of one,
 * a throttle says the budget is no concurrency limit after all: the reading is ruled out for good
 * and the scope relearns.
 */
export function silentThrottle(state: GovernorState, observation: Observation): void {
  if (observation.seq <= state.learnedAtSeq) return;
  state.inFlightCapGrows = false;
  const cap = state.inFlightCap ?? 1;
  if (cap <= 1) {
    state.concurrency = "ruled-out";
    state.inFlightCap = null;
    state.learnedAtSeq = state.seq;
    return;
  }
  state.inFlightCap = cap - 1;
  // The claims already out were granted under the cap just lowered: their throttles are this same lesson.
  state.learnedAtSeq = state.seq;
}

/**
 * A throttle under a concurrency limit: the cap goes one under what was in flight when it came,
 * and no higher than the limit a count shows. Once per lesson, as a TCP sender halves its window
 * once per round trip of losses (RFC 5681 §3.1, https://www.rfc-editor.org/rfc/rfc5681#section-3.1):
 * the claims already out were granted under the cap it replaced, and each of their throttles,
 * answered as the burst drains, found fewer of ours in flight. Lowered at every one, a limit of 25
 * shown on IETF fields on 429s alone (qu="concurrent-requests"), 50 workers, was held at 3 in
 * flight for the rest of the run (lab:random seed 1601 #4).
 */
export function concurrencyThrottle(state: GovernorState, observation: Observation, inFlightBefore: number): void {
  if (observation.seq <= state.learnedAtSeq && state.inFlightCap !== null) return;
  state.inFlightCap = Math.max(1, Math.min(state.inFlightCap ?? MAX_IN_FLIGHT, inFlightBefore - 1));
  state.inFlightCapGrows = false;
  state.learnedAtSeq = state.seq;
}

/** Claims of ours still unanswered that had started by atMs (a claim's lease ends leaseMs after its start). */
export function startedBy(state: GovernorState, atMs: number, leaseMs: number): number {
  let started = 0;
  for (const [, untilMs] of state.inFlight) if (untilMs - leaseMs <= atMs) started += 1;
  return started;
}

/**
 * A count shown with no reset (Shopify REST's used/limit) read as a bucket whose rate is only an
 * estimate (Shopify's documented rate for the size shown). Such a count that came back between two
 * sends faster than the estimate gives back a quarter of a unit is no refill at that rate: at
 * Shopify's own rates the count comes back no faster than documented
 * (https://shopify.dev/docs/api/admin-rest/usage/rate-limits), so a count that does is
 * a concurrency limit behind the same header, or a bucket as fast as one to us. Read as the
 * estimated bucket, a concurrency limit of 15 with 20 ms answers, 35 workers, waited 1.3 s for each
 * unit the estimate said would come back (14.1 x ideal; 1.14 x read as a concurrency limit), and of
 * 25 with faults 4.82 -> 1.22 x. A quarter, not a whole unit: the count is shown rounded. A faster
 * bucket than documented (a lab's token bucket of 40 per 3 s behind the header, 200 ms answers)
 * gave back a unit within the 200 ms while the estimate gave 0.4: read as a concurrency limit, its
 * overshoot was throttled 243 times before the reading was ruled out.
 */
const ESTIMATED_REFILL_BETWEEN_SENDS_MAX_UNITS = 0.25;

function estimatedBucketCount(state: GovernorState, previous: Anchor, budget: ObservedBudget): boolean {
  return bucketRateEstimated(state) && previous.resetAtMs === 0 && budget.resetAtMs === null;
}

/**
 * The later reading names the earlier one's reset, and was counted before it. Sent at or just
 * before the earlier reading's reset, it may be the next window's first: a reset read against the
 * server's Date drifts by some tens of ms (a 1 s window's next reset can read 920 ms on, within a
 * second of the last), and a fresh window's count is back up too.
 */
function sameResetBefore(previous: Anchor, observation: Observation, budget: ObservedBudget): boolean {
  if (previous.resetAtMs === 0 || budget.resetAtMs === null || Math.abs(budget.resetAtMs - previous.resetAtMs) >= ROUNDING_MS) return false;
  return observation.sentAtMs < previous.resetAtMs - RESET_DRIFT_MARGIN_MS;
}

/** The count came back up between two readings of the same reset, with the later request sent after the earlier answer. */
function countCameBack(state: GovernorState, observation: Observation, budget: ObservedBudget, leaseMs: number): boolean {
  const previous = state.anchor;
  if (state.concurrency !== "unknown" || previous === null || observation.kind !== "ok") return false;
  const estimated = estimatedBucketCount(state, previous, budget);
  if (state.refill === "bucket" && !estimated) return false;
  if (observation.seq <= previous.seq || observation.sentAtMs < previous.answeredAtMs) return false;
  if (!estimated && !sameResetBefore(previous, observation, budget)) return false;
  if (budget.remaining < previous.remaining || state.limit === null || state.unitsPerRequest !== 1 || !seesEveryClaim(state)) return false;
  // A count of requests in flight holds no more than ours still out when each was sent, itself
  // included (a bucket that refilled while a burst drained it shows more than that).
  if (state.limit - previous.remaining > previous.ownOutAtSend || state.limit - budget.remaining > oursPossiblyOut(state, previous, observation, state.limit, leaseMs)) return false;
  // Behind a count with no reset, the estimated rate tells whether a refill could bring it back:
  // the documented one, not a floor it may be paced at (observe.ts applyShape), which gives back a
  // quarter unit within one round trip of 200 ms for a count of 8 (read as the floor's bucket, a
  // concurrency limit of 8, 12 workers, went at its pace: lab:random seed 1771 #6, 1.08 -> 2.50 x).
  if (estimated) {
    const documentedMs = budget.restorePerSecond !== null && budget.restorePerSecond > 0 ? (state.limit * 1000) / budget.restorePerSecond : 0;
    return state.windowMs !== null && ((observation.sentAtMs - previous.atMs) * state.limit) / Math.max(state.windowMs, documentedMs) < ESTIMATED_REFILL_BETWEEN_SENDS_MAX_UNITS;
  }
  // A sliding window gives a unit back between the two sends only if one the server counted at the
  // earlier reading was sent at least a window before the later send. When all it counted were ours
  // (our most recent limit - remaining), that window is at most (later send - the oldest of them):
  // shorter than the scope's window (or than a second, the unit resets are given in), it is no window.
  // An inferred window is an upper bound read through whole-second resets: up to a second too long.
  // A fixed window's length is the distance between two resets, not such a bound; read so, it may
  // still be a sliding one joined at its reset, whose units leave no sooner than half of it later.
  const held = heldSlots(state, previous);
  if (held.last < 0 || held.ownUnits < state.limit - previous.remaining) return false;
  const windowMs = state.windowMs === null ? ROUNDING_MS : state.windowSource === "shown" ? state.windowMs : state.refill === "fixed" ? state.windowMs / 2 : state.windowMs - ROUNDING_MS;
  return observation.sentAtMs - state.slots[held.first]![0] < windowMs;
}

/**
 * The most of ours that can have been in flight when a request sent after the previous reading's
 * answer was counted: those out at that reading's send but it (answered), and every claim started
 * since, itself included; or, where more, those still unanswered that had started by its send.
 * Those still unanswered alone are too few: an answer applied before this one, though it came
 * after this request was counted (a burst's answers on one instant), is out of that list.
 */
function oursPossiblyOut(state: GovernorState, previous: Anchor, observation: Observation, limit: number, leaseMs: number): number {
  let startedSince = 0;
  for (const [atMs, seq, units] of state.slots) if (atMs <= observation.sentAtMs && (atMs > previous.atMs || seq > previous.seq)) startedSince += units;
  return Math.max(startedBy(state, observation.sentAtMs, leaseMs) + 1, Math.max(previous.ownOutAtSend, limit - previous.remaining) - 1 + startedSince);
}

/**
 * A request sent after an earlier reading of the same reset was answered, whose count holds more
 * than ours could have had in flight when it was counted: those out at the earlier send (but that
 * one, answered) and every claim started since, itself included. A count of requests in flight
 * cannot (nothing else spends it: countCameBack's own conditions), a window's can: it still holds
 * what was answered. Such a budget is a rate, and never read as a concurrency limit after. This is
 * how a fixed window's kept-back last unit tells (model.ts keepsLastUnitForTest).
 */
function countOutgrewOurs(state: GovernorState, observation: Observation, budget: ObservedBudget, leaseMs: number): boolean {
  const previous = state.anchor;
  const limit = budget.limit ?? state.limit;
  if (state.concurrency !== "unknown" || previous === null || observation.kind !== "ok" || limit === null || state.refill === "bucket") return false;
  if (state.unitsPerRequest !== 1 || !seesEveryClaim(state)) return false;
  if (observation.seq <= previous.seq || observation.sentAtMs < previous.answeredAtMs || !sameResetBefore(previous, observation, budget)) return false;
  return limit - budget.remaining > oursPossiblyOut(state, previous, observation, limit, leaseMs);
}

/**
 * A count shown only on throttles (GitHub's X-RateLimit on its 403, a 429's IETF fields alone), first
 * read spent on a request sent with more of ours in flight than it counts, after twice that count
 * of ours had already succeeded: a window of that limit admits no more than it until it turns, and
 * the slow start, doubling from one request, spends a rate's limit within one of its windows (a
 * rate's first throttle comes after at most the limit and the half of it the window before took).
 * A count of requests in flight does: it is read as one (inferred), whose cap is the count and
 * which the next throttle of a claim granted after it rules out for good. Read as a window of no
 * known length instead, with no count on its successes, each success after the reset let two go
 * (observe.ts spentReadingAnswered): a concurrency limit of 10 behind GitHub's 403, 20 workers,
 * went two at a time (4.55 x ideal; 1.22 x read so), one of 8 with 12 workers 3.81 -> 1.35 x.
 */
function throttledPastTwiceTheCount(state: GovernorState, observation: Observation, budget: ObservedBudget, outAtGrant: number): boolean {
  const limit = budget.limit;
  if (state.concurrency !== "unknown" || observation.kind !== "throttled" || state.budgetOnSuccess || state.anchor !== null || state.limit !== null) return false;
  if (limit === null || limit < 1 || budget.remaining > 0 || state.unitsPerRequest !== 1 || !seesEveryClaim(state)) return false;
  return outAtGrant > limit && state.okInWindow >= 2 * limit;
}

/**
 * A budget answer while the scope holds (or now learns) a concurrency limit: the cap is the limit,
 * and the window model is dropped (no rate paces the scope). Returns false when the budget is a rate.
 */
export function applyConcurrentBudget(state: GovernorState, observation: Observation, budget: ObservedBudget, leaseMs: number, outAtGrant: number, answersTest: boolean): boolean {
  const before = state.concurrency;
  if (budget.concurrent) state.concurrency = "shown";
  else if (throttledPastTwiceTheCount(state, observation, budget, outAtGrant)) {
    state.concurrency = "inferred";
    // The claims already out were granted before the inference: their throttles are this same lesson.
    state.learnedAtSeq = state.seq;
  } else if (countOutgrewOurs(state, observation, budget, leaseMs)) state.concurrency = "ruled-out";
  else if (countCameBack(state, observation, budget, leaseMs)) state.concurrency = "testing";
  else if (state.concurrency === "testing" && answersTest && observation.kind === "ok") {
    if (countHoldsMoreThanOurs(state, observation, budget, leaseMs, outAtGrant) || resetOutlastsAnswers(state, observation, budget)) ruleOutForRefill(state, observation, budget);
    else state.concurrency = "inferred";
  } else if (inferenceHeld(state) && (countsMoreThanOurs(state, observation, budget, leaseMs, outAtGrant) || resetOutlastsAnswers(state, observation, budget))) ruleOutForRefill(state, observation, budget);
  if (!holdsConcurrency(state)) return false;
  // A probe out to learn a window's budget (granted after its reset) holds the others for nothing now.
  if (before !== state.concurrency) state.probe = null;
  if (before !== state.concurrency && state.concurrency === "testing") dropGrantsAhead(state, observation.nowMs);
  const limit = budget.limit ?? state.limit ?? state.inFlightCap ?? budget.remaining + 1;
  state.inFlightCap = Math.min(MAX_IN_FLIGHT, Math.max(1, Math.floor(limit)));
  state.inFlightCapGrows = false;
  state.limit = null;
  state.windowMs = null;
  state.windowSource = null;
  state.refill = "window";
  state.anchor = state.concurrency === "testing" ? readingUnderTest(before === "testing" ? state.anchor : null, observation, budget, before !== "testing") : null;
  state.reserveUnits = 0;
  state.othersPerMs = 0;
  return true;
}

/**
 * While a concurrency limit is under test, the latest count read: what it still allows after the
 * claims since is spent safely whichever the count is (claim.ts countAllowsEitherWay), and only a
 * count spent waits for the test (4 workers under 10 places never do). Once spent, none is kept
 * (null): the test is due, and a later count, freed by answers only under a concurrency limit,
 * must not put it off for good.
 */
function readingUnderTest(latest: Anchor | null, observation: Observation, budget: ObservedBudget, first: boolean): Anchor | null {
  if (!first && latest === null) return null;
  if (observation.kind !== "ok" || (latest !== null && observation.seq <= latest.seq)) return latest;
  return { remaining: budget.remaining, seq: observation.seq, atMs: observation.sentAtMs, resetAtMs: 0, lateUnits: 0, answeredAtMs: observation.nowMs, ownOutAtSend: 1 };
}

/**
 * Grants the window's model laid ahead (a probe at its reset, spaced starts) would hold places under
 * the cap until their start: given back, their holders claim afresh and wait for the test's answer
 * (heldForConcurrencyTest). Kept, a grant at the next second's reset took one of 4 places for half
 * a second after the test told a concurrency limit (its holder had spent its claims again on the
 * answers before the test): 4 in flight, 8 workers, 1.06 x ideal; 1.04 x given back.
 */
function dropGrantsAhead(state: GovernorState, nowMs: number): void {
  const ahead = new Set<number>();
  for (const [atMs, seq] of state.slots) if (atMs > nowMs) ahead.add(seq);
  if (ahead.size === 0) return;
  state.slots = state.slots.filter(([, seq]) => !ahead.has(seq));
  state.inFlight = state.inFlight.filter(([seq]) => !ahead.has(seq));
}

/**
 * An answer that counts more than ours in flight when it was sent (itself included) disproves an
 * inferred concurrency limit before any throttle does: a bucket that only looked like one while it
 * was full drains with every request, whether or not the earlier ones were answered. Told only when
 * no other answer came since it was sent. Ours out at its send are those out when it was granted,
 * itself included (kept with each claim), or those still out now that had started by then, if more:
 * the answers of the instant it was sent may leave the server's count only after it arrived, and
 * counted only by what was still out at its answer, a worker backing off after a 503 made ours one
 * fewer than the count, and GitHub's headers over a limit of 15 in flight (12 workers, 2 % faults)
 * were read as a window of 15 per second: 1.72 x ideal, 1.26 x with the count at grant.
 */
function countsMoreThanOurs(state: GovernorState, observation: Observation, budget: ObservedBudget, leaseMs: number, outAtGrant: number): boolean {
  if (state.lastAnsweredAtMs > observation.sentAtMs) return false;
  return countHoldsMoreThanOurs(state, observation, budget, leaseMs, outAtGrant);
}

/**
 * The count against ours out when the request was sent, itself included. The test of an inference
 * is judged so whatever answers came since it was sent: nothing else was granted while it was out.
 */
function countHoldsMoreThanOurs(state: GovernorState, observation: Observation, budget: ObservedBudget, leaseMs: number, outAtGrant: number): boolean {
  const limit = budget.limit ?? state.inFlightCap;
  if (observation.kind !== "ok" || limit === null) return false;
  return limit - budget.remaining > Math.max(outAtGrant, startedBy(state, observation.sentAtMs, leaseMs) + 1);
}

/**
 * An answer whose reset lies further from it than a second's rounding, the Date's drift and a round
 * trip (or this answer's own time, if longer) disproves an inferred concurrency limit: a count of
 * requests in flight is whole again when those counted with this one are answered, about a round
 * trip after the server counted it, which was before this answer came. A bucket whose reset is its
 * time until full pushes its reset on with every unit spent: a token bucket of 40 per 2 s read as a
 * limit of 40 in flight after its first two answers (the same count under the same reset, the bucket
 * full again) showed resets 2 s on as the next burst drained it, and 38 of that burst were throttled
 * before a 429 ruled the reading out; 17 now (50 workers, 80 ms answers), and none with 40 workers
 * behind GitHub's headers over 50 per 5 s (39 before). Measured from the send instead, a concurrency
 * limit of 8 answered in 300 ms (its reset the next whole second after the count) was ruled out in a
 * run and read as a window: 1.08 -> 1.73 x ideal. A limit told as concurrent
 * (qu="concurrent-requests") is not inferred, and its reset is not questioned.
 */
function resetOutlastsAnswers(state: GovernorState, observation: Observation, budget: ObservedBudget): boolean {
  if (observation.kind !== "ok" || budget.resetAtMs === null || budget.concurrent) return false;
  return budget.resetAtMs - observation.nowMs > ROUNDING_MS + RESET_DRIFT_MARGIN_MS + Math.max(state.rttMs, observation.nowMs - observation.sentAtMs);
}

/**
 * A success disproves a concurrency limit inferred (or under test) from a count that came back
 * between two readings of one reset: what brought it back was refill. Not a fixed window's (its
 * count comes back only at its reset), nor a sliding one's (countCameBack: a window that short
 * cannot be), so a bucket, whose reset is the time until it is full again: the window is bounded
 * by this reading's reset (learnBucketRefill shortens it from the count). Read as a window instead
 * (the count that came back forgotten with the test's anchor), a bucket of 20 per s behind
 * X-RateLimit-Reset in epoch seconds waited from its first burst for the reset two seconds out.
 */
function ruleOutForRefill(state: GovernorState, observation: Observation, budget: ObservedBudget): void {
  ruleOutInferredConcurrency(state);
  const limit = budget.limit ?? state.limit;
  const boundMs = limit === null || budget.resetAtMs === null ? null : bucketWindowBoundMs(limit, budget.remaining, observation.sentAtMs, budget.resetAtMs);
  if (boundMs === null || state.refill === "bucket") return;
  state.refill = "bucket";
  state.windowMs = boundMs;
  state.windowSource = "inferred";
}

/**
 * A throttle disproves an inferred concurrency limit: forget it (the scope probes and relearns) and
 * never infer it again. The claims granted under it are one lesson (learnedAtSeq): their throttles
 * are the burst the wrong reading let through, not others spending unseen, and teach no reserve.
 */
export function ruleOutInferredConcurrency(state: GovernorState): void {
  if (!inferenceHeld(state)) return;
  state.anchor = null;
  state.concurrency = "ruled-out";
  state.inFlightCap = null;
  state.inFlightCapGrows = false;
  state.learnedAtSeq = state.seq;
}
