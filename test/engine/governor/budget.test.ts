/**
 * A budget the server shows (remaining, limit, reset, window): the governor's starts never
 * exceed the limit within any window, with the server's own count fed back through observe.
 * The model servers are in ./sim.ts: a sliding log (at most `limit` in any window) and fixed
 * windows (at most `limit` per aligned window), both counting a request at its start.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fixedWindow, mostInAnyWindow, runWorkers, simulate, slidingLog, tokenBucket, type Admission, type SimOptions } from "./sim";
import { claim, emptyState, type ClaimResult } from "../../../src/engine/governor";
import { Scope, shown, successes, T0, type Go } from "./helpers";

const arbitraryRun = {
  limit: fc.integer({ min: 1, max: 30 }),
  windowMs: fc.integer({ min: 20, max: 5000 }),
  rttMs: fc.integer({ min: 1, max: 2000 }),
  /** How far before the run the fixed windows began. */
  phaseMs: fc.integer({ min: 0, max: 10_000 }),
  arrivalsMs: fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 80 }),
  draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
};

type Run = { limit: number; windowMs: number; rttMs: number; phaseMs: number; arrivalsMs: number[]; draw: number };

function base(run: Run, shows: SimOptions["shows"]): Omit<SimOptions, "server"> {
  return { arrivalsMs: run.arrivalsMs.map((a) => T0 + a), rttMs: run.rttMs, shows, throttleSaysWait: true, startMs: T0, draws: [run.draw] };
}

/** Starts per aligned window of a fixed-window server. */
function mostPerFixedWindow(startsMs: readonly number[], windowMs: number, originMs: number): number {
  const counts = new Map<number, number>();
  for (const atMs of startsMs) {
    const index = Math.floor((atMs - originMs) / windowMs);
    counts.set(index, (counts.get(index) ?? 0) + 1);
  }
  return Math.max(0, ...counts.values());
}

/**
 * One grant more than the governor gave, written into its state as another process sharing it can
 * add from an older reading: started at atMs, out for 30 s. Returns its seq.
 */
function grantOneMore(scope: Scope, atMs: number): number {
  const extraSeq = scope.state.seq + 1;
  scope.state.seq = extraSeq;
  scope.state.slots.push([atMs, extraSeq, 1]);
  scope.state.inFlight.push([extraSeq, atMs + 30_000, scope.state.inFlight.length + 1]);
  return extraSeq;
}

describe("a shown budget is never overrun", () => {
  it("sliding log: random limit, window, round trip and arrivals give at most `limit` starts in any window, no 429, no start before its floor", () => {
    fc.assert(
      fc.property(fc.record(arbitraryRun), (run) => {
        const result = simulate({ server: slidingLog(run.limit, run.windowMs), ...base(run, "budget") });
        expect(result.unfinished).toBe(0);
        expect(result.earlyGrants).toBe(0);
        expect(result.throttled).toBe(0);
        expect(mostInAnyWindow(result.startsMs, run.windowMs)).toBeLessThanOrEqual(run.limit);
      }),
      { numRuns: 400 },
    );
  });

  it("fixed windows: at most `limit` starts in each of the server's windows, no 429", () => {
    fc.assert(
      fc.property(fc.record(arbitraryRun), (run) => {
        const originMs = T0 - run.phaseMs;
        const result = simulate({ server: fixedWindow(run.limit, run.windowMs, originMs), ...base(run, "budget") });
        expect(result.unfinished).toBe(0);
        expect(result.earlyGrants).toBe(0);
        expect(result.throttled).toBe(0);
        expect(mostPerFixedWindow(result.startsMs, run.windowMs, originMs)).toBeLessThanOrEqual(run.limit);
      }),
      { numRuns: 400 },
    );
  });

  it("behind whole-second resets (X-RateLimit-Reset), a reset a second late is not read as a fixed window twice the length the readings bound", () => {
    // A sliding window of 10 per second. The first ten start at 950-1000 ms; their reset, 1950 ms,
    // reads as 2000: the window is at most 1050 ms. The next start, just after 2000 ms, leaves the
    // log just after 3000 ms, which reads as 4000: two resets 2 s apart.
    const reading = (remaining: number, resetAtMs: number) => shown({ remaining, limit: 10, resetAtMs });
    const scope = new Scope(T0 + 950);
    scope.answer(scope.go(T0 + 950), T0 + 1000, { budget: reading(9, T0 + 2000) });
    const first = Array.from({ length: 9 }, () => scope.go(T0 + 1000));
    first.forEach((go, i) => scope.answer(go, T0 + 1050, { budget: reading(8 - i, T0 + 2000) }));
    expect(scope.state).toMatchObject({ windowMs: 1050, windowSource: "inferred", refill: "window" });
    const afterReset = scope.go(T0 + 1050);
    expect(afterReset.atMs).toBe(T0 + 2000);
    scope.answer(afterReset, T0 + 2050, { budget: reading(9, T0 + 4000) });
    // Not a fixed window of 2 s: the bound of 1050 ms stays, and so does the sliding reading.
    expect(scope.state).toMatchObject({ windowMs: 1050, refill: "window" });
    const second = Array.from({ length: 9 }, () => scope.go(T0 + 2050));
    second.forEach((go, i) => scope.answer(go, T0 + 2100, { budget: reading(8 - i, T0 + 4000) }));
    // The unit started at 2000 ms is back 1050 ms later, not at the announced 4000 ms.
    expect(scope.go(T0 + 2100).atMs).toBe(T0 + 3050);
  });

  it("a token bucket whose reset is the time until it is full again, in whole seconds: no 429, and about its rate rather than a full bucket per reset", () => {
    // Read as fixed windows (the bucket is full at the first reset), every later reset is a full
    // bucket away: a whole bucket per (window + up to a second). Workers each send one request at a time.
    // The first requests start at startMs past a whole second (where they start on one, the bucket
    // reads the same as fixed windows of its own rate, and is paced at that rate either way).
    for (const [limit, windowMs, rttMs, workers, startMs] of [[5, 1000, 20, 1, 980], [10, 1000, 100, 3, 950], [20, 2000, 30, 10, 970], [5, 1000, 20, 1, 20]] as const) {
      const wholeSecond = (ms: number) => Math.ceil(ms / 1000) * 1000;
      const budgetOf = (admission: Admission) => shown({ remaining: admission.remaining, limit, resetAtMs: wholeSecond(admission.resetAtMs) });
      const { throttled, lastStartMs } = runWorkers(new Scope(T0), tokenBucket(limit, windowMs), { workers, rttMs, startMs: T0 + startMs, jobs: 60, budgetOf });
      const bucket = `${limit} per ${windowMs} ms, answers in ${rttMs} ms, ${workers} worker(s), from ${startMs} ms`;
      expect(throttled, bucket).toBe(0);
      // The bucket's own least time for 60: its limit at once, the rest at its rate.
      const leastMs = ((60 - limit) * windowMs) / limit;
      expect(lastStartMs - T0 - startMs, bucket).toBeLessThan(leastMs * 1.15);
    }
  });

  it("a bucket's reset read a second on, less the Date's drift (980 ms), while the count runs on is a bucket, not a window", () => {
    // 100 refilling 20 per s, the reset the time until full in whole seconds, each read against the
    // Date of its own answer: the 21st unit pushes it past a whole second, and the offset estimate
    // narrowed since puts the new reset 980 ms after the last. Read as a window, the next 100 waited
    // for the reset 6 s out (lab:random seed 291 #1: 1.11 x ideal).
    const reading = (remaining: number, resetAtMs: number) => shown({ remaining, limit: 100, resetAtMs });
    const scope = new Scope(T0);
    scope.answer(scope.go(T0), T0 + 20, { budget: reading(99, T0 + 1040) });
    const burst = Array.from({ length: 20 }, () => scope.go(T0 + 20));
    burst.forEach((go, i) => scope.answer(go, T0 + 40, { budget: reading(98 - i, i < 19 ? T0 + 1040 : T0 + 2020) }));
    expect(scope.state.refill).toBe("bucket");
    // A reset that moved only by the drift (tens of ms) while the count runs on says nothing: a window's.
    const steady = new Scope(T0);
    steady.answer(steady.go(T0), T0 + 20, { budget: reading(99, T0 + 1040) });
    const more = Array.from({ length: 5 }, () => steady.go(T0 + 20));
    more.forEach((go, i) => steady.answer(go, T0 + 40, { budget: reading(98 - i, T0 + 1040 + 20 * (i % 2)) }));
    expect(steady.state.refill).not.toBe("bucket");
  });

  it("a bucket's documented rate (Shopify REST: its size per 20 s) is shortened where its count comes back faster, and kept where it does not", () => {
    // Shopify REST shows used/limit only; the rate is the one documented for the bucket's size.
    const estimated = (limit: number) => (admission: Admission) => shown({ remaining: admission.remaining, limit, restorePerSecond: limit / 20, restoreEstimated: true });
    // A small bucket proves its rate more slowly (a unit's floor is a third of it): within 1.5 x.
    for (const [limit, windowMs, workers, factor] of [[40, 4000, 10, 1.3], [10, 1000, 3, 1.3], [3, 500, 4, 1.5]] as const) {
      const bucket = `${limit} per ${windowMs} ms, ${workers} workers`;
      const { throttled, lastStartMs } = runWorkers(new Scope(T0), tokenBucket(limit, windowMs), { workers, rttMs: 50, startMs: T0, jobs: 200, budgetOf: estimated(limit) });
      expect(throttled, bucket).toBe(0);
      // Paced at the documented rate, 200 would take (200 - limit) * 20 s / limit: 80 to 1,313 s.
      expect(lastStartMs - T0, bucket).toBeLessThan((((200 - limit) * windowMs) / limit) * factor);
    }
    // Where the documented rate is the bucket's own, it stays: no 429.
    const { throttled, lastStartMs } = runWorkers(new Scope(T0), tokenBucket(40, 20_000), { workers: 10, rttMs: 50, startMs: T0, jobs: 100, budgetOf: estimated(40) });
    expect(throttled).toBe(0);
    expect(lastStartMs - T0).toBeGreaterThanOrEqual(((100 - 40) * 20_000) / 40 - 500);
  });

  it("a bucket shown smaller than the provider documents is paced at the provider's slowest documented rate (Shopify REST: 2 per s), not at the documented rate for its size", () => {
    // Shopify documents 2 per s for its smallest bucket (40); a count of 3 is no plan of its, and its
    // documented size per 20 s (0.15 per s) put a unit 6.7 s apart behind a window of 3 per s (lab:random
    // seed 1951 #3: 3.20 x ideal; 1.04 x from the floor).
    const withFloor = (limit: number) => (admission: Admission) => shown({ remaining: admission.remaining, limit, restorePerSecond: limit / 20, restoreEstimated: true, restoreFloorPerSecond: 2 });
    const { throttled, lastStartMs } = runWorkers(new Scope(T0), fixedWindow(3, 1000, T0), { workers: 2, rttMs: 200, startMs: T0, jobs: 24, budgetOf: withFloor(3) });
    expect(throttled).toBeLessThanOrEqual(3);
    // At the documented 0.15 per s, 21 after the first bucketful take 140 s; at the floor, 10.5 s.
    expect(lastStartMs - T0).toBeLessThan(15_000);
  });

  it("429s on starts the floor paced double the window, once per claim since the last lesson, up to the documented rate's", () => {
    // A bucket of 10 per 60 s behind the count: slower than the floor (10 per 5 s) and than the
    // documented 10 per 20 s. Each 429 on a start the floor (or the last lesson) paced doubles the
    // window; paced at the floor all run, 80 jobs took 84 429s (lab:random seed 901 #26; 10 with this).
    const withFloor = (admission: Admission) => shown({ remaining: admission.remaining, limit: 10, restorePerSecond: 0.5, restoreEstimated: true, restoreFloorPerSecond: 2 });
    const scope = new Scope(T0);
    const { throttled } = runWorkers(scope, tokenBucket(10, 60_000), { workers: 10, rttMs: 50, startMs: T0, jobs: 40, budgetOf: withFloor });
    expect(throttled).toBeLessThanOrEqual(12);
    expect(scope.state.windowMs).toBe(20_000);
  });

  it("a bucket's documented rate shown only on its 429s is shortened by the successes admitted before them, and kept where they fit it", () => {
    // Shopify REST without the header on successes: only a 429 shows 40 of 40 used, at the documented 2 per s.
    const onThrottles = (admission: Admission) => (admission.admitted ? null : shown({ remaining: 0, limit: 40, restorePerSecond: 2, restoreEstimated: true }));
    // A bucket of 40 refilling 40 per s: 320 jobs at the documented rate would take (320 - 40) / 2 = 140 s.
    const fast = runWorkers(new Scope(T0), tokenBucket(40, 1000), { workers: 20, rttMs: 400, startMs: T0, jobs: 320, budgetOf: onThrottles });
    expect(fast.lastStartMs - T0).toBeLessThan(20_000);
    expect(fast.throttled).toBeLessThanOrEqual(20);
    // Where the documented rate is the bucket's own, the successes fit it: it stays (100 jobs: 30 s at least).
    const documented = runWorkers(new Scope(T0), tokenBucket(40, 20_000), { workers: 20, rttMs: 400, startMs: T0, jobs: 100, budgetOf: onThrottles });
    expect(documented.lastStartMs - T0).toBeGreaterThanOrEqual(((100 - 40) * 20_000) / 40 - 1000);
    expect(documented.throttled).toBeLessThanOrEqual(20);
  });

  it("a bucket's documented rate shown only on its 429s, where every start at it is clean, is probed faster: a 429 ends the probe, and no probe spends at once what the slower rate left", () => {
    // Only a 429 shows the count (10 of 10 used), at the documented 0.5 per s for that size; the
    // servers refill four times as fast. Paced at the estimate, 200 jobs would take 380 s.
    const onThrottles = (admission: Admission) => (admission.admitted ? null : shown({ remaining: 0, limit: 10, restorePerSecond: 0.5, restoreEstimated: true }));
    for (const [name, server] of [["a token bucket of 10 per 5 s", tokenBucket(10, 5000)], ["a sliding 10 per 5 s", slidingLog(10, 5000)]] as const) {
      const { throttled, lastStartMs } = runWorkers(new Scope(T0), server, { workers: 4, rttMs: 50, startMs: T0, jobs: 200, budgetOf: onThrottles });
      expect(lastStartMs - T0, name).toBeLessThan(200_000);
      expect(throttled, name).toBeLessThanOrEqual(40);
    }
  });

  it("an estimated rate is probed two paced starts after the reading, then after a bucketful at each rate, from then on; a 429 showing the count takes the probe back, and the next waits for a bucketful", () => {
    const empty = { budget: shown({ remaining: 0, limit: 4, restorePerSecond: 0.2, restoreEstimated: true }) };
    // The first request's 429 shows 4 of 4 used at the documented 0.2 per s: a unit every 5 s.
    const scope = new Scope(T0);
    let nowMs = T0 + 50;
    let lastMs: number | null = null;
    // Starts answered 50 ms after each; one far ahead is claimed again when near: ask then.
    const send = (count: number): { gapsMs: number[]; windowsMs: Array<number | null> } => {
      const gapsMs: number[] = [];
      const windowsMs: Array<number | null> = [];
      for (let i = 0; i < count; i++) {
        let result = scope.claim(nowMs);
        while (result.kind === "wait") result = scope.claim(result.untilMs);
        if (result.kind !== "go") expect.fail(JSON.stringify(result));
        gapsMs.push(lastMs === null ? 0 : result.atMs - lastMs);
        lastMs = result.atMs;
        nowMs = result.atMs + 50;
        scope.answer(result, nowMs);
        windowsMs.push(scope.state.windowMs);
      }
      return { gapsMs, windowsMs };
    };
    scope.throttle(scope.go(T0), T0 + 50, null, empty);
    expect(scope.state.windowMs).toBe(20_000);
    // The first start has none before it to show its pacing; the next two were paced 5 s apart: halved.
    expect(send(3)).toEqual({ gapsMs: [0, 5000, 5000], windowsMs: [20_000, 20_000, 10_000] });
    // At the faster rate from the third's answer on (not back to the 429): after the first start
    // (again none before it in the log), a bucketful paced at it halves the window again.
    expect(send(5)).toEqual({ gapsMs: [2550, 2500, 2500, 2500, 2500], windowsMs: [10_000, 10_000, 10_000, 10_000, 5000] });
    // The probe's 429 takes it back to the rate paced cleanly; the next probe waits for a bucketful.
    let probe = scope.claim(nowMs);
    while (probe.kind === "wait") probe = scope.claim(probe.untilMs);
    if (probe.kind !== "go") expect.fail(JSON.stringify(probe));
    nowMs = probe.atMs + 50;
    lastMs = null;
    scope.throttle(probe, nowMs, null, empty);
    expect(scope.state.windowMs).toBe(10_000);
    // (The first start waits for the 429's unit; the room that wait left lets the next go sooner than
    // the pace, no evidence of it.) The window is halved again at the fourth start paced at 2.5 s.
    const after = send(12);
    const halvedAt = after.windowsMs.indexOf(5000);
    expect(after.windowsMs.slice(0, halvedAt).every((windowMs) => windowMs === 10_000)).toBe(true);
    expect(after.gapsMs.slice(1, halvedAt + 1).filter((gapMs) => gapMs >= 2500).length).toBe(4);
    expect(after.gapsMs[halvedAt]).toBe(2500);
  });

  it("a burst's 429s that each show the bucket empty prove no refill: a rejected request is not in the count, so the estimated window stays", () => {
    // Slow start with nothing shown until 16 are granted at once and sent over 150 ms; the first is
    // admitted, the other 15 are rejected, each 429 showing 20 of 20 used at the documented 1 per s
    // for that size.
    const scope = new Scope(T0);
    let nowMs = T0;
    let burst: Go[] = [];
    while (burst.length < 16) {
      burst = [];
      for (let r = scope.claim(nowMs); r.kind === "go" && burst.length < 16; r = scope.claim(nowMs)) burst.push(r);
      if (burst.length < 16) for (const granted of burst) scope.answer(granted, (nowMs += 1));
      nowMs += 100;
    }
    const empty = { budget: shown({ remaining: 0, limit: 20, restorePerSecond: 1, restoreEstimated: true }) };
    scope.answer(burst[0]!, nowMs);
    scope.throttle(burst[1]!, nowMs, 1000, empty);
    const learnedMs = scope.state.windowMs;
    expect(scope.state.refill).toBe("bucket");
    for (const [i, granted] of burst.slice(2).entries()) scope.throttle({ seq: granted.seq, atMs: granted.atMs + i * 10 }, nowMs + 150, 1000, empty);
    expect(scope.state.windowMs).toBe(learnedMs);
  });

  it("a bucket's estimated rate grants starts at most two units' spacing ahead: a start further off is claimed again when near, at the rate known then", () => {
    // Shopify REST shows 40 of 40 used; its documented rate for that size is 2 per s (500 ms a unit).
    const scope = Scope.afterReading(T0 + 50, shown({ remaining: 0, limit: 40, restorePerSecond: 2, restoreEstimated: true }));
    const results = [scope.claim(T0 + 50), scope.claim(T0 + 50), scope.claim(T0 + 50)];
    expect(results.map((r) => r.kind)).toEqual(["go", "go", "wait"]);
    const [first, second, third] = results as [Go, Go, Extract<ClaimResult, { kind: "wait" }>];
    expect(second.atMs - first.atMs).toBe(500);
    // It asks again when its start (500 ms after the second) is two units (1 s) away; nothing is reserved for it.
    expect(third.untilMs).toBe(second.atMs + 500 - 1000);
    expect(scope.state.slots.map(([, seq]) => seq)).toEqual([first.seq, second.seq]);
  });

  // Found by a random scenario (seed 141 #29: 50 workers, a bucket of 40 per 60 s): starts beyond
  // the horizon join no queue, and the newest request took each as it came within reach while the
  // oldest waited out their deadline (37 of 320 jobs deferred; none with this).
  it("a request that has waited longer reaches a start beyond an estimated rate's horizon first, by up to a quarter of it", () => {
    const scope = Scope.afterReading(T0 + 50, shown({ remaining: 0, limit: 40, restorePerSecond: 2, restoreEstimated: true }));
    const second = [scope.go(T0 + 50), scope.go(T0 + 50)][1]!;
    // The next start is 500 ms after the second; asked 1,100 ms before it, beyond the horizon of two units (1 s).
    const nextAtMs = second.atMs + 500;
    const askAtMs = nextAtMs - 1100;
    const ask = (waitedMs: number | undefined) => claim(scope.state, { nowMs: askAtMs, latestStartMs: askAtMs + 3_600_000, ...(waitedMs === undefined ? {} : { waitedMs }) }, scope.options).result;
    expect(ask(undefined)).toMatchObject({ kind: "wait", untilMs: nextAtMs - 1000 });
    // Waited 1 s: 1,000 x (1 + 0.25 x 1/11) = 1,023 ms, still short of it.
    expect(ask(1000)).toMatchObject({ kind: "wait", untilMs: nextAtMs - 1023 });
    // Waited 30 s: 1,000 x (1 + 0.25 x 30/40) = 1,188 ms: granted, the same start.
    expect(ask(30_000)).toMatchObject({ kind: "go", atMs: nextAtMs });
    // Never more than a quarter: 1,300 ms ahead waits however long it waited; a wait that is no number is none.
    const far = claim(scope.state, { nowMs: nextAtMs - 1300, latestStartMs: nextAtMs + 3_600_000, waitedMs: 1e11 }, scope.options).result;
    expect(far).toMatchObject({ kind: "wait" });
    expect(ask(Number.NaN)).toMatchObject({ kind: "wait", untilMs: nextAtMs - 1000 });
    expect(ask(-5000)).toMatchObject({ kind: "wait", untilMs: nextAtMs - 1000 });
  });

  it("a bucket's estimated rate grants no start more than 2 s ahead, however slow the estimate: a later one is claimed when near, at the rate the count proves by then", () => {
    // 10 of 10 used; the documented 2 per s for 40, scaled to 10, is 0.5 per s: 2 s a unit.
    const scope = Scope.afterReading(T0 + 50, shown({ remaining: 0, limit: 10, restorePerSecond: 0.5, restoreEstimated: true }));
    const first = scope.go(T0 + 50);
    expect(first.atMs - (T0 + 50)).toBeLessThanOrEqual(2000);
    const next = scope.claim(T0 + 50);
    expect(next).toMatchObject({ kind: "wait", untilMs: first.atMs + 2000 - 2000 });
    expect(scope.state.slots.map(([, seq]) => seq)).toEqual([first.seq]);
  });

  it("a bucket takes no more requests in flight than it holds, however fast it refills: the next goes when one is answered", () => {
    // 3 of 3 left after the probe's answer, refilling 60 per s (a unit every 16.7 ms): as a rate, a
    // fourth start would go 17 ms on while the first three are still out. A concurrency limit of 3
    // behind Shopify REST's used/limit reads just so, and throttles that fourth.
    const scope = Scope.afterReading(T0 + 50, shown({ remaining: 3, limit: 3, restorePerSecond: 60 }));
    const three = [scope.go(T0 + 50), scope.go(T0 + 50), scope.go(T0 + 50)];
    expect(scope.claim(T0 + 50)).toMatchObject({ kind: "wait" });
    expect(scope.claim(T0 + 80)).toMatchObject({ kind: "wait" });
    scope.answer(three[0]!, T0 + 100, { budget: shown({ remaining: 1, limit: 3, restorePerSecond: 60 }) });
    expect(scope.go(T0 + 100).atMs).toBeGreaterThanOrEqual(T0 + 100);
    expect(scope.claim(T0 + 100)).toMatchObject({ kind: "wait" });
  });

  it("a bucket's requests in flight are counted at the start asked for: starts granted ahead within two round trips of it count, further ones do not", () => {
    // None of 3 left when the probe was counted (T0), refilling 30 per s; its answer took 50 ms.
    const scope = Scope.afterReading(T0 + 50, shown({ remaining: 0, limit: 3, restorePerSecond: 30 }));
    const three = [scope.go(T0 + 50), scope.go(T0 + 50), scope.go(T0 + 50)];
    expect(three.map((g) => Math.round(g.atMs - T0))).toEqual([50, 67, 100]);
    // A fourth at 133 ms: the first is out, the other two start within two round trips (100 ms)
    // before it, though the 67 ms one is due back by then: it waits for an answer.
    expect(scope.claim(T0 + 50)).toMatchObject({ kind: "wait" });
    // A slow bucket's starts, a second apart, are each answered before the next: none is held.
    const slow = Scope.afterReading(T0 + 50, shown({ remaining: 0, limit: 3, restorePerSecond: 1 }));
    expect([slow.claim(T0 + 50), slow.claim(T0 + 50), slow.claim(T0 + 50), slow.claim(T0 + 50)].map((r) => r.kind)).toEqual(["go", "go", "go", "go"]);
  });

  it("a start is marked as laid from an estimated rate only where the bucket's rate is an estimate and its count is shown", () => {
    const estimated = Scope.afterReading(T0 + 50, shown({ remaining: 0, limit: 10, restorePerSecond: 0.5, restoreEstimated: true }));
    expect(estimated.go(T0 + 50)).toMatchObject({ revisable: true });
    const stated = Scope.afterReading(T0 + 50, shown({ remaining: 0, limit: 10, restorePerSecond: 0.5 }));
    expect(stated.go(T0 + 50)).toMatchObject({ revisable: false });
    // A rate a lesson measured with nothing shown is an estimate too, but no count can prove it faster.
    const learned = new Scope();
    const sent = successes(learned, 10, 10);
    learned.throttle(learned.go(sent[9]!.atMs + 10), sent[9]!.atMs + 30, 1000);
    const [, b] = successes(learned, 2, 10, learned.state.notBeforeMs);
    const c = learned.go(b!.atMs + 10);
    learned.throttle(c, c.atMs + 10, 500);
    expect(learned.state).toMatchObject({ refill: "bucket", windowSource: "inferred", anchor: null });
    expect(learned.go(learned.state.notBeforeMs)).toMatchObject({ revisable: false });
  });

  it("a budget shown only on throttles: after the reset, a success showing nothing brings the limit back instead of sending one probe at a time", () => {
    const scope = new Scope();
    const five = successes(scope, 5, 20);
    // The sixth is throttled, and only its answer shows the budget: none of 5 left until T0 + 1 s.
    const sixth = scope.go(five[4]!.atMs + 20);
    scope.throttle(sixth, sixth.atMs + 20, T0 + 1000 - (sixth.atMs + 20), { budget: shown({ remaining: 0, limit: 5, resetAtMs: T0 + 1000 }) });
    // The sixth went out knowing nothing: its throttle is the lesson, not others spending unseen.
    expect(scope.state.reserveUnits).toBe(0);
    // After the reset one request learns the new budget; its answer shows nothing.
    const probe = scope.go(T0 + 1000);
    expect(probe.probe).toBe(true);
    expect(scope.claim(T0 + 1001).kind).toBe("wait");
    scope.answer(probe, probe.atMs + 20);
    // The other four of the limit go at once (they went one round trip apart).
    const four = Array.from({ length: 4 }, () => scope.go(probe.atMs + 20));
    expect(four.map((g) => g.atMs)).toEqual(Array<number>(4).fill(probe.atMs + 20));
    // The limit is spent by our count: the next one probes, and the others wait for its answer.
    expect(scope.go(probe.atMs + 20).probe).toBe(true);
    expect(scope.claim(probe.atMs + 21).kind).toBe("wait");
  });

  it("a budget shown only on throttles, spent after its reset with no window known: a success lets two go where one probe went, and the claims it does not count wait for the next", () => {
    const scope = new Scope();
    const five = successes(scope, 5, 20);
    const sixth = scope.go(five[4]!.atMs + 20);
    scope.throttle(sixth, sixth.atMs + 20, T0 + 1000 - (sixth.atMs + 20), { budget: shown({ remaining: 0, limit: 5, resetAtMs: T0 + 1000 }) });
    const probe = scope.go(T0 + 1000);
    scope.answer(probe, probe.atMs + 20);
    const four = Array.from({ length: 4 }, () => scope.go(probe.atMs + 20));
    // The limit is spent by our count. The first of the four answers: two go, not one probe.
    scope.answer(four[0]!, probe.atMs + 40);
    const after = [scope.claim(probe.atMs + 40), scope.claim(probe.atMs + 40), scope.claim(probe.atMs + 40)];
    expect(after.map((r) => (r.kind === "go" ? (r.probe ? "probe" : "go") : r.kind))).toEqual(["go", "go", "probe"]);
    // The other three were granted before that answer: they are in what it left, and give nothing
    // back; once the probe has answered too, the reading is spent again and the next one probes.
    for (const granted of four.slice(1)) scope.answer(granted, probe.atMs + 41);
    scope.answer(after[2] as Go, probe.atMs + 42);
    expect(scope.claim(probe.atMs + 42)).toMatchObject({ kind: "go", probe: true });
  });

  it("a budget shown only on throttles with its window's length (IETF w=): once spent by our count after the reset, starts follow the window, not one probe per answer", () => {
    const scope = new Scope();
    const five = successes(scope, 5, 20);
    const sixth = scope.go(five[4]!.atMs + 20);
    scope.throttle(sixth, sixth.atMs + 20, T0 + 1000 - (sixth.atMs + 20), { budget: shown({ remaining: 0, limit: 5, resetAtMs: T0 + 1000, windowMs: 1000 }) });
    expect(scope.state).toMatchObject({ windowMs: 1000, windowSource: "shown" });
    const probe = scope.go(T0 + 1000);
    scope.answer(probe, probe.atMs + 20);
    const four = Array.from({ length: 4 }, () => scope.go(probe.atMs + 20));
    for (const granted of four) scope.answer(granted, probe.atMs + 40);
    // The limit is spent by our count: the next start is when the window's first unit leaves it
    // (the probe's, a window after its send), granted now, not one probe at a time.
    const next = scope.claim(probe.atMs + 40);
    expect(next).toMatchObject({ kind: "go", probe: false });
    expect((next as Go).atMs).toBeGreaterThanOrEqual(probe.atMs + 1000);
    expect((next as Go).atMs).toBeLessThanOrEqual(probe.atMs + 1000 + 200);
  });

  it("a success without fields (a replay from an idempotency key) leaves the reading of a server that shows its count on successes alone, a probe's too", () => {
    const scope = Scope.afterReading(T0 + 20, shown({ remaining: 0, limit: 5, resetAtMs: T0 + 1000, windowMs: 1000 }));
    const next = scope.go(T0 + 1000);
    expect(next.probe).toBe(false);
    scope.answer(next, next.atMs + 20);
    expect(scope.state.anchor).toMatchObject({ remaining: 0, resetAtMs: T0 + 1000 });
    // No window shown: the first request after the reset probes, and its answer has no fields.
    const unknownWindow = Scope.afterReading(T0 + 20, shown({ remaining: 0, limit: 5, resetAtMs: T0 + 1000 }));
    const probe = unknownWindow.go(T0 + 1000);
    expect(probe.probe).toBe(true);
    unknownWindow.answer(probe, probe.atMs + 20);
    expect(unknownWindow.state.anchor).toMatchObject({ remaining: 0, resetAtMs: T0 + 1000 });
  });

  it("a reset that moves on while the count runs down reads as a bucket (from fixed or sliding readings), but not where others spend unseen", () => {
    const five = (remaining: number, resetAtMs: number) => shown({ remaining, limit: 5, resetAtMs });
    /** Readings of 5 with whole-second resets; `full` a full budget after the first reset (read as a fixed window). */
    const readings = (full: boolean, othersSeen: boolean): Scope => {
      const scope = new Scope(T0 + 980);
      scope.answer(scope.go(T0 + 980), T0 + 1000, { budget: five(4, T0 + 2000) });
      for (const left of [3, 2, 1]) scope.answer(scope.go(T0 + 1000), T0 + 1020, { budget: five(left, T0 + 2000) });
      scope.answer(scope.go(T0 + 2000), T0 + 2020, { budget: five(full ? 4 : 3, T0 + 3000) });
      if (othersSeen) scope.state.reserveUnits = 1;
      const left = full ? 3 : 2;
      scope.answer(scope.go(T0 + 2020), T0 + 2040, { budget: five(left, T0 + 3000) });
      // The count continues (one fewer, one claim of ours), yet the reset is a second later.
      scope.answer(scope.go(T0 + 2040), T0 + 2060, { budget: five(left - 1, T0 + 4000) });
      return scope;
    };
    expect(readings(true, false).state).toMatchObject({ refill: "bucket", windowMs: 4900 });
    expect(readings(false, false).state).toMatchObject({ refill: "bucket" });
    // Where others spend unseen, no bucket is concluded; a fixed window's reset does not move before
    // it is reached either: the readings are a sliding window's.
    expect(readings(true, true).state.refill).toBe("window");
  });

  it("a reset that moves on a second or more before any window could move it reads as a bucket, though a unit came back meanwhile", () => {
    const forty = (remaining: number, resetAtMs: number) => shown({ remaining, limit: 40, resetAtMs });
    /** A bucket of 40 whose reset is its time until full, in whole seconds: 15 sent, then one more at sentAfterT0Ms finds a unit back and the reset a second on. */
    const readings = (sentAfterT0Ms: number): Scope => {
      const scope = Scope.afterReading(T0 + 20, forty(39, T0 + 2020));
      const burst = Array.from({ length: 14 }, () => scope.go(T0 + 20));
      burst.forEach((go, i) => scope.answer(go, T0 + 40, { budget: forty(38 - i, T0 + 2020) }));
      expect(scope.state.refill).toBe("window");
      scope.answer(scope.go(T0 + sentAfterT0Ms), T0 + sentAfterT0Ms + 20, { budget: forty(25, T0 + 3040) });
      return scope;
    };
    // Sent over a second and a quarter before the reset the last reading showed: no window moves its reset so early.
    expect(readings(200).state).toMatchObject({ refill: "bucket", windowSource: "inferred" });
    // Sent within that of it, a sliding window's oldest unit may have left (its reset is rounded up): not read so.
    expect(readings(800).state.refill).toBe("window");
  });

  /** A reading of a limit of 10 (per second, in the tests below). */
  const ten = (remaining: number, resetAtMs: number) => shown({ remaining, limit: 10, resetAtMs });

  it("a window read as fixed whose reset moves on before it is reached is sliding: the limit does not come back in full at the reset", () => {
    // Ten per 2 s, whole-second resets. The count is back in full at the first reset, as a sliding
    // window's is when its units were spent together: read as a fixed window of 2 s.
    const scope = new Scope(T0 + 20);
    scope.answer(scope.go(T0 + 20), T0 + 40, { budget: ten(9, T0 + 2000) });
    scope.answer(scope.go(T0 + 2000), T0 + 2020, { budget: ten(9, T0 + 4000) });
    expect(scope.state).toMatchObject({ refill: "fixed", windowMs: 2000 });
    scope.answer(scope.go(T0 + 2020), T0 + 2040, { budget: ten(8, T0 + 4000) });
    // Sent a second before that reset, a reading names one a second later (a unit came back, too).
    const mid = scope.go(T0 + 3000);
    scope.answer(mid, T0 + 3020, { budget: ten(8, T0 + 5000) });
    expect(scope.state).toMatchObject({ refill: "window", windowMs: 2000 });
    // Only the units spent at 2000 and 2020 ms come back within the next second; read as a fixed
    // window, the whole limit went at the 4000 ms reset.
    const starts: number[] = [];
    for (let i = 0; i < 20; i++) {
      const result = scope.claim(T0 + 3100);
      if (result.kind === "go") starts.push(result.atMs - T0);
    }
    expect(starts.filter((atMs) => atMs >= 4000 && atMs < 5000).length).toBeLessThanOrEqual(2);
  });

  it("a window read as fixed whose reset reads 980 ms on (a second, less the Date's drift) before it is reached is sliding too", () => {
    const scope = new Scope(T0 + 20);
    scope.answer(scope.go(T0 + 20), T0 + 40, { budget: ten(9, T0 + 2000) });
    scope.answer(scope.go(T0 + 2000), T0 + 2020, { budget: ten(9, T0 + 4000) });
    scope.answer(scope.go(T0 + 2020), T0 + 2040, { budget: ten(8, T0 + 4000) });
    expect(scope.state).toMatchObject({ refill: "fixed", windowMs: 2000 });
    scope.answer(scope.go(T0 + 3000), T0 + 3020, { budget: ten(8, T0 + 4980) });
    expect(scope.state.refill).toBe("window");
  });

  it("fixed windows read through a drifting Date: 920 ms between two resets is a 1 s window, and starts just before a reset may count in the window it opens", () => {
    const scope = new Scope(T0 + 20);
    scope.answer(scope.go(T0 + 20), T0 + 40, { budget: ten(9, T0 + 1000) });
    // The first answer after the reset finds the budget full; its reset reads 920 ms on, not 1000.
    scope.answer(scope.go(T0 + 1000), T0 + 1020, { budget: ten(9, T0 + 1920) });
    expect(scope.state).toMatchObject({ refill: "fixed", windowMs: 1000 });
    // The window's kind told (else its last unit waits for an answer: "a fixed window not yet told...").
    scope.state.concurrency = "ruled-out";
    // Nine more late in the window as we read it, 20 ms before its reset: the server's reset may be
    // earlier than ours, and those nine count in the next window too.
    const late = Array.from({ length: 9 }, () => scope.go(T0 + 1900));
    expect(late.every((go) => go.atMs === T0 + 1900)).toBe(true);
    expect(scope.go(T0 + 1900).atMs).toBe(T0 + 1920);
    // The window after is more than a window away: nothing is reserved there yet (later readings
    // may move it); the claim is made again when it is a window away.
    expect(scope.claim(T0 + 1900)).toMatchObject({ kind: "wait", untilMs: T0 + 1920 });
    expect(scope.go(T0 + 1920).atMs).toBe(T0 + 2920);
  });

  it("the probe sent at a reset to learn the next budget is answered by any reading that shows it: a request sent before our late estimate of the reset, counted after it", () => {
    const four = (remaining: number, resetAtMs: number) => shown({ remaining, limit: 4, resetAtMs });
    const scope = Scope.afterReading(T0 + 50, four(3, T0 + 1050));
    const [second, third] = [scope.go(T0 + 50), scope.go(T0 + 50)];
    scope.answer(second, T0 + 100, { budget: four(2, T0 + 1050) });
    scope.answer(third, T0 + 100, { budget: four(1, T0 + 1050) });
    const last = scope.go(T0 + 950);
    // The window is spent by our count: one request learns the next budget at the reset we read.
    const probe = scope.go(T0 + 950);
    expect(probe).toMatchObject({ atMs: T0 + 1050, probe: true });
    // The server's reset was at T0 + 1000 (we read it 50 ms late): the last request, sent at 950,
    // reached it after and found the limit back.
    scope.answer(last, T0 + 1050, { budget: four(3, T0 + 2050) });
    expect(scope.claim(T0 + 1050)).toMatchObject({ kind: "go", atMs: T0 + 1050, probe: false });
    expect(scope.claim(T0 + 1050)).toMatchObject({ kind: "go", atMs: T0 + 1050 });
    // Both went on the reading's count (3 left, less the probe's unit): the next waits.
    expect(scope.claim(T0 + 1050).kind).not.toBe("go");
  });

  it("a fixed window's start more than a window ahead is not reserved: 50 claims at once get the next window's ten and wait", () => {
    const scope = new Scope(T0 + 20);
    scope.answer(scope.go(T0 + 20), T0 + 40, { budget: ten(9, T0 + 1000) });
    scope.answer(scope.go(T0 + 1000), T0 + 1020, { budget: ten(9, T0 + 2000) });
    expect(scope.state).toMatchObject({ refill: "fixed", windowMs: 1000 });
    // The window's kind told (else its last unit waits for an answer: "a fixed window not yet told...").
    scope.state.concurrency = "ruled-out";
    const now = Array.from({ length: 50 }, () => scope.claim(T0 + 1020));
    // 9 left in this window; the next one waits for their answers, due within two round trips (model.ts answersMayTellKind).
    expect(now.filter((r) => r.kind === "go")).toHaveLength(9);
    expect(now.slice(9).every((r) => r.kind === "wait")).toBe(true);
    // Asked again once those answers are overdue: 10 in the next window (its start is within a window of now); the rest wait.
    const results = Array.from({ length: 41 }, () => scope.claim(T0 + 1070));
    const going = results.filter((r) => r.kind === "go");
    expect(going).toHaveLength(10);
    expect(going.every((r) => r.atMs === T0 + 2000)).toBe(true);
    expect(results.slice(10).every((r) => r.kind === "wait" && r.untilMs === T0 + 2000)).toBe(true);
  });

  // 10 per 1 s fixed windows ending on whole seconds. Joined 470 ms before a reset: a first bound of
  // 470 ms. Joined 170 ms before it (found in the real fan-out under load, 233 throttled of 433
  // calls): a bound under a second, which whole-second resets cannot resolve, though the next
  // reading's own reset (the next whole second) fits any sliding window up to a second.
  it.each([
    { beforeResetMs: 470, answerMs: 10, burstAnswerMs: 10, nextSendMs: 1300 },
    { beforeResetMs: 170, answerMs: 20, burstAnswerMs: 40, nextSendMs: 1007 },
  ])("a fixed window joined $beforeResetMs ms before its reset is not read as a sliding window of that length once the next window shows the full count", ({ beforeResetMs, answerMs, burstAnswerMs, nextSendMs }) => {
    const firstMs = T0 + 1000 - beforeResetMs;
    const scope = new Scope(firstMs);
    scope.answer(scope.go(firstMs), firstMs + answerMs, { budget: ten(9, T0 + 1000) });
    for (let left = 8; left >= 0; left--) scope.answer(scope.go(firstMs + answerMs), firstMs + answerMs + burstAnswerMs, { budget: ten(left, T0 + 1000) });
    expect(scope.state).toMatchObject({ windowMs: beforeResetMs, refill: "window" });
    scope.answer(scope.go(T0 + nextSendMs), T0 + nextSendMs + 3, { budget: ten(9, T0 + 2000) });
    expect(scope.state).toMatchObject({ refill: "fixed", windowMs: 1000 });
  });

  // Found by a property like the ones above with answers that show limit, remaining and reset but
  // not the window's length: after a quiet spell the budget looks full again, which a fixed window
  // and a sliding log whose units have all left read the same; the governor takes it for a fixed
  // window (its length the distance between the two resets), and lets two go at once while the
  // sliding log still holds one from 894 ms before. With the length shown, the reading is tested
  // (the case above); without it, requiring the same evidence left the fixed windows of
  // src/lab/real/fanout.ts (10 per second, whole-second resets) throttled 30 to 110 times in 200,
  // since a fixed window and a slightly shorter sliding one read the same there. It passes since
  // starts within RESET_DRIFT_MS before a fixed window's reset count in the window it opens
  // (src/engine/governor/model.ts); without that margin it fails again.
  it("a sliding log of 2 per 895 ms that does not show its length, after a quiet spell: no 429", () => {
    const result = simulate({ server: slidingLog(2, 895), arrivalsMs: [13393, 14287, 12499, 0, 14287].map((a) => T0 + a), rttMs: 1, shows: "budget without window", throttleSaysWait: true, startMs: T0 });
    expect(result.throttled).toBe(0);
  });

  // Found by the sliding-log property above: a sliding log of 2 per 558 ms was taken for a
  // fixed window (its budget looked full again after a reset, within the one-unit tolerance), and
  // the window's worth of starts then went at once while the log still held an older unit.
  it("a sliding log whose budget looks full after a reset is not taken for a fixed window (2 per 558 ms)", () => {
    const result = simulate({ server: slidingLog(2, 558), arrivalsMs: [0, 0, 1264, 1264, 0, 0].map((a) => T0 + a), rttMs: 1, shows: "budget", throttleSaysWait: true, startMs: T0 });
    expect(result.throttled).toBe(0);
    expect(result.state.refill).toBe("window");
    expect(mostInAnyWindow(result.startsMs, 558)).toBeLessThanOrEqual(2);
  });

  it("a fixed window is still learned when the reading proves it (units a sliding window would still count are shown gone)", () => {
    const scope = new Scope();
    const probe = scope.go(T0);
    // 10 per second, windows on the whole second: the probe and four more in the first window.
    scope.answer(probe, T0 + 20, { budget: shown({ remaining: 9, limit: 10, resetAtMs: T0 + 1000, windowMs: 1000 }) });
    const early = [scope.go(T0 + 900), scope.go(T0 + 900), scope.go(T0 + 900), scope.go(T0 + 900)];
    early.forEach((granted, i) => scope.answer(granted, T0 + 950, { budget: shown({ remaining: 8 - i, limit: 10, resetAtMs: T0 + 1000, windowMs: 1000 }) }));
    expect(scope.state.refill).toBe("window");
    // Just after the reset the budget is full again though four of ours went 100 ms before: fixed.
    const after = scope.go(T0 + 1000);
    scope.answer(after, T0 + 1020, { budget: shown({ remaining: 9, limit: 10, resetAtMs: T0 + 2000, windowMs: 1000 }) });
    expect(scope.state.refill).toBe("fixed");
  });

  // Found by the property test with fixed windows that do not show their length: the window is
  // inferred as (reset - the oldest counted start), which is the length of a sliding window but
  // only a lower bound for a fixed one (its reset is the window's end, not a window after the
  // oldest start). Here 19 ms is learned for a fixed window of 20 ms, and the third request is
  // sent 19 ms after the second, inside the same window: a 429. Not fixed here (choosing the
  // larger reading instead slows sliding windows whose resets are rounded up); see the report.
  it.fails("a fixed window of 1 per 20 ms that shows limit, remaining and reset but not its length: no 429", () => {
    const result = simulate({ server: fixedWindow(1, 20, T0), arrivalsMs: [1, 2, 2].map((a) => T0 + a), rttMs: 1, shows: "budget without window", throttleSaysWait: true, startMs: T0 });
    expect(result.throttled).toBe(0);
  });
});

describe("the edge of a shown window", () => {
  // HubSpot's headers over a limit of 2 requests in flight, the interval shown being the answers'
  // own 100 ms (src/lab/scenarios/probes/concurrency-10-hubspot-headers-20-workers-faults.json).
  const interval = (remaining: number) => shown({ remaining, limit: 2, windowMs: 100 });

  it("a unit whose request is still out is counted 1 ms past the window: the next start does not race its answer", () => {
    const scope = Scope.afterReading(T0 + 100, interval(1));
    const b = scope.go(T0 + 100);
    expect(b.atMs).toBe(T0 + 100);
    expect(scope.go(T0 + 150).atMs).toBe(T0 + 150);
    // b is out until T0 + 200: the start that needs its unit goes just after its window, not on the edge.
    expect(scope.go(T0 + 150).atMs).toBe(T0 + 201);
  });

  it("an answered unit leaves on the edge: a worker sending on its own answer pays nothing", () => {
    const scope = Scope.afterReading(T0 + 100, interval(1));
    const b = scope.go(T0 + 100);
    scope.answer(b, T0 + 200, { budget: interval(1) });
    // The probe's unit left at T0 + 100 and b's, answered, at T0 + 200: both units are back.
    expect(scope.go(T0 + 200).atMs).toBe(T0 + 200);
    expect(scope.go(T0 + 200).atMs).toBe(T0 + 200);
    expect(scope.go(T0 + 200).atMs).toBe(T0 + 301);
  });

  it("a learned window keeps its edge for units out too (an estimate with its own slack)", () => {
    const scope = new Scope(T0, {}, { ...emptyState(T0), seq: 2, limit: 2, windowMs: 100, windowSource: "inferred", refill: "window", slots: [[T0, 1, 1], [T0 + 50, 2, 1]], inFlight: [[1, T0 + 40_000, 1], [2, T0 + 40_000, 2]] });
    expect(scope.go(T0 + 60).atMs).toBe(T0 + 100);
  });
});

describe("spending from the server's count", () => {
  it.each([
    { remaining: 0, startAfterMs: 1000 },
    { remaining: 1, startAfterMs: 100 },
    { remaining: 3, startAfterMs: 100 },
  ])("with $remaining left until the reset (1 s), a claim 100 ms in starts $startAfterMs ms in", ({ remaining, startAfterMs }) => {
    const scope = Scope.afterReading(T0 + 50, shown({ remaining, limit: 5, resetAtMs: T0 + 1000, windowMs: null }));
    expect(scope.go(T0 + 100).atMs - T0).toBe(startAfterMs);
  });

  it("counts claims the server has not answered yet against what it showed", () => {
    const scope = Scope.afterReading(T0 + 50, shown({ remaining: 2, limit: 3, resetAtMs: T0 + 1000, windowMs: 1000 }));
    const a = scope.go(T0 + 60);
    const b = scope.go(T0 + 60);
    expect([a.atMs, b.atMs]).toEqual([T0 + 60, T0 + 60]);
    // Neither answered: the third must wait for the window, not reuse remaining = 2.
    expect(scope.go(T0 + 60).atMs).toBeGreaterThanOrEqual(T0 + 1000);
  });

  it("a claim the last reading counted as late, then rejected or replayed, gives its unit back", () => {
    for (const outcome of ["throttled", "replayed"] as const) {
      const scope = Scope.afterReading(T0 + 50, shown({ remaining: 2, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }));
      const early = scope.go(T0 + 60);
      const later = scope.go(T0 + 60);
      // The later claim is answered first: remaining 1 after it, the early one counted as late.
      scope.answer(later, T0 + 100, { budget: shown({ remaining: 1, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }) });
      expect(scope.state.anchor?.lateUnits).toBe(1);
      // The late one was never counted (a 429, or an answer replayed for its idempotency key).
      if (outcome === "throttled") scope.throttle(early, T0 + 110, 1000);
      else scope.answer(early, T0 + 110, { counted: false });
      expect(scope.state.anchor?.lateUnits).toBe(0);
      // So the unit remaining 1 speaks of is free now, not after the reset (a 429 on a shown budget
      // also teaches a unit of reserve for someone spending unseen, which holds that one back).
      if (outcome === "replayed") expect(scope.go(T0 + 200).atMs).toBe(T0 + 200);
    }
  });

  it("a later claim whose answer shows more remaining than the reading was counted first: the reading's count stays", () => {
    const scope = Scope.afterReading(T0 + 50, shown({ remaining: 3, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }));
    const first = scope.go(T0 + 60);
    const second = scope.go(T0 + 60);
    // The server counted the second first (2 left after it) and the first after (1 left), but the
    // first's answer is applied first: the second's "2 left" is the older count.
    scope.answer(first, T0 + 110, { budget: shown({ remaining: 1, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }) });
    scope.answer(second, T0 + 111, { budget: shown({ remaining: 2, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }) });
    expect(scope.state.anchor).toMatchObject({ remaining: 1, seq: second.seq, lateUnits: 0 });
    // It taught no spending by others either (the drop from 2 to 1 was ours).
    expect(scope.state).toMatchObject({ othersPerMs: 0, reserveUnits: 0 });
    expect(scope.go(T0 + 120).atMs).toBe(T0 + 120);
    expect(scope.go(T0 + 120).atMs).toBeGreaterThanOrEqual(T0 + 60_000);
  });

  it("a higher count sent in the last second before a whole-second reset may be the next window's: it is read as shown", () => {
    const scope = new Scope();
    const probe = scope.go(T0);
    // A 1 s window whose reset the server rounds up: the reading says T0 + 1000, the window may end sooner.
    scope.answer(probe, T0 + 20, { budget: shown({ remaining: 3, limit: 10, resetAtMs: T0 + 1000, windowMs: null }) });
    const first = scope.go(T0 + 30);
    const second = scope.go(T0 + 30);
    scope.answer(first, T0 + 50, { budget: shown({ remaining: 1, limit: 10, resetAtMs: T0 + 1000, windowMs: null }) });
    scope.answer(second, T0 + 51, { budget: shown({ remaining: 9, limit: 10, resetAtMs: T0 + 1000, windowMs: null }) });
    expect(scope.state.anchor).toMatchObject({ remaining: 9, seq: second.seq });
    // In a long window whose readings name the same reset, the last second before it tells them apart.
    const long = Scope.afterReading(T0 + 20, shown({ remaining: 3, limit: 10, resetAtMs: T0 + 600, windowMs: 60_000 }));
    const a = long.go(T0 + 30);
    const b = long.go(T0 + 30);
    long.answer(a, T0 + 50, { budget: shown({ remaining: 1, limit: 10, resetAtMs: T0 + 600, windowMs: 60_000 }) });
    long.answer(b, T0 + 51, { budget: shown({ remaining: 2, limit: 10, resetAtMs: T0 + 600, windowMs: 60_000 }) });
    expect(long.state.anchor).toMatchObject({ remaining: 1, seq: b.seq });
  });

  /** 100 per 10 s: a probe's reading at T0, then the next window back in full at reset1 (a fixed window of 10 s). */
  const fixedWindowOf100Per10s = () => {
    const scope = new Scope();
    const reset1 = T0 + 10_000;
    scope.answer(scope.go(T0), T0 + 50, { budget: shown({ remaining: 99, limit: 100, resetAtMs: reset1 }) });
    scope.answer(scope.go(reset1), reset1 + 50, { budget: shown({ remaining: 99, limit: 100, resetAtMs: reset1 + 10_000 }) });
    expect(scope.state).toMatchObject({ refill: "fixed", windowMs: 10_000 });
    return { scope, reset1 };
  };

  it("in a fixed window, others' spending is never more than the count since the window began less what we started in it", () => {
    const { scope, reset1 } = fixedWindowOf100Per10s();
    const ours = Array.from({ length: 20 }, () => scope.go(reset1 + 100));
    ours.slice(0, 19).forEach((claim, i) => scope.answer(claim, reset1 + 150, { budget: shown({ remaining: 98 - i, limit: 100, resetAtMs: reset1 + 10_000 }) }));
    expect(scope.state).toMatchObject({ othersPerMs: 0, reserveUnits: 0 });
    // A reading too high for what the server counted (answers applied in another order than the
    // server counted them, by executions sharing this state)...
    scope.state.anchor = { ...scope.state.anchor!, remaining: 95, lateUnits: 0 };
    // ...then 21 of ours counted (the first, and the 20 started since): 79 left. 95 - 79 is not others'.
    scope.answer(ours[19]!, reset1 + 400, { sentAtMs: reset1 + 300, budget: shown({ remaining: 79, limit: 100, resetAtMs: reset1 + 10_000 }) });
    expect(scope.state).toMatchObject({ othersPerMs: 0, reserveUnits: 0 });
  });

  it("in a fixed window our own starts already filling the limit: a throttle is our grant too many and teaches no reserve", () => {
    const learn = (ownStarts: number) => {
      const { scope, reset1 } = fixedWindowOf100Per10s();
      const out = Array.from({ length: ownStarts }, () => scope.go(reset1 + 100));
      expect(out.every((granted) => granted.atMs < reset1 + 10_000)).toBe(true);
      // One grant too many, as another process sharing this state can add from an older reading.
      const extraSeq = grantOneMore(scope, reset1 + 100);
      scope.throttle({ seq: extraSeq, atMs: reset1 + 100 }, reset1 + 160, 9000, { budget: shown({ remaining: 0, limit: 100, resetAtMs: reset1 + 10_000 }) });
      return scope.state.reserveUnits;
    };
    // 1 + 99 of ours counted in the window, and ours the one too many: the server's 100 are all ours.
    expect(learn(99)).toBe(0);
    // 1 + 50 of ours and the window is spent: someone else spent the rest, and a reserve is kept for them.
    expect(learn(50)).toBeGreaterThan(0);
  });

  it("a start just after the reset we read, counted by the server in the window before (our own burst at its start filled it), teaches no reserve: its reset reads up to a second late", () => {
    const learn = (ownStarts: number) => {
      const { scope, reset1 } = fixedWindowOf100Per10s();
      // The whole window's budget at its start, as a fan-out spends it.
      const out = Array.from({ length: ownStarts }, () => scope.go(reset1 + 100));
      expect(out.every((granted) => granted.atMs < reset1 + 10_000)).toBe(true);
      out.forEach((granted, i) => scope.answer(granted, reset1 + 200, { budget: shown({ remaining: 98 - i, limit: 100, resetAtMs: reset1 + 10_000 }) }));
      // The next window by our reading of the server's clock; the server's own reset is some tens of ms later.
      const early = scope.go(reset1 + 10_030);
      // Counted in the full window, throttled; its reset, in whole seconds, reads a second on.
      scope.throttle(early, reset1 + 10_080, 1000, { budget: shown({ remaining: 0, limit: 100, resetAtMs: reset1 + 11_000 }) });
      return scope.state.reserveUnits;
    };
    expect(learn(99)).toBe(0);
    // Half the window ours: the throttle still says someone else spent the rest.
    expect(learn(50)).toBeGreaterThan(0);
  });

  it("in a sliding log (or a first window not yet seen to be fixed), our own starts of the last window filling the limit: a throttle teaches no reserve either", () => {
    const learn = (ownStarts: number) => {
      // 100 per 10 s, the window shown (IETF w=10): the first window, before any reset was seen.
      const scope = Scope.afterReading(T0 + 50, shown({ remaining: 99, limit: 100, resetAtMs: T0 + 10_000, windowMs: 10_000 }));
      const out = Array.from({ length: ownStarts }, () => scope.go(T0 + 100));
      expect(out.every((granted) => granted.atMs === T0 + 100)).toBe(true);
      expect(scope.state.refill).toBe("window");
      const extraSeq = grantOneMore(scope, T0 + 100);
      scope.throttle({ seq: extraSeq, atMs: T0 + 100 }, T0 + 160, 10_000, { budget: shown({ remaining: 0, limit: 100, resetAtMs: T0 + 10_000, windowMs: 10_000 }) });
      return scope.state.reserveUnits;
    };
    // The probe and 99 more of ours in the last 10 s: the one too many is ours.
    expect(learn(99)).toBe(0);
    expect(learn(50)).toBeGreaterThan(0);
  });

  // Five processes over Redis, IETF fields with no window shown (fan-out-50-redis-5-processes): two
  // grants too many in a window taught a reserve of 2, and the next window held 98: a fourth window.
  it("a window of unknown length, our own starts since the reset it shows filling the limit: a throttle teaches no reserve", () => {
    const learn = (ownStarts: number) => {
      // 100 in a window whose length is not shown, its reset 10 s on.
      const scope = Scope.afterReading(T0 + 50, shown({ remaining: 99, limit: 100, resetAtMs: T0 + 10_000 }));
      Array.from({ length: ownStarts }, () => scope.go(T0 + 100));
      expect(scope.state).toMatchObject({ refill: "window", windowMs: null });
      const extraSeq = grantOneMore(scope, T0 + 100);
      // The throttle shows the reset 9.84 s on: the window is at least that long, so all of our starts are in it.
      scope.throttle({ seq: extraSeq, atMs: T0 + 100 }, T0 + 160, 9_840, { budget: shown({ remaining: 0, limit: 100, resetAtMs: T0 + 10_000 }) });
      return scope.state.reserveUnits;
    };
    expect(learn(99)).toBe(0);
    expect(learn(50)).toBeGreaterThan(0);
  });

  it("a late claim whose answer shows more remaining than the reading was in its count already: its unit is free", () => {
    // Five processes sharing one Redis: slots granted in one order reach the server in another.
    // 3 left; two claims; the later one is answered first, remaining 1: the early one is still out, maybe not counted yet.
    const lateClaim = () => {
      const scope = new Scope();
      scope.answer(scope.go(T0), T0 + 50, { budget: shown({ remaining: 3, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }) });
      const early = scope.go(T0 + 60);
      const later = scope.go(T0 + 60);
      scope.answer(later, T0 + 110, { budget: shown({ remaining: 1, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }) });
      expect(scope.state.anchor?.lateUnits).toBe(1);
      return { scope, early };
    };
    const { scope } = lateClaim();
    // Its answer is due within a round trip and may free the unit: a claim now is told to ask
    // again then, rather than booked after the reset (a booking never moves earlier).
    expect(scope.claim(T0 + 115)).toMatchObject({ kind: "wait", why: expect.stringContaining("answers still out") });
    // Once it is out longer than two round trips it no longer holds a claim back.
    expect(scope.go(T0 + 200).atMs).toBeGreaterThanOrEqual(T0 + 60_000);
    // Its answer shows remaining 2: the server counted it before the later one, so remaining 1 holds it.
    const fresh = lateClaim();
    fresh.scope.answer(fresh.early, T0 + 112, { budget: shown({ remaining: 2, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }) });
    expect(fresh.scope.state.anchor?.lateUnits).toBe(0);
    expect(fresh.scope.go(T0 + 120).atMs).toBe(T0 + 120);
    // Counted after the later one (remaining 0): it was late indeed, and nothing is left until the reset.
    const after = lateClaim();
    after.scope.answer(after.early, T0 + 112, { budget: shown({ remaining: 0, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }) });
    expect(after.scope.state.anchor?.lateUnits).toBe(1);
    expect(after.scope.go(T0 + 120).atMs).toBeGreaterThanOrEqual(T0 + 60_000);
  });

  it("a late claim sent before the reading's own request, answered more than a round trip after it (another process), was in its count: its unit is free", () => {
    // Executions in other processes: granted first, sent first, answered long after the one sent later.
    const scope = new Scope();
    scope.answer(scope.go(T0), T0 + 50, { budget: shown({ remaining: 3, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }) });
    const early = scope.go(T0 + 60);
    // Within two round trips of the early one: the reading need not count it yet (late).
    const later = scope.go(T0 + 120);
    scope.answer(later, T0 + 170, { budget: shown({ remaining: 1, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }) });
    expect(scope.state.anchor?.lateUnits).toBe(1);
    // Remaining 2: counted before the later one, which it was sent before.
    scope.answer(early, T0 + 600, { budget: shown({ remaining: 2, limit: 5, resetAtMs: T0 + 60_000, windowMs: null }) });
    expect(scope.state.anchor?.lateUnits).toBe(0);
    expect(scope.go(T0 + 610).atMs).toBe(T0 + 610);
  });

  it("a token bucket with a shown restore rate spends the request's cost and waits for just the points it lacks", () => {
    const scope = new Scope();
    const probe = scope.go(T0);
    // Shopify GraphQL: 1000 points, 50 restored per second, this query costs 100, 150 left.
    scope.answer(probe, T0 + 100, { budget: shown({ remaining: 150, limit: 1000, resetAtMs: null, windowMs: null, restorePerSecond: 50, unitsPerRequest: 100 }) });
    expect(scope.state).toMatchObject({ refill: "bucket", windowMs: 20_000, unitsPerRequest: 100 });
    expect(scope.go(T0 + 100).atMs).toBe(T0 + 100);
    // 150 - 100 = 50 left, + 5 restored by T0 + 100 (50 per second): the next 100 points need 45 more, 900 ms later.
    const next = scope.go(T0 + 100);
    expect(next.atMs).toBe(T0 + 1000);
  });

  it("a bucket's claims granted far ahead at once are spaced at its restore rate, not ever further apart", () => {
    // 10 per 5 s (one unit per 500 ms), 1 left: 40 workers claim at once.
    const scope = Scope.afterReading(T0 + 80, shown({ remaining: 1, limit: 10, resetAtMs: null, windowMs: null, restorePerSecond: 2, unitsPerRequest: null }));
    const starts = Array.from({ length: 40 }, () => scope.go(T0 + 80).atMs);
    const gaps = starts.slice(1).map((atMs, i) => atMs - starts[i]!);
    // The first takes the unit left; then one per restored unit (the refill a full bucket could not
    // hold was counted as lost, and the 40th start came at 7 minutes instead of 20 s).
    expect(gaps.slice(1).every((gapMs) => gapMs >= 499 && gapMs <= 501)).toBe(true);
    expect(starts[39]! - T0).toBeLessThan(21_000);
  });
});
