/**
 * Learning a budget the API does not show: the successes counted before the first throttle are
 * the limit, and the time from the first of them to the server's announced reset (Retry-After)
 * is the window (src/engine/governor/observe.ts learnFromThrottle).
 */
import { describe, expect, it } from "vitest";
import { fixedWindow, mostInAnyWindow, simulate, slidingLog, type SimRun } from "./sim";
import { bucketFromTwoLessons, Scope, successes, T0, type Go } from "./helpers";
import { WINDOW_TRIAL_WHY } from "../../../src/engine/governor/model";
import { emptyState } from "../../../src/engine/governor/state";

/** Six windows' worth of requests arriving at once at a server that shows nothing (a throttle may say its wait). */
function sixWindowsAtOnce(server: string, limit: number, windowMs: number, rttMs: number, throttleSaysWait: boolean): SimRun {
  return simulate({
    server: server === "sliding" ? slidingLog(limit, windowMs) : fixedWindow(limit, windowMs, T0),
    arrivalsMs: Array<number>(limit * 6).fill(T0),
    rttMs,
    shows: "nothing",
    throttleSaysWait,
    startMs: T0,
  });
}

/** `count` successes at the scope's own pace, then a claim throttled with no wait told. Returns that claim. */
function pacedThenThrottle(scope: Scope, count: number): Go {
  const paced = successes(scope, count, 10, scope.state.notBeforeMs);
  const last = scope.go(paced[count - 1]!.atMs + 10);
  scope.throttle(last, last.atMs + 10, 500, { waitFromServer: false });
  return last;
}

/** The lessons' rule alone: a silent rate not probed upward between them (silent-probe.test.ts tests that). */
const LESSONS_ONLY = { probeSilentRate: false };

describe("learning without budget headers", () => {
  it("5 successes then a 429 with Retry-After: limit 5, window from the first success to the reset, the next window's 5 spaced after it", () => {
    const scope = new Scope();
    const sent = successes(scope, 5, 20);
    expect(scope.state.limit).toBeNull();
    const sixth = scope.go(sent[4]!.atMs + 20);
    const answeredMs = sixth.atMs + 20;
    scope.throttle(sixth, answeredMs, 900);
    expect(scope.state).toMatchObject({ limit: 5, windowMs: answeredMs + 900 - T0, windowSource: "inferred", notBeforeMs: answeredMs + 900 });
    // The slow start kept the admitted units at their own sends: each leaves the log one window
    // after it (the first at the reset), never early, and no sooner than the server's wait.
    const windowMs = scope.state.windowMs!;
    const next = Array.from({ length: 5 }, () => scope.go(answeredMs));
    expect(next.map((g) => g.atMs)).toEqual(sent.map((g) => Math.max(g.atMs + windowMs, answeredMs + 900)));
    // The window is inferred, not shown: a start beyond the next window is claimed when it is a
    // window away, at the length known then; claimed then, the window after holds no more than 5.
    expect(scope.claim(answeredMs)).toMatchObject({ kind: "wait", why: expect.stringContaining("inferred window") });
    const later = Array.from({ length: 5 }, () => scope.go(next[4]!.atMs));
    expect(mostInAnyWindow([...sent, ...next, ...later].map((g) => g.atMs), windowMs)).toBeLessThanOrEqual(5);
  });

  // Retry-After is whole seconds (RFC 9110 §10.2.3), rounded up: the server's reset may be up to a
  // second before the one it implies, so the window is the whole number of seconds within that
  // second (plus 1 %, at most 100 ms), where that still holds every unit counted before the throttle.
  it.each([
    ["a fixed 10 per 1 s window throttled 250 ms in (reads 1,250 ms)", 10, 25, 1000, 1000, 1010],
    ["a sliding 20 per 10 s log throttled 350 ms in (reads 10,350 ms)", 20, 17, 10_000, 1000, 10_100],
    ["a 60 s window (the margin stops at 100 ms)", 20, 30, 60_000, 1000, 60_100],
    ["a 2 s window throttled 800 ms in, told 2 s: its reset is after 1,800 ms (the send plus the wait less a second)", 8, 100, 2000, 1000, 2020],
    ["a wait given to the millisecond is the reset itself", 10, 25, 1000, undefined, null],
    ["Retry-After 0, whose whole seconds would not hold the units counted", 10, 150, 0, 1000, null],
  ])("%s", (_name, admitted, gapMs, waitMs, waitResolutionMs, expectedWindowMs) => {
    const scope = new Scope();
    const sent = successes(scope, admitted, gapMs);
    const throttled = scope.go(sent[admitted - 1]!.atMs + gapMs);
    const answeredMs = throttled.atMs + 20;
    scope.throttle(throttled, answeredMs, waitMs, waitResolutionMs === undefined ? {} : { waitResolutionMs });
    expect(scope.state).toMatchObject({ limit: admitted, windowMs: expectedWindowMs ?? answeredMs + waitMs - T0 });
  });

  // Found by a random scenario (seed 111 #27: a fixed 15 per 2 s window behind Slack's silence,
  // 200 ms answers): the reset lies after the throttled send plus its wait less the second it was
  // rounded up by, and no later than the answer plus the wait; both 2 s and 3 s fall in there, and
  // the longer, taken before, paced every window at 3 s (1.52 x ideal; 1.15 with the shorter). The
  // shorter is the one a throttle corrects if wrong: a longer window is never found out.
  it("a late throttle answered slowly: the shortest whole seconds the reset allows, not the longest", () => {
    const scope = new Scope();
    const sent = successes(scope, 15, 123);
    const throttled = scope.go(sent[14]!.atMs + 123);
    expect(throttled.atMs - T0).toBe(1845);
    const answeredMs = throttled.atMs + 200;
    scope.throttle(throttled, answeredMs, 1000, { waitResolutionMs: 1000 });
    // Bound: 3,045 ms from the first send; the reset is after 1,845 ms.
    expect(scope.state).toMatchObject({ limit: 15, windowMs: 2020 });
  });

  it("without Retry-After, a window of at least one second is assumed", () => {
    const scope = new Scope();
    const sent = successes(scope, 3, 10);
    const fourth = scope.go(sent[2]!.atMs + 10);
    scope.answer(fourth, fourth.atMs + 10, { kind: "throttled", limitType: "burst", waitMs: 750, waitFromServer: false });
    expect(scope.state).toMatchObject({ limit: 3, windowMs: 1000 });
  });

  it("after a lesson with no wait told, the scope starts again from one in flight and grows by one per success to the limit learned; a wait told does not", () => {
    const silent = new Scope();
    const sent = successes(silent, 3, 10);
    const fourth = silent.go(sent[2]!.atMs + 10);
    silent.answer(fourth, fourth.atMs + 10, { kind: "throttled", limitType: "burst", waitMs: 750, waitFromServer: false });
    expect(silent.state).toMatchObject({ limit: 3, inFlightCap: 1, inFlightCapGrows: true });
    const atMs = T0 + 2000;
    const first = silent.go(atMs);
    expect(silent.claim(atMs)).toMatchObject({ kind: "wait" });
    silent.answer(first, atMs + 10);
    expect(silent.state.inFlightCap).toBe(2);
    const [second, third] = [silent.go(atMs + 10), silent.go(atMs + 10)];
    expect(silent.claim(atMs + 10)).toMatchObject({ kind: "wait" });
    silent.answer(second!, atMs + 20);
    // At the limit learned the cap is gone: the window paces from here.
    expect(silent.state).toMatchObject({ inFlightCap: null, inFlightCapGrows: false });
    silent.answer(third!, atMs + 20);

    const told = new Scope();
    const toldSent = successes(told, 3, 10);
    const toldFourth = told.go(toldSent[2]!.atMs + 10);
    told.answer(toldFourth, toldFourth.atMs + 10, { kind: "throttled", limitType: "burst", waitMs: 750, waitFromServer: true });
    expect(told.state).toMatchObject({ limit: 3, inFlightCap: null, inFlightCapGrows: false });
  });

  it("a second throttle means the limit learned is still too high: 80 % of it, never below one request's units", () => {
    const scope = new Scope();
    const sent = successes(scope, 5, 20);
    const sixth = scope.go(sent[4]!.atMs + 20);
    scope.throttle(sixth, sixth.atMs + 20, 900);
    const lowered: number[] = [];
    for (let i = 0; i < 8; i++) {
      const granted = scope.go(scope.state.notBeforeMs);
      scope.throttle(granted, granted.atMs + 20, 900);
      lowered.push(scope.state.limit!);
    }
    expect(lowered).toEqual([4, 3, 2, 1, 1, 1, 1, 1]);
  });

  it("a second episode that admits less than the first burst, with a Retry-After, measures the rate itself: a bucket, paced one unit at a time", () => {
    const scope = new Scope(T0, LESSONS_ONLY);
    // A burst of 10 admitted, then a 429 saying the next unit comes in 1 s: 10 per ~1.1 s learned.
    const sent = successes(scope, 10, 10);
    const eleventh = scope.go(sent[9]!.atMs + 10);
    scope.throttle(eleventh, eleventh.atMs + 10, 1000);
    expect(scope.state).toMatchObject({ limit: 10, refill: "window" });
    // The next episode, from that reset: only 2 admitted (the bucket refills at 2 per second), then
    // a 429 saying the next unit comes 500 ms later.
    const episodeStartMs = scope.state.notBeforeMs;
    const [, b] = successes(scope, 2, 10, episodeStartMs);
    const c = scope.go(b!.atMs + 10);
    scope.throttle(c, c.atMs + 10, 500);
    const windowMs = c.atMs + 10 + 500 - episodeStartMs;
    expect(scope.state).toMatchObject({ limit: 2, windowMs, refill: "bucket" });
    // From then on, one start every windowMs / 2 (no burst into an empty bucket), each claimed as
    // the one before it is answered (10 ms after its start).
    let nowMs = scope.state.notBeforeMs;
    const next = Array.from({ length: 4 }, () => {
      const granted = scope.go(nowMs);
      nowMs = granted.atMs + 10;
      scope.answer(granted, nowMs);
      return granted;
    });
    for (let i = 1; i < next.length; i++) expect(next[i]!.atMs - next[i - 1]!.atMs).toBeGreaterThanOrEqual(Math.floor(windowMs / 2));
    // A rate a lesson measured is an estimate: a start more than two units' spacing ahead is not
    // granted yet; it is claimed again when near.
    const ahead = [scope.claim(nowMs), scope.claim(nowMs), scope.claim(nowMs)];
    expect(ahead.map((r) => r.kind)).toEqual(["go", "go", "wait"]);
  });

  // Found by a random scenario (a bucket of 25 refilling 5 per s behind Stripe's silence, 35
  // workers): cut by a fifth per lesson, 27 per s became 21, 16, 12, 9..., each window throwing all
  // but 5: 83 throttled of 208 calls (31 with this).
  it("no wait told: a later lesson measures the rate from the last lesson's throttle, and well below the rate learned it is a bucket paced at it", () => {
    const scope = new Scope();
    const sent = successes(scope, 10, 10);
    const eleventh = scope.go(sent[9]!.atMs + 10);
    // Nothing shown, no wait told: the client's own backoff (500 ms) is the wait.
    scope.throttle(eleventh, eleventh.atMs + 10, 500, { waitFromServer: false });
    expect(scope.state).toMatchObject({ limit: 10, windowMs: 1000, refill: "window", lessonSentAtMs: eleventh.atMs });
    // The budget refills at 2 per s: the next window's burst has 2 admitted, the third is throttled.
    const [, b] = successes(scope, 2, 10, scope.state.notBeforeMs);
    const c = scope.go(b!.atMs + 10);
    scope.throttle(c, c.atMs + 10, 500, { waitFromServer: false });
    const measuredMs = c.atMs - eleventh.atMs;
    expect(2 / measuredMs).toBeLessThan((0.8 * 10) / 1000);
    expect(scope.state).toMatchObject({ limit: 2, windowMs: measuredMs, refill: "bucket", lessonSentAtMs: c.atMs });
  });

  // Found by a random scenario (seed 121 #13: a bucket of 40 refilling 8 per s behind Stripe's
  // silence, 2 workers): learned as 8.3 per s, its next throttle 10 s later cut it by a fifth to
  // 6.5 per s though 82 admitted since had shown 7.9 (1.17 x ideal; 1.03 with this).
  it("no wait told: a bucket paced at its learned rate and throttled again windows later takes the rate it admitted since, one unit less, not the cut", () => {
    const scope = new Scope(T0, LESSONS_ONLY);
    const c = bucketFromTwoLessons(scope, 500, 2, 500);
    const learned = { limit: scope.state.limit!, windowMs: scope.state.windowMs! };
    expect(scope.state).toMatchObject({ limit: 2, refill: "bucket" });
    // Paced at that rate, 20 admitted, then a throttle: the bucket was empty at both sends.
    const last = pacedThenThrottle(scope, 20);
    const measuredMs = last.atMs - c.atMs;
    expect(measuredMs).toBeGreaterThanOrEqual(2 * learned.windowMs);
    expect(20 / measuredMs).toBeGreaterThanOrEqual((0.8 * learned.limit) / learned.windowMs);
    expect(scope.state).toMatchObject({ limit: 2, refill: "bucket", windowMs: Math.round((measuredMs * 2) / 19) });
    expect(scope.state.windowMs!).toBeGreaterThan(learned.windowMs);
  });

  // Less than two of its windows cannot tell a burst from a rate: the usual cut then.
  it("no wait told: a bucket throttled again less than two of its windows later is cut as usual", () => {
    const scope = new Scope(T0, LESSONS_ONLY);
    const c = bucketFromTwoLessons(scope, 900, 7, 10);
    const learned = { limit: scope.state.limit!, windowMs: scope.state.windowMs! };
    expect(scope.state).toMatchObject({ limit: 7, refill: "bucket" });
    const last = pacedThenThrottle(scope, 10);
    const measuredMs = last.atMs - c.atMs;
    expect(measuredMs).toBeLessThan(2 * learned.windowMs);
    expect(10 / measuredMs).toBeGreaterThanOrEqual((0.8 * learned.limit) / learned.windowMs);
    expect(9 / measuredMs).toBeLessThan(learned.limit / learned.windowMs);
    expect(scope.state).toMatchObject({ limit: 5, windowMs: learned.windowMs });
  });

  it("no wait told: a window (not a bucket) throttled again windows later is cut as usual: a count between two throttles can hold a burst", () => {
    const scope = new Scope();
    const sent = successes(scope, 10, 10);
    const eleventh = scope.go(sent[9]!.atMs + 10);
    scope.throttle(eleventh, eleventh.atMs + 10, 500, { waitFromServer: false });
    const again = successes(scope, 29, 10, scope.state.notBeforeMs);
    const last = scope.go(again[28]!.atMs + 10);
    const measuredMs = last.atMs - eleventh.atMs;
    expect(measuredMs).toBeGreaterThanOrEqual(2 * 1000);
    expect(29 / measuredMs).toBeGreaterThanOrEqual((0.8 * 10) / 1000);
    expect(28 / measuredMs).toBeLessThan(10 / 1000);
    scope.throttle(last, last.atMs + 10, 500, { waitFromServer: false });
    expect(scope.state).toMatchObject({ limit: 8, windowMs: 1000, refill: "window" });
  });

  it("no wait told: a later lesson at about the rate learned (a unit spent by someone else) is the usual cut, not a bucket", () => {
    const scope = new Scope();
    const sent = successes(scope, 10, 10);
    const eleventh = scope.go(sent[9]!.atMs + 10);
    scope.throttle(eleventh, eleventh.atMs + 10, 500, { waitFromServer: false });
    // The next window admits 9 of the 10 granted: 9 in about a second, above 80 % of 10 per s.
    const again = successes(scope, 9, 10, scope.state.notBeforeMs);
    const tenth = scope.go(again[8]!.atMs + 10);
    expect(9 / (tenth.atMs - eleventh.atMs)).toBeGreaterThanOrEqual((0.8 * 10) / 1000);
    scope.throttle(tenth, tenth.atMs + 10, 500, { waitFromServer: false });
    expect(scope.state).toMatchObject({ limit: 8, windowMs: 1000, refill: "window" });
  });

  it("a later episode that admits more than the learned limit, at a lower rate, keeps that rate: more units over the same length, not the limit's", () => {
    const scope = new Scope(T0, LESSONS_ONLY);
    const sent = successes(scope, 10, 10);
    const eleventh = scope.go(sent[9]!.atMs + 10);
    scope.throttle(eleventh, eleventh.atMs + 10, 1000);
    // A second episode: 2 admitted, then a 429 whose wait ends 1,000 ms after the episode began: 2 per s.
    let episodeStartMs = scope.state.notBeforeMs;
    const [, b] = successes(scope, 2, 10, episodeStartMs);
    const c = scope.go(b!.atMs + 10);
    scope.throttle(c, c.atMs + 10, episodeStartMs + 1000 - (c.atMs + 10));
    expect(scope.state).toMatchObject({ limit: 2, windowMs: 1000, refill: "bucket" });
    // A third: 5 admitted (paced at 2 per s), then a 429 whose wait ends 4,000 ms after it began:
    // 5 per 4 s, 1.25 per s, kept as 2 per 1,600 ms (not 2 per 4 s: 0.5 per s).
    episodeStartMs = scope.state.notBeforeMs;
    const third = successes(scope, 5, 10, episodeStartMs);
    const overrun = scope.go(third[4]!.atMs + 10);
    scope.throttle(overrun, overrun.atMs + 10, episodeStartMs + 4000 - (overrun.atMs + 10));
    expect(scope.state).toMatchObject({ limit: 2, windowMs: 1600, refill: "bucket" });
  });

  it("claims of the same burst still out when the lesson is learned teach nothing new; one that succeeds raises the limit by one", () => {
    const scope = new Scope();
    const sent = successes(scope, 4, 20);
    const burstMs = sent[3]!.atMs + 20;
    // The slow-start cap allows several out at once now.
    const out = [scope.go(burstMs), scope.go(burstMs), scope.go(burstMs)];
    scope.throttle(out[0]!, burstMs + 20, 1000);
    expect(scope.state.limit).toBe(4);
    scope.throttle(out[1]!, burstMs + 21, 1000);
    expect(scope.state.limit).toBe(4);
    scope.answer(out[2]!, burstMs + 22);
    expect(scope.state.limit).toBe(5);
  });

  // Found by the simulation below: the lesson subtracted the claims still out from the units it
  // put back in the log, though those claims are not among the successes counted; when they were
  // throttled in turn their slots left the log, and the log held fewer units than the server.
  it("claims still out at the lesson and throttled after it do not take admitted units out of the log", () => {
    const scope = new Scope();
    const sent = successes(scope, 4, 20);
    const burstMs = sent[3]!.atMs + 20;
    const out = [scope.go(burstMs), scope.go(burstMs), scope.go(burstMs), scope.go(burstMs)];
    scope.throttle(out[0]!, burstMs + 20, 1000);
    for (const granted of out.slice(1)) scope.throttle(granted, burstMs + 20, 1000);
    const logged = scope.state.slots.reduce((sum, [, , units]) => sum + units, 0);
    expect(logged).toBe(4);
  });

  it.each([
    { server: "sliding", limit: 5, windowMs: 1000, rttMs: 50 },
    { server: "sliding", limit: 10, windowMs: 1000, rttMs: 20 },
    { server: "sliding", limit: 20, windowMs: 2000, rttMs: 100 },
    { server: "sliding", limit: 100, windowMs: 60_000, rttMs: 200 },
    { server: "fixed", limit: 3, windowMs: 500, rttMs: 30 },
    { server: "fixed", limit: 20, windowMs: 2000, rttMs: 100 },
    { server: "fixed", limit: 100, windowMs: 60_000, rttMs: 200 },
  ])("$server $limit per $windowMs ms, 6 windows' worth arriving at once: learns the limit and window, and no request granted after the lesson is throttled", ({ server, limit, windowMs, rttMs }) => {
    const run = sixWindowsAtOnce(server, limit, windowMs, rttMs, true);
    expect(run.state).toMatchObject({ limit, windowMs });
    const afterLesson = run.grants.filter((g) => g.seq > run.firstLimitAtSeq!);
    expect(afterLesson.length).toBeGreaterThanOrEqual(limit * 3);
    expect(afterLesson.filter((g) => !g.admitted)).toEqual([]);
    expect(mostInAnyWindow(afterLesson.map((g) => g.atMs), windowMs)).toBeLessThanOrEqual(limit);
  });
});

describe("learning without budget headers or a wait: the window, from throttles that find the lesson's units still counted", () => {
  /** A lesson of 5 at T0, 20 ms apart, whose sixth is throttled with no wait told (a 500 ms backoff of its own). */
  function lessonOfFive(): { scope: Scope; sixth: Go } {
    const scope = new Scope();
    const sent = successes(scope, 5, 20);
    const sixth = scope.go(sent[4]!.atMs + 20);
    scope.throttle(sixth, sixth.atMs + 20, null, { waitMs: 500 });
    return { scope, sixth };
  }

  it("a throttle with nothing admitted since the lesson lengthens the assumed window (the limit stands) and spaces the next probe; the first success bounds it", () => {
    const { scope } = lessonOfFive();
    expect(scope.state).toMatchObject({ limit: 5, windowMs: 1000, windowSource: "assumed" });
    // The own log frees the lesson's units a second after the first: that probe is throttled too.
    const probe = scope.go(T0 + 1000);
    scope.throttle(probe, probe.atMs + 20, null, { waitMs: 50 });
    const outlastedMs = probe.atMs - T0;
    expect(scope.state).toMatchObject({ limit: 5, windowMs: outlastedMs, windowSource: "outlasted" });
    // The next probe goes at the next documented length from the window's first unit (2 s, a hundredth longer).
    expect(scope.state.notBeforeMs).toBe(T0 + 2020);
    const later = scope.go(T0 + 4000);
    scope.answer(later, later.atMs + 20);
    expect(scope.state).toMatchObject({ limit: 5, windowMs: later.atMs - T0, windowSource: "inferred" });
  });

  it("a throttle that finds the window longer holds the scope until the next documented length from the window's first unit, not the throttled request's longer backoff", () => {
    const { scope, sixth } = lessonOfFive();
    // The first lesson is held for the request's backoff, as any throttle with nothing else to go by.
    expect(scope.state.notBeforeMs).toBe(sixth.atMs + 20 + 500);
    const probe = scope.go(T0 + 1000);
    // Its request has been throttled a few times: its own backoff is 2 s by now.
    scope.throttle(probe, probe.atMs + 20, null, { waitMs: 2000 });
    const outlastedMs = probe.atMs - T0;
    expect(scope.state).toMatchObject({ windowMs: outlastedMs, windowSource: "outlasted" });
    // Held for the backoff, the next probe would land 2 s on, and its success be taken for a window of 3 s.
    expect(scope.state.notBeforeMs).toBe(T0 + 2020);
  });

  it("the probes after throttles that find the window longer go at the documented lengths from its first unit, each a hundredth longer, up to a minute; past it, the whole time measured", () => {
    const { scope } = lessonOfFive();
    const throttledAtMs: number[] = [];
    let probe = scope.go(T0 + 1000);
    while (probe.atMs - T0 <= 60_100) {
      throttledAtMs.push(probe.atMs - T0);
      scope.throttle(probe, probe.atMs + 20, null, { waitMs: 50 });
      probe = scope.go(scope.state.notBeforeMs);
    }
    // Spaced a quarter of the time measured, 18 probes went by the minute.
    expect(throttledAtMs).toEqual([1000, 2020, 3030, 5050, 10_100, 15_100, 20_100, 30_100, 60_100]);
    expect(probe.atMs - T0).toBe(60_100 + 20 + 60_100);
    // A success at 5,050 ms (the probe after 3,030 ms) takes the window at that bound.
    const fresh = lessonOfFive().scope;
    for (const atMs of [1000, 2020, 3030]) fresh.throttle(fresh.go(T0 + atMs), T0 + atMs + 20, null, { waitMs: 50 });
    const admitted = fresh.go(fresh.state.notBeforeMs);
    expect(admitted.atMs - T0).toBe(5050);
    fresh.answer(admitted, admitted.atMs + 20);
    expect(fresh.state).toMatchObject({ windowMs: 5050, windowFloorMs: 3030, windowSource: "inferred" });
  });

  it("a claim held by the places of grants whose starts are still ahead asks again when the first of them can have answered, not every half round trip", () => {
    // After a lesson the scope takes one request in flight at a time (restartSlowStart); the one
    // granted goes when the own log frees a unit, a second after the window's first.
    const { scope } = lessonOfFive();
    const granted = scope.go(T0 + 200);
    expect(granted.atMs).toBeGreaterThan(T0 + 900);
    const held = scope.claim(T0 + 200);
    expect(held).toMatchObject({ kind: "wait", why: expect.stringContaining("in flight") });
    // Asked every 10 ms (half a 20 ms round trip) until then, as it was, 40 times over nothing.
    expect(held.kind === "wait" && held.untilMs).toBe(granted.atMs + scope.state.rttMs + Math.max(10, Math.round(scope.state.rttMs / 2)));
  });

  it("a throttle that finds the window outlasting a minute (an hourly limit or a quota) holds the scope the whole time measured: the probes double, as a backoff", () => {
    const { scope } = lessonOfFive();
    const probe = scope.go(T0 + 70_000);
    scope.throttle(probe, probe.atMs + 20, null, { waitMs: 50 });
    const outlastedMs = probe.atMs - T0;
    expect(scope.state).toMatchObject({ windowMs: outlastedMs, windowSource: "outlasted" });
    expect(scope.state.notBeforeMs).toBe(probe.atMs + 20 + outlastedMs);
  });

  it("a later lesson's units are counted from the first success after the last lesson, not from the run's first request", () => {
    // A Stripe-like server (no budget, no wait) with a sliding window of 10 that another client
    // also spends; a client backoff of 300 ms.
    const scope = new Scope();
    const sent = successes(scope, 10, 10);
    const eleventh = scope.go(sent[9]!.atMs + 10);
    scope.throttle(eleventh, eleventh.atMs + 10, null, { waitMs: 300 });
    expect(scope.state).toMatchObject({ limit: 10, windowSource: "assumed" });
    // The next window (our log frees the lesson's units 1 s after its throttled send): 9 admitted
    // (the other client spent one), then a throttle: a second lesson at about the rate learned, 80 %
    // of the limit.
    const next = successes(scope, 9, 10, T0 + 1000);
    const overrun = scope.go(next[8]!.atMs + 10);
    scope.throttle(overrun, overrun.atMs + 20, null, { waitMs: 300 });
    expect(scope.state).toMatchObject({ limit: 8, refill: "window" });
    // A probe throttled before anything is admitted again, 1.5 s after this lesson's units began:
    // the window outlasts them. From the first request (T0) it would be read as 2.6 s.
    const probe = scope.go(Math.max(next[0]!.atMs + 1500, scope.state.notBeforeMs));
    scope.throttle(probe, probe.atMs + 20, null, { waitMs: 300 });
    expect(scope.state).toMatchObject({ windowSource: "outlasted", windowMs: probe.atMs - next[0]!.atMs });
    expect(scope.state.windowMs).toBeLessThan(2000);
  });

  it.each([
    { server: "sliding", limit: 20, windowMs: 10_000, rttMs: 50, mostThrottled: 8 },
    { server: "sliding", limit: 10, windowMs: 2000, rttMs: 60, mostThrottled: 6 },
    { server: "fixed", limit: 30, windowMs: 5000, rttMs: 40, mostThrottled: 13 },
    { server: "fixed", limit: 60, windowMs: 60_000, rttMs: 100, mostThrottled: 19 },
  ])("$server $limit per $windowMs ms, 6 windows' worth at once: the limit is kept, the window found at its documented length (the probes go at those), and after that only trials of a shorter window are throttled", ({ server, limit, windowMs, rttMs, mostThrottled }) => {
    const run = sixWindowsAtOnce(server, limit, windowMs, rttMs, false);
    expect(run.state.limit).toBe(limit);
    // The probes go at the documented lengths from the window's first unit (observe.ts
    // outlastProbeAtMs): the first success is at the window's own length, a hundredth longer.
    expect(run.state.windowMs).toBe(windowMs + Math.min(windowMs / 100, 100));
    const found = run.grants.findIndex((g, i) => i > 0 && g.admitted && g.seq > run.firstLimitAtSeq! && run.grants.slice(0, i).some((h) => !h.admitted && h.seq > run.firstLimitAtSeq!));
    // Only trials of a shorter window are throttled after that, one at a time (model.ts windowTrialAtMs),
    // each closing half the gap to the length before it, while that gains a twentieth of the window.
    const throttledAfter = run.grants.slice(found).filter((g) => !g.admitted);
    expect(throttledAfter.filter((g) => g.why !== WINDOW_TRIAL_WHY)).toEqual([]);
    expect(throttledAfter.length).toBeLessThanOrEqual(3);
    // Probed a quarter of the time measured apart, these took 12, 5, 14 and 24 throttles in all.
    expect(run.grants.filter((g) => !g.admitted).length).toBeLessThanOrEqual(mostThrottled);
    expect(run.unfinished).toBe(0);
  });

  it("a window bounded closely by throttles and the first success is taken at the longest documented length between the bounds, a hundredth longer, and tried shorter only near it", () => {
    // A fixed 5 per 3 s behind a bare 429: the probes at the documented lengths are throttled at
    // 1,000 and 2,020 ms from the window's first unit, and the next, at 3,030 ms, admitted.
    const { scope } = lessonOfFive();
    let probe = scope.go(T0 + 1000);
    const throttledAtMs: number[] = [];
    while (probe.atMs < T0 + 3000) {
      throttledAtMs.push(probe.atMs - T0);
      scope.throttle(probe, probe.atMs + 20, null, { waitMs: 50 });
      probe = scope.go(scope.state.notBeforeMs);
    }
    expect(throttledAtMs).toEqual([1000, 2020]);
    expect(probe.atMs - T0).toBe(3030);
    scope.answer(probe, probe.atMs + 20);
    // Bounds 2,020 and 3,030 ms (1.5 times): 3 s, a hundredth longer, is taken; a success at the
    // length's own time takes it. The floor moves a quarter of the way below it (3,000 - 980 / 4):
    // a trial still tells a fixed window's reset that came sooner after the window's first unit.
    expect(scope.state).toMatchObject({ windowMs: 3030, windowFloorMs: 2755, windowSource: "inferred" });
    for (let i = 1; i <= 4; i++) scope.answer(scope.go(probe.atMs + 20 * i), probe.atMs + 20 * (i + 1));
    // The log is full: a trial at the middle of 2,755 and 3,030 ms would gain 137 ms, under a
    // twentieth of the window: none goes, and the next window's first start is at the length taken.
    expect(scope.go(probe.atMs + 100)).toMatchObject({ atMs: probe.atMs + 3030, probe: false });
    // Between bounds further apart (a first success long after the last probe), the upper bound stands.
    const other = lessonOfFive().scope;
    other.throttle(other.go(T0 + 1000), T0 + 1020, null, { waitMs: 50 });
    const late = other.go(T0 + 4000);
    other.answer(late, late.atMs + 20);
    expect(other.state).toMatchObject({ windowMs: 4000, windowFloorMs: 1000 });
  });

  it("no trial goes that would gain under a twentieth of the window, however fast the answers (two round trips of 20 ms are 40 ms of a 10.1 s window)", () => {
    const withFloor = (windowFloorMs: number) => {
      const slots: Array<[number, number, number]> = [0, 20, 40, 60, 80].map((offsetMs, i) => [T0 + offsetMs, i + 1, 1]);
      return new Scope(T0 + 100, {}, { ...emptyState(T0), limit: 5, windowMs: 10_100, windowSource: "inferred", refill: "window", windowFloorMs, rttMs: 20, slots, seq: 5, learnedAtSeq: 1, lessonSeq: 1, lessonSentAtMs: T0 });
    };
    // The middle of 9,200 and 10,100 ms gains 450 ms: over two round trips, under a twentieth (505 ms).
    // Probed at the documented lengths, a window of one is bounded by it and the one before (5 s
    // here): at a hundredth, five trials in a row failed against it, at a twentieth three.
    expect(withFloor(9200).go(T0 + 100)).toMatchObject({ atMs: T0 + 10_100, probe: false });
    // The middle of 9,000 and 10,100 ms gains 550 ms: the trial goes.
    expect(withFloor(9000).go(T0 + 100)).toMatchObject({ atMs: T0 + 9550, probe: true, why: WINDOW_TRIAL_WHY });
  });

  it("a window learned as an upper bound is tried shorter: the next window's first start goes alone at the middle of the bounds; its throttle raises the floor, its success starts the window there", () => {
    // A lesson of 5 at T0, then probes that find the window longer, and a first success at 5 s.
    const { scope } = lessonOfFive();
    const probe = scope.go(T0 + 3000);
    scope.throttle(probe, probe.atMs + 20, null, { waitMs: 500 });
    expect(scope.state.windowFloorMs).toBe(probe.atMs - T0);
    // The next probe goes at the next documented length, 5 s (a hundredth longer), and is admitted.
    const first = scope.go(T0 + 5000);
    expect(first.atMs).toBe(T0 + 5050);
    scope.answer(first, first.atMs + 20);
    expect(scope.state).toMatchObject({ windowMs: 5050, windowSource: "inferred", windowFloorMs: 3000 });
    // After a lesson with no wait told the scope starts again from one in flight (restartSlowStart):
    // the window's units go one answer after another here.
    for (let i = 1; i <= 4; i++) scope.answer(scope.go(first.atMs + 20 * i), first.atMs + 20 * (i + 1));
    // The log is full until 10.1 s; the trial goes at the middle of 3 and 5.05 s after the window's first unit.
    const trial = scope.go(first.atMs + 100);
    expect(trial).toMatchObject({ atMs: first.atMs + 4025, probe: true, why: WINDOW_TRIAL_WHY });
    expect(scope.claim(first.atMs + 100)).toMatchObject({ kind: "wait" });
    // Throttled: the window is longer than 4,025 ms; the next trial is at the middle of that and 5,050 ms.
    scope.throttle(trial, trial.atMs + 20, null, { waitMs: 500 });
    expect(scope.state).toMatchObject({ windowMs: 5050, windowFloorMs: 4025, limit: 5, windowSource: "inferred" });
    const second = scope.go(trial.atMs + 20);
    expect(second).toMatchObject({ atMs: first.atMs + 4538, probe: true, why: WINDOW_TRIAL_WHY });
    // Admitted: the window's units are taken to have left by then, and the rest go as the last
    // window's did, 20 ms apart (a trial's throttle is read by the trial: no slow start again).
    scope.answer(second, second.atMs + 20);
    const rest = Array.from({ length: 4 }, () => scope.go(second.atMs + 20));
    expect(rest.map((g) => g.atMs - second.atMs)).toEqual([20, 40, 60, 80]);
    // A sixth waits: the limit stands (5 in the window that began with the trial).
    expect(scope.go(second.atMs + 20).atMs).toBeGreaterThan(second.atMs + 4000);
  });

  it("a throttle on a rate whose limit is one request's units already lengthens its window instead (the rate is cut by the same fifth)", () => {
    const scope = new Scope(T0, {}, { ...emptyState(T0), limit: 1, windowMs: 993, windowSource: "inferred", refill: "bucket", learnedAtSeq: 1, lessonSentAtMs: T0, lessonSeq: 1, seq: 1 });
    const next = scope.go(T0 + 1000);
    scope.throttle(next, next.atMs + 20, 500);
    expect(scope.state).toMatchObject({ limit: 1, windowMs: Math.round(993 / 0.8), refill: "bucket" });
  });

  it("no trial where the server told the wait (the window is read from it), nor where the gain is under two round trips", () => {
    const told = new Scope();
    const sent = successes(told, 5, 20);
    const sixth = told.go(sent[4]!.atMs + 20);
    told.throttle(sixth, sixth.atMs + 20, 900);
    expect(told.state.windowFloorMs).toBe(0);
    // A full window of 5 sent at T0, learned as 5 per 5 s from throttles, answers in 20 ms.
    const full = (windowFloorMs: number): Scope =>
      new Scope(T0, {}, { ...emptyState(T0), seq: 5, limit: 5, windowMs: 5000, windowSource: "inferred", windowFloorMs, rttMs: 20, learnedAtSeq: 1, slots: [1, 2, 3, 4, 5].map((seq) => [T0, seq, 1] as [number, number, number]) });
    // Bounds 3 and 5 s apart by 2 s: the next window's first start is tried at 4 s.
    expect(full(3000).go(T0 + 100)).toMatchObject({ atMs: T0 + 4000, why: WINDOW_TRIAL_WHY });
    // Bounds 40 ms apart: a trial would gain 20 ms, less than two round trips; the window is paced as learned.
    const narrow = full(4960).go(T0 + 100);
    expect(narrow.atMs).toBe(T0 + 5000);
    expect(narrow.why).not.toBe(WINDOW_TRIAL_WHY);
  });
});
