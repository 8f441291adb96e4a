/**
 * Claiming a slot: the next start time at which the scope's budget allows this request. Slots are
 * handed out first come, first served, so concurrent workers are spaced instead of released
 * together; a wait the server announced is a floor under every slot. Pure: the store applies it
 * atomically (in memory, or as the equivalent Lua script in Redis).
 */
import { holdsConcurrency, lessonClaimsOut } from "./concurrency";
import { earliestStart, heldSlots, roundTripMs, unreflectedUnits, windowKindUntold } from "./model";
import { boundSlotsInPlace, bucketRateEstimated, clampTime, copyState, isPositive, LATE_CLAIM_MIN_MS, MAX_SLOTS, ROUNDING_MS, UNKNOWN_WINDOW_RETAIN_MS, windowIsGuessed } from "./state";
import type { ClaimRequest, ClaimResult, GovernorOptions, GovernorState, SlotTuple } from "./types";

/** How soon a held request asks again while a probe is out (a store that can notify wakes it sooner). */
export function recheckMs(state: GovernorState): number {
  return Math.min(1000, Math.max(10, Math.round(roundTripMs(state) / 2)));
}

/** Nothing learned yet: the first request goes alone and its answer tells the others the budget. */
export function isCold(state: GovernorState): boolean {
  return state.anchor === null && state.limit === null && state.inFlightCap === null && state.windowMs === null;
}

/**
 * Drops what no longer matters: unanswered leases past their end, a lost probe, and slots that can
 * neither come back nor count. With a reading of the server's count, only the claims it has not
 * seen yet and, when the window is known, the units it still holds (its most recent
 * limit - remaining) can matter; older slots of ours were already out of its count. Without one,
 * our own log needs the slots of the last window.
 */
export function prune(state: GovernorState, nowMs: number): void {
  if (state.inFlight.some(([, untilMs]) => untilMs <= nowMs)) state.inFlight = state.inFlight.filter(([, untilMs]) => untilMs > nowMs);
  if (state.probe && state.probe.untilMs <= nowMs) state.probe = null;
  // A trial whose lease ran out unanswered tried nothing: the next window may try again.
  if (state.trialSeq !== 0 && !state.inFlight.some(([seq]) => seq === state.trialSeq)) state.trialSeq = 0;
  const anchor = state.anchor;
  let firstKept: number;
  if (!anchor && state.limit === null) {
    // Nothing learned yet: the claims still out are kept, the first reading of the budget counts
    // them. In a slow start (nothing shown), so are the answered ones of the last minute: the
    // first throttle's lesson places the units it counts at their own sends, so that a sliding
    // log frees each a window after it. Dropped, they were all placed at the throttled send, and
    // the whole limit waited a window from there: Stripe's silence over a bucket of 25 per 5 s, 35
    // workers, 1.29 -> 1.01 x ideal.
    dropAnsweredUpTo(state, state.inFlightCapGrows ? nowMs - UNKNOWN_WINDOW_RETAIN_MS : Number.POSITIVE_INFINITY);
    boundSlotsInPlace(state.slots);
    return;
  } else if (anchor && state.refill !== "fixed") {
    // The units the server still holds come back one window after they were spent, and they are
    // how the window is learned while it is unknown (inferWindow, which needs our own slots to
    // cover the whole limit: pointless for a limit larger than the log can hold).
    const keepsHeld = state.refill === "window" && state.limit !== null && (state.windowMs !== null || state.limit <= MAX_SLOTS);
    firstKept = keepsHeld ? heldSlots(state, anchor, true).first : state.slots.findIndex(([, seq]) => seq > anchor.seq);
    if (firstKept < 0) firstKept = state.slots.length;
  } else {
    // A second more than the window: where a throttle was counted is read through whole-second
    // resets, and the starts that filled the window before it must still be there (ownStartsFillWindow).
    const keepAfterMs = nowMs - (state.windowMs ?? UNKNOWN_WINDOW_RETAIN_MS) - ROUNDING_MS;
    firstKept = state.slots.findIndex(([atMs, seq]) => atMs > keepAfterMs || (anchor !== null && seq > anchor.seq));
    if (firstKept < 0) firstKept = state.slots.length;
  }
  state.slots = boundSlotsInPlace(firstKept === 0 ? state.slots : state.slots.slice(firstKept));
}

/**
 * Drops the answered slots that start at or before keepAfterMs; the claims still out stay. Slots
 * are ascending by start, so those are a prefix, and a log with none to drop is left as it is (a
 * filtered copy of up to MAX_SLOTS per claim and answer was most of the governor's time in a slow
 * start).
 */
function dropAnsweredUpTo(state: GovernorState, keepAfterMs: number): void {
  const slots = state.slots;
  let end = 0;
  while (end < slots.length && slots[end]![0] <= keepAfterMs) end++;
  if (end === 0) return;
  const out = new Set(state.inFlight.map(([seq]) => seq));
  const kept: SlotTuple[] = [];
  for (let i = 0; i < end; i++) if (out.has(slots[i]![1])) kept.push(slots[i]!);
  if (kept.length < end) slots.splice(0, end, ...kept);
}

/**
 * Slots stay ascending by start (and seq, the newest last among equal starts), as readState sorts
 * them: a start earlier than the last granted (a concurrency limit's, which joins no queue, or a
 * clock that went back) goes in its place instead of at the end.
 */
function insertSlot(slots: SlotTuple[], slot: SlotTuple): void {
  let at = slots.length;
  while (at > 0 && slots[at - 1]![0] > slot[0]) at--;
  if (at === slots.length) slots.push(slot);
  else slots.splice(at, 0, slot);
}

/**
 * Whether the starts are laid from a reading the answers still coming in may revise, so that a
 * start granted ahead is claimed again when one comes in:
 * - a bucket rate that is only an estimate (Shopify REST's documented rate for the size shown, or
 *   one a lesson measured) while the count is shown: each reading may prove it faster. A
 *   concurrency limit of 3 behind Shopify's headers, 50 workers, took 5.85 x ideal with its starts
 *   kept (4.40 x claimed again); where nothing shows the count (a rate a lesson measured without
 *   headers) there is nothing to prove it by, and claiming again there only reordered the starts;
 * - a fixed window not yet told from a limit on requests in flight (model.ts windowKindUntold):
 *   the next window's starts, granted at its reset, hold their places under the cap once a count
 *   shows a concurrency limit, and the scope went on at one request in flight of 3 until they
 *   came (a second: 7.56 x ideal against 5.80 x claimed again, lab:random seed 201 #29).
 */
function startsRevisable(state: GovernorState): boolean {
  const { anchor, limit } = state;
  if (anchor === null) return false;
  if (bucketRateEstimated(state)) return true;
  return state.refill === "fixed" && limit !== null && windowKindUntold(state, anchor, limit);
}

function grant(state: GovernorState, atMs: number, units: number, probe: boolean, why: string, options: GovernorOptions): Extract<ClaimResult, { kind: "go" }> {
  const seq = state.seq + 1;
  const startMs = clampTime(atMs);
  state.seq = seq;
  state.lastGrantMs = Math.max(state.lastGrantMs, startMs);
  insertSlot(state.slots, [startMs, seq, units]);
  boundSlotsInPlace(state.slots);
  state.inFlight.push([seq, clampTime(startMs + options.leaseMs), state.inFlight.length + 1]);
  if (probe) state.probe = { seq, atMs: startMs, untilMs: clampTime(startMs + options.leaseMs) };
  return { kind: "go", atMs: startMs, seq, probe, revisable: startsRevisable(state), why };
}

/**
 * A probe whose answer is this late is taken as lost, though its lease runs on: its answer may
 * never reach this state (it was recorded elsewhere while the shared store was down, or the
 * process died), and holding every other request for the rest of a 30 s lease costs whole windows.
 * Ten round trips, and at least 2 s; a slow API costs one more probe per such period, no more.
 */
function probeOverdueMs(state: GovernorState): number {
  return Math.max(2000, 10 * roundTripMs(state));
}

/**
 * A probe sent at a reset to learn the next window's budget is answered by any reading that shows
 * it: a request sent just before our estimate of the reset (a whole-second reset read through the
 * server's Date, up to a second off) may reach the server after it, and its count shows the limit
 * back. Its answer's reset lies past the probe's start, so it is no reading of the spent window the
 * probe was granted from, and with room left the others go on it instead of waiting a round trip
 * for the probe's. A fixed 40 per s, 2 workers and 50 ms answers lost a round trip of one worker at
 * each reset this way (1.04 x ideal, every peer 1.00 x). Not a probe that tests something a count
 * cannot tell: a concurrency limit's test, a window trial, the breaker's, or a bucket's estimated
 * rate read at a told wait (each is answered only by its own request).
 */
function probeAnsweredByReading(state: GovernorState, units: number): boolean {
  const { probe, anchor } = state;
  if (probe === null || anchor === null || anchor.seq === probe.seq || anchor.resetAtMs <= probe.atMs) return false;
  if (state.breakerOpen || state.trialSeq === probe.seq || holdsConcurrency(state) || bucketRateEstimated(state)) return false;
  return countAllowsEitherWay(state, units);
}

function heldByProbe(state: GovernorState, nowMs: number, units: number): ClaimResult | null {
  if (!state.probe || state.probe.untilMs <= nowMs || nowMs >= state.probe.atMs + probeOverdueMs(state)) return null;
  if (probeAnsweredByReading(state, units)) return null;
  // No use asking before the probe can have answered; a store that notifies wakes the waiter sooner.
  const answerExpectedMs = Math.max(nowMs, state.probe.atMs + roundTripMs(state));
  return { kind: "wait", untilMs: Math.min(state.probe.untilMs, answerExpectedMs + recheckMs(state)), why: "one request is probing the scope; the others wait for its answer" };
}

/**
 * Wait for an answer to free a place: ask again at the first lease's end, or sooner (a store that
 * notifies wakes the waiter at the answer). No sooner than the first of them can have answered, as
 * for a probe (heldByProbe): the places may be held by grants whose starts are still ahead (the next
 * window's, laid by the own log), and asking every half round trip until then, 142 claims waiting
 * out a window of 60 s behind 19 such grants asked 160,000 times (the engine's simulator, a fixed 60
 * per 60 s with six windows' worth at once).
 */
function waitForAnAnswer(state: GovernorState, nowMs: number, why: string): ClaimResult {
  let leaseEndMs = Number.POSITIVE_INFINITY;
  let firstStartMs = Number.POSITIVE_INFINITY;
  for (const [seq, untilMs] of state.inFlight) {
    leaseEndMs = Math.min(leaseEndMs, untilMs);
    firstStartMs = Math.min(firstStartMs, state.slots.find(([, slotSeq]) => slotSeq === seq)?.[0] ?? nowMs);
  }
  const answerExpectedMs = Math.max(nowMs, firstStartMs + roundTripMs(state));
  return { kind: "wait", untilMs: Math.min(leaseEndMs, answerExpectedMs + recheckMs(state)), why };
}

const CONCURRENCY_TEST_WHY = "the count came back as a concurrency limit's does: one request, sent with the others answered, tests it";

/** What the latest count read under test still allows after the claims since (a bucket would take it too). */
function countAllowsEitherWay(state: GovernorState, units: number): boolean {
  return state.anchor !== null && state.anchor.remaining - unreflectedUnits(state, state.anchor) >= units;
}

/**
 * A count that came back once (countCameBack) is a concurrency limit's, or a bucket's that refilled
 * a unit between the two sends: the readings of a burst sent together cannot tell them apart (each
 * holds the burst's earlier units either way), and read as a concurrency limit, a token bucket of
 * 40 per 2 s (50 workers, 80 ms answers) took 19 more requests as its burst's answers came, and
 * throttled 17. One request tells, sent with at most half the limit of ours out (itself included):
 * under a concurrency limit its count holds no more than those (countsMoreThanOurs), and under a
 * bucket the burst, less what refilled (a bucket that refills half its size in a round trip takes
 * as much as such a limit would). It goes as a probe (the others wait for its answer), when the
 * claims sent that are still due to answer are few enough; one sent more than two round trips ago
 * is late (lateClaimUnits' bound), and a grant whose start is still ahead is not out yet.
 */
function heldForConcurrencyTest(state: GovernorState, nowMs: number): { state: GovernorState; result: ClaimResult } | null {
  const dueFromMs = nowMs - Math.max(2 * state.rttMs, LATE_CLAIM_MIN_MS);
  let due = 0;
  for (const [seq] of state.inFlight) {
    const startMs = state.slots.find(([, slotSeq]) => slotSeq === seq)?.[0];
    if (startMs !== undefined && startMs >= dueFromMs && startMs <= nowMs) due += 1;
  }
  if (due + 1 <= Math.max(1, Math.floor((state.inFlightCap ?? 1) / 2))) return null;
  return { state, result: waitForAnAnswer(state, nowMs, "the count came back as a concurrency limit's does: the answers still due come before the request that tests it") };
}

function heldByInFlightCap(state: GovernorState, nowMs: number): ClaimResult | null {
  if (state.inFlightCap === null || state.inFlight.length < state.inFlightCap) return null;
  return waitForAnAnswer(state, nowMs, `${state.inFlight.length} request(s) in flight, the most this scope takes at once for now`);
}

/**
 * A bucket takes no more requests in flight at once than it holds: more overrun it unless it
 * refills them all within one round trip, and one that does is a concurrency limit to us (as fast,
 * whichever it is). A count that comes back as soon as its requests are answered (a concurrency
 * limit behind Shopify REST's used/limit, which shows no reset) was read as a bucket refilling at
 * the rate it came back, and starts went while the limit's places were all taken: a limit of 3
 * behind those headers, 50 workers, was throttled 37 times, each a 2 s Retry-After for the whole
 * scope (15.6 x ideal; none, 1.5 x with this). Counted at the start asked for: ours sent and not
 * answered, and those granted to start within two round trips before it (one let a start go at
 * the instant the answer before it was due, and be throttled: an answer comes when it comes). A
 * start granted further ahead is answered by then, as a slower bucket's own spacing expects.
 */
function heldByBucketSize(state: GovernorState, nowMs: number, atMs: number, leaseMs: number): ClaimResult | null {
  if (state.refill !== "bucket" || state.limit === null) return null;
  const sizeRequests = Math.max(1, Math.floor(state.limit / state.unitsPerRequest));
  const rttMs = roundTripMs(state);
  let out = 0;
  for (const [, untilMs] of state.inFlight) {
    const startMs = untilMs - leaseMs;
    if (startMs <= atMs && (startMs <= nowMs || startMs >= atMs - 2 * rttMs)) out += 1;
  }
  if (out < sizeRequests) return null;
  return waitForAnAnswer(state, nowMs, `${out} request(s) in flight at that start, as many as the bucket holds`);
}

/**
 * A lesson a throttle taught where nothing shows the count is not over while the claims granted
 * before it are still out: their successes raise the limit it learned (applyOk), and well beyond
 * what its rate gives back they show a concurrency limit instead (learnSilentConcurrency). A start
 * laid more than an answer time ahead from the lesson half learned keeps the rate of that moment,
 * as grants never move. Slack's concurrency limit of 25 (Retry-After: 1), 50 workers: 24 starts
 * were laid 1.8 s ahead at 50 per 2 s while 48 answers still out raised the limit to 74 and then
 * showed the concurrency limit, whose cap counted those starts as places taken and let one request
 * go at a time until they came (2.51 x ideal; 2.13 with this). Such a claim waits for the answers
 * instead; a start within an answer time is granted, as no answer can change it sooner.
 */
function heldByLessonOut(state: GovernorState, nowMs: number, atMs: number): ClaimResult | null {
  if (state.concurrency !== "unknown" || state.anchor !== null || state.limit === null || state.lessonSeq === 0) return null;
  if (atMs - nowMs <= roundTripMs(state)) return null;
  if (!lessonClaimsOut(state)) return null;
  return { kind: "wait", untilMs: nowMs + recheckMs(state), why: "the claims out at the last throttle have not all answered: the rate it taught may still change" };
}

/**
 * How many units' spacing ahead a start is granted where the bucket's rate is an estimate (a
 * documented rate for the size shown, or one a lesson measured), at least four answer times. Grants
 * never move, and a start granted far ahead keeps the rate of its day: Shopify's 2 per s for a
 * bucket of 10 that came back as soon as its requests were answered (a concurrency limit) granted
 * starts 2 s apart up to 22 s ahead before the count proved it 4 per s (22 x ideal; 7.8 x now).
 * Further starts are claimed again when near, at the rate known then. Nor more than
 * ESTIMATED_HORIZON_MAX_MS ahead (unless four answer times are longer): the documented rate scaled
 * to a bucket of 3 (3 per 20 s) granted starts 13 s ahead, each of which only one answer could
 * prove too slow, and a concurrency limit of 3 behind those headers took 60.6 x ideal (4.4 x with
 * this). Shopify's own sizes (40 at 2 per s, 80 at 4) keep their two units.
 */
const ESTIMATED_HORIZON_UNITS = 2;
const ESTIMATED_HORIZON_MAX_MS = 2000;

/**
 * Starts beyond the estimated horizon join no queue: each goes to whichever request asks first once
 * it comes within reach, and a request that has just arrived (its worker freed by an answer, which
 * also wakes the waiters) took it as often as not. With 50 workers on a bucket of 40 per 60 s, the
 * requests that had waited longest kept losing until their deadline: 37 of 320 jobs deferred with
 * no quota spent. The horizon grows with the time a request has waited (ClaimRequest.waitedMs), by
 * up to SENIORITY_SHARE of it, and never stops growing (the share is approached over
 * SENIORITY_SCALE horizons), so the longest waiter reaches each start first, a few ms before the
 * next: every job done, 1.00 x ideal. A quarter at most, so that no start is reserved much further
 * ahead at a rate the count may still correct (a full horizon more: seed 101 #21 2.85 -> 5.38 x).
 */
const SENIORITY_SHARE = 0.25;
const SENIORITY_SCALE = 10;

/**
 * A fixed window's starts are laid from its learned length and the last reset read, and later
 * readings correct both (whole-second resets read against a drifting Date: 1,060 ms one window,
 * 1,000 the next). A start granted several windows ahead keeps the error of its day and, as grants
 * never move, lands in a window the corrected ones fill too: 50 workers holding starts five windows
 * of 10 per 1 s ahead were throttled 27 times. Beyond the next window nothing is reserved: the
 * request asks again when its start is a window away. A bucket whose rate is an estimate keeps a
 * shorter horizon (ESTIMATED_HORIZON_UNITS).
 */
function beyondNextWindow(state: GovernorState, nowMs: number, atMs: number, waitedMs: number): ClaimResult | null {
  const windowMs = state.windowMs;
  if (windowMs !== null && state.limit !== null && bucketRateEstimated(state)) {
    const baseMs = Math.round(Math.max(Math.min(ESTIMATED_HORIZON_UNITS * (windowMs / state.limit), ESTIMATED_HORIZON_MAX_MS), 4 * state.rttMs));
    // (No wait adds nothing, also where the horizon is 0 ms: 0 / 0 would be no number.)
    const horizonMs = Math.round(baseMs + (waitedMs > 0 ? (SENIORITY_SHARE * baseMs * waitedMs) / (waitedMs + SENIORITY_SCALE * baseMs) : 0));
    if (atMs - nowMs <= horizonMs) return null;
    return { kind: "wait", untilMs: atMs - horizonMs, why: "estimated rate: a start far ahead is claimed when it is near, at the rate known then" };
  }
  if (windowMs === null || atMs - nowMs <= windowMs) return null;
  // A window assumed when nothing showed it (one second) is a guess the next throttle may lengthen:
  // 150 requests granted six assumed windows ahead at once were all sent into a 5 s window.
  const kind = state.refill === "fixed" ? "fixed window" : windowIsGuessed(state) ? "assumed window" : state.windowSource === "inferred" ? "inferred window" : null;
  if (kind === null) return null;
  return { kind: "wait", untilMs: atMs - windowMs, why: `${kind}: a start more than a window ahead is claimed when it is a window away` };
}

/**
 * Claims the next start. Returns the new state and one of: go (a slot, reserved), wait (a probe
 * or the in-flight cap holds it: ask again), defer (the server's hold is past latestStartMs, or
 * the scope's pacing past latestPacedStartMs: nothing reserved).
 */
export function claim(current: GovernorState, request: ClaimRequest, options: GovernorOptions): { state: GovernorState; result: ClaimResult } {
  return claimInPlace(copyState(current), request, options);
}

/** claim() on a state the caller owns (a store's own copy): changed in place, no copy made. */
export function claimInPlace(state: GovernorState, request: ClaimRequest, options: GovernorOptions): { state: GovernorState; result: ClaimResult } {
  const held = request.holding;
  // A held grant that is no grant (not a whole seq, not a time) is ignored: a fresh claim is made.
  if (held && Number.isSafeInteger(held.seq) && held.seq > 0 && Number.isFinite(held.atMs)) return claimAgain(state, request, held, options);
  return claimNext(state, request, options);
}

/**
 * A held grant claimed again: the start the state would give now, where it is earlier than the one
 * held (which is given back), else the held one, unchanged. A probe granted at a budget's reset
 * keeps its worker asleep until then, although the answers still coming in may show, a moment
 * later, that the scope is a concurrency limit (no reset to wait for): 20 workers behind one that
 * slept for a 1 s reset took 4.4 x the ideal time. A held grant the state no longer counts (a
 * lesson replaced the slots it was learned from) leaves its lease too and is claimed afresh, and so
 * is one whose start has passed, falls before a wait the server told since it was granted, or
 * after the latest start the caller now asks for.
 */
function claimAgain(state: GovernorState, request: ClaimRequest, held: { seq: number; atMs: number }, options: GovernorOptions): { state: GovernorState; result: ClaimResult } {
  const fresh = { ...request, holding: undefined };
  if (!state.slots.some(([, seq]) => seq === held.seq)) return claimNext(releaseInPlace(state, held.seq), fresh, options);
  const trial = claimNext(releaseInPlace(copyState(state), held.seq), fresh, options);
  // A held start now past, before a wait the server told since, or after the latest start asked
  // for, is no longer one to keep; nor is any under a wait the server told past the inline latest
  // start (a fresh claim defers there).
  if (held.atMs < Math.max(clampTime(request.nowMs), state.notBeforeMs) || held.atMs > latestPacedStartMs(request) || state.notBeforeMs > request.latestStartMs) return trial;
  if (trial.result.kind === "go" && trial.result.atMs < held.atMs) return trial;
  // Kept: the state is returned untouched (a store need not write it, nor wake anyone).
  return { state, result: { kind: "go", atMs: held.atMs, seq: held.seq, probe: state.probe?.seq === held.seq, revisable: startsRevisable(state), why: KEPT_WHY } };
}

const KEPT_WHY = "the start already granted is still the earliest";

/** Whether a claim's answer is the held grant kept as it was (nothing in the state changed). */
export function keptHeldGrant(request: ClaimRequest, result: ClaimResult): boolean {
  return request.holding !== undefined && result.kind === "go" && result.seq === request.holding.seq && result.why === KEPT_WHY;
}

/**
 * The latest start the scope's own pacing may set (types.ts ClaimRequest): the later of the two
 * asked for. A value that is no time (NaN) is none.
 */
export function latestPacedStartMs(request: ClaimRequest): number {
  const pacedMs = request.latestPacedStartMs;
  return typeof pacedMs === "number" && pacedMs > request.latestStartMs ? pacedMs : request.latestStartMs;
}

/**
 * A turn the scope's own pacing set past the request's latest start: said so first, as the user
 * reads it in a deferred result. earliestStart's reason alone names the last rule it applied,
 * relative to the time that rule started from ("own log: room in the last window" for a turn an
 * hour away), and Send Batch read such a deferral as a wait the API told.
 */
export const PACED_PAST_LATEST_WHY = "the scope's pacing gives its next turn after this request's latest start";

const TOLD_WAIT_WHY = "an estimated rate, and the server's wait says it admits sooner: one request reads its count then";

/**
 * A count with no reset read as a bucket at an estimated rate (count-window.ts): a throttle's told
 * wait says when the server admits again. Where the estimate would start this request later, one
 * request goes then, alone, and its count tells a window's reset (the limit back in full) from a
 * bucket's next unit. Ahead of the starts the estimate laid out: they were laid by a rate the
 * server's wait already contradicts, and a fixed 40 per s behind Shopify's header waited for the
 * last of them (500 ms) before the window that had begun was read (1.11 x ideal). Only where
 * successes show the count (on 429s alone, the probe's success would show nothing), once per told
 * wait (the probe's reading is sent at it).
 */
function probeAtToldWaitMs(state: GovernorState, nowMs: number, estimatedAtMs: number): number | null {
  const toldMs = state.countResetAtMs;
  if (!bucketRateEstimated(state) || !state.budgetOnSuccess || state.anchor === null || toldMs <= state.anchor.atMs) return null;
  const atMs = Math.max(nowMs, state.notBeforeMs, toldMs);
  return estimatedAtMs > atMs ? atMs : null;
}

function claimNext(state: GovernorState, request: ClaimRequest, options: GovernorOptions): { state: GovernorState; result: ClaimResult } {
  const nowMs = clampTime(request.nowMs);
  state.updatedAtMs = nowMs;
  prune(state, nowMs);
  // A caller's estimate that is not a positive number (NaN, 0, Infinity) is not one: the scope's own is used.
  const units = isPositive(request.units) ? request.units : state.unitsPerRequest;
  const concurrent = holdsConcurrency(state);
  // Under a concurrency limit, grants given while a window paced the scope are no queue to join
  // (they hold their places under the cap until they are answered).
  const floorMs = Math.max(nowMs, state.notBeforeMs, concurrent ? 0 : state.lastGrantMs);
  const defer = (atMs: number, why: string): { state: GovernorState; result: ClaimResult } => ({
    state,
    result: { kind: "defer", notBeforeMs: atMs, why, limitType: atMs === state.notBeforeMs ? state.notBeforeType : "burst" },
  });
  if (state.notBeforeMs > request.latestStartMs) return defer(state.notBeforeMs, state.notBeforeReason || "the server's wait");
  const held = heldByProbe(state, nowMs, units);
  if (held) return { state, result: held };
  if (isCold(state) || state.breakerOpen) {
    // A probe too keeps to the latest start: the grants already given (lastGrantMs) may be further off.
    if (floorMs > latestPacedStartMs(request)) return defer(floorMs, "the slots already granted in this scope reach past the latest start");
    const why = state.breakerOpen ? "the breaker is open: one request probes before the rest go" : "first request of a cold scope: it learns the budget before the rest go";
    return { state, result: grant(state, floorMs, units, true, why, options) };
  }
  const capped = heldByInFlightCap(state, nowMs);
  if (capped) return { state, result: capped };
  if (concurrent) {
    if (floorMs > request.latestStartMs) return defer(floorMs, state.notBeforeReason || "the server's wait");
    if (state.concurrency === "testing" && !countAllowsEitherWay(state, units)) {
      state.anchor = null;
      return heldForConcurrencyTest(state, nowMs) ?? { state, result: grant(state, floorMs, units, true, CONCURRENCY_TEST_WHY, options) };
    }
    return { state, result: grant(state, floorMs, units, false, `a concurrency limit: fewer than ${state.inFlightCap ?? 1} requests in flight`, options) };
  }
  // A draw outside [0, 1) (NaN from a broken random source) is no draw: the start is not spread.
  const draw = typeof request.random === "number" && request.random >= 0 && request.random < 1 ? request.random : undefined;
  const earliest = earliestStart(state, floorMs, units, draw);
  if ("answersDue" in earliest) return { state, result: { kind: "wait", untilMs: nowMs + recheckMs(state), why: earliest.why } };
  const toldAtMs = probeAtToldWaitMs(state, nowMs, earliest.atMs);
  if (toldAtMs !== null && toldAtMs <= latestPacedStartMs(request)) return { state, result: grant(state, toldAtMs, units, true, TOLD_WAIT_WHY, options) };
  if (earliest.atMs > latestPacedStartMs(request)) return defer(earliest.atMs, `${PACED_PAST_LATEST_WHY} (${earliest.why})`);
  const lessonOut = heldByLessonOut(state, nowMs, earliest.atMs);
  if (lessonOut) return { state, result: lessonOut };
  const full = heldByBucketSize(state, nowMs, earliest.atMs, options.leaseMs);
  if (full) return { state, result: full };
  // A wait that is not a number of ms (NaN, negative, infinite) is none: the request asks for the first time.
  const waitedMs = isPositive(request.waitedMs) ? request.waitedMs : 0;
  const beyond = beyondNextWindow(state, nowMs, earliest.atMs, waitedMs);
  if (beyond) return { state, result: beyond };
  const probe = "probeWanted" in earliest;
  const result = grant(state, earliest.atMs, units, probe, earliest.why, options);
  if (probe && earliest.trial === true) state.trialSeq = result.seq;
  return { state, result };
}

/** Cancels a granted claim that will not be sent (its caller deferred or was aborted before sending). */
export function release(current: GovernorState, seq: number): GovernorState {
  return releaseInPlace(copyState(current), seq);
}

function releaseInPlace(state: GovernorState, seq: number): GovernorState {
  state.slots = state.slots.filter(([, s]) => s !== seq);
  state.inFlight = state.inFlight.filter(([s]) => s !== seq);
  if (state.probe?.seq === seq) state.probe = null;
  if (state.trialSeq === seq) state.trialSeq = 0;
  state.lastGrantMs = state.slots.reduce((latest, [atMs]) => Math.max(latest, atMs), 0);
  return state;
}
