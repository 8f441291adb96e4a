/**
 * A sliding window's length learned from readings (src/engine/governor/sliding.ts): the reset bounds
 * it to within the whole second it is rounded to, and units of ours that the count no longer holds
 * take that second's slack out.
 */
import { describe, expect, it } from "vitest";
import { emptyState, observe, type GovernorState } from "../../../src/engine/governor";
import { DEFAULT_GOVERNOR_OPTIONS } from "../../../src/engine/governor/types";
import { Scope, shown, T0, type Go } from "./helpers";

const budget = (remaining: number, resetAfterT0Ms: number) => shown({ remaining, limit: 2, resetAtMs: T0 + resetAfterT0Ms });

/**
 * A limit of 2 per 1 s behind resets rounded up to whole seconds (at T0 + 50 + k s), as the lab's
 * sliding-1s-whole-second-resets shows it: the first window's reading bounds the window at 1,050 ms,
 * and the reading after the next reset names a reset two seconds on (so it is not a fixed window).
 * Returns the scope after its fourth answer (d, sent at T0 + 1100 unless told).
 */
function slidingAtTwoPerSecond(dSentAfterT0Ms = 1100): Scope {
  const scope = new Scope(T0);
  scope.answer(scope.go(T0), T0 + 50, { budget: budget(1, 1050) });
  scope.answer(scope.go(T0 + 50), T0 + 100, { budget: budget(0, 1050) });
  expect(scope.state).toMatchObject({ windowMs: 1050, windowSource: "inferred", refill: "window" });
  const c = scope.go(T0 + 100);
  expect(c.atMs).toBe(T0 + 1050);
  scope.answer(c, T0 + 1100, { budget: budget(1, 3050) });
  scope.answer(scope.go(T0 + dSentAfterT0Ms), T0 + dSentAfterT0Ms + 50, { budget: budget(0, 3050) });
  expect(scope.state).toMatchObject({ windowMs: 1050, refill: "window" });
  return scope;
}

/** A limit of 3 with its window inferred at 3,030 ms, three sends of ours (ms after T0), the third still out. */
function threeSent(sentAfterT0Ms: [number, number, number], fields: Partial<GovernorState>): GovernorState {
  return {
    ...emptyState(T0),
    seq: 3,
    limit: 3,
    windowMs: 3030,
    windowSource: "inferred",
    slots: sentAfterT0Ms.map((ms, i) => [T0 + ms, i + 1, 1] as [number, number, number]),
    inFlight: [[3, T0 + 40_000, 1]],
    ...fields,
  };
}

describe("a sliding window's length", () => {
  it("is trimmed by a unit of ours the count no longer holds: sent at T0 + 1100, gone at T0 + 2100, so the window is at most 1,000 ms (plus 1 %)", () => {
    const scope = slidingAtTwoPerSecond();
    // c (T0 + 1050) leaves our log at T0 + 2100; the server counts only e there: d (T0 + 1100) has left too.
    const e = scope.go(T0 + 1150);
    expect(e.atMs).toBe(T0 + 2100);
    scope.answer(e, T0 + 2150, { budget: budget(1, 4050) });
    expect(scope.state.windowMs).toBe(1010);
  });

  it("is not trimmed by more than half a second at once: units gone soon after their send are a fixed window's reset, read late", () => {
    const scope = slidingAtTwoPerSecond(1800);
    const e = scope.go(T0 + 1850);
    expect(e.atMs).toBe(T0 + 2100);
    // d, sent at T0 + 1800, is no longer counted at T0 + 2100 (and the reset named is the same
    // second's: a fixed window's): 303 ms is no sliding window's length here.
    scope.answer(e, T0 + 2150, { budget: budget(1, 3050) });
    expect(scope.state.windowMs).toBe(1050);
  });

  it("is not trimmed to a length the reading's own reset rules out (its oldest counted unit plus the window, rounded up by less than a second)", () => {
    const scope = slidingAtTwoPerSecond();
    const e = scope.go(T0 + 1150);
    // A reset 2.95 s after the only counted unit: no window of 1,010 ms gives it (a bucket's time until full can).
    scope.answer(e, T0 + 2150, { budget: budget(1, 5050) });
    expect(scope.state.windowMs).toBe(1050);
  });

  it("is not trimmed by claims still out: they may reach the server after the reading", () => {
    const scope = new Scope(T0);
    scope.answer(scope.go(T0), T0 + 50, { budget: budget(1, 1050) });
    scope.answer(scope.go(T0 + 50), T0 + 100, { budget: budget(0, 1050) });
    const c = scope.go(T0 + 100);
    scope.answer(c, T0 + 1100, { budget: budget(1, 3050) });
    // d is sent at T0 + 1100 and its answer never comes in this test.
    scope.go(T0 + 1100);
    const e = scope.go(T0 + 1150);
    expect(e.atMs).toBe(T0 + 2100);
    // Counted as gone, d would trim the window to 1,010 ms; it may as well not have arrived yet.
    scope.answer(e, T0 + 2150, { budget: budget(1, 4050) });
    expect(scope.state.windowMs).toBe(1050);
  });

  it("is not bounded by a throttled answer's reading: its request is not in the count", () => {
    // Limit 3, window inferred at 3,030 ms; the third of our sends is throttled with a reset 2.92 s after our oldest.
    const state = threeSent([6180, 8372, 8380], { rttMs: 40 });
    const reading = (kind: "ok" | "throttled") =>
      observe(state, { seq: 3, sentAtMs: T0 + 8380, nowMs: T0 + 8420, kind, limitType: kind === "ok" ? "none" : "burst", waitMs: kind === "ok" ? null : 1000, waitFromServer: kind !== "ok", budget: shown({ remaining: 0, limit: 3, resetAtMs: T0 + 9100 }), reason: kind }, DEFAULT_GOVERNOR_OPTIONS);
    // Counted, the three would bound the window at 9100 - 6180 = 2920 ms; throttled, the third is not one of them.
    expect(reading("ok").windowMs).toBe(2920);
    expect(reading("throttled").windowMs).toBe(3030);
  });

  it("read too short, is lengthened by a spent throttle's reset: the window still counts the limit-th newest unit of ours, up to that reset less its rounding", () => {
    // Limit 3 read as 1,020 ms (a probe that found a burst just gone, taken for a fixed window's
    // full refill); three of ours at T0 + 2040 to 2060, then a fourth at T0 + 3100 is throttled with
    // the count spent and a reset at T0 + 5000: the oldest of the three is counted till after 4000.
    const state = { ...threeSent([2040, 2050, 2060], { rttMs: 20, windowMs: 1020, inFlight: [[4, T0 + 40_000, 1]] }), seq: 4, slots: [[T0 + 2040, 1, 1], [T0 + 2050, 2, 1], [T0 + 2060, 3, 1], [T0 + 3100, 4, 1]] as GovernorState["slots"] };
    const throttled = (options: typeof DEFAULT_GOVERNOR_OPTIONS) =>
      observe(state, { seq: 4, sentAtMs: T0 + 3100, nowMs: T0 + 3120, kind: "throttled", limitType: "burst", waitMs: 1000, waitFromServer: true, budget: shown({ remaining: 0, limit: 3, resetAtMs: T0 + 5000 }), reason: "429" }, options);
    expect(throttled(DEFAULT_GOVERNOR_OPTIONS).windowMs).toBe(5000 - 1000 - 2040);
    // Not where other executions spend unseen (cross-flow state): the limit's worth of our units is not what the server counts.
    expect(throttled({ ...DEFAULT_GOVERNOR_OPTIONS, claimsAllSeen: false }).windowMs).toBe(1020);
  });

  it("is bounded by the reading's own reset, not by an earlier reading's merged with it: a sliding window's reset moves on as its oldest units leave", () => {
    // Limit 3, window 3 s, delta-second resets: the previous reading named T0 + 8530 (x at T0 + 5250 leaving),
    // this one T0 + 9430 (x2 at T0 + 6180 leaving); 900 ms apart, they would read as one reset.
    const state = threeSent([6180, 7380, 8280], {
      anchor: { remaining: 0, seq: 2, atMs: T0 + 7380, resetAtMs: T0 + 8530, lateUnits: 0, answeredAtMs: T0 + 7530, ownOutAtSend: 1 },
      rttMs: 150,
    });
    const after = observe(state, { seq: 3, sentAtMs: T0 + 8280, nowMs: T0 + 8430, kind: "ok", limitType: "none", waitMs: null, waitFromServer: false, budget: shown({ remaining: 0, limit: 3, resetAtMs: T0 + 9430 }), reason: "200 OK" }, DEFAULT_GOVERNOR_OPTIONS);
    // Merged, the reset would bound the window at 8530 - 6180 = 2350 ms, and the next start would be throttled.
    expect(after.windowMs).toBe(3030);
    expect(after.anchor?.resetAtMs).toBe(T0 + 8530);
  });
  it("keeps a reading's reset of its own where the count rose since the one before: units left, so the reset moved on, even 940 ms on", () => {
    // 5 per 1 s, resets in whole epoch seconds read by clients that know the server's clock to within
    // 100 ms: the five sent at T0 + 4262 read a reset at T0 + 6100; one sent at T0 + 5302, after they
    // left the window, reads 4 left and a reset at T0 + 7040 (read by a fresh client, 60 ms earlier).
    const state: GovernorState = {
      ...emptyState(T0),
      seq: 26,
      limit: 5,
      windowMs: 1051,
      windowSource: "inferred",
      refill: "window",
      slots: [...[21, 22, 23, 24, 25].map((seq) => [T0 + 4262, seq, 1] as [number, number, number]), [T0 + 5302, 26, 1]],
      inFlight: [[26, T0 + 35_302, 1]],
      anchor: { remaining: 0, seq: 25, atMs: T0 + 4262, resetAtMs: T0 + 6100, lateUnits: 0, answeredAtMs: T0 + 4302, ownOutAtSend: 1 },
    };
    const after = observe(state, { seq: 26, sentAtMs: T0 + 5302, nowMs: T0 + 5342, kind: "ok", limitType: "none", waitMs: null, waitFromServer: false, budget: shown({ remaining: 4, limit: 5, resetAtMs: T0 + 7040 }), reason: "200 OK" }, DEFAULT_GOVERNOR_OPTIONS);
    // Merged into T0 + 6100, a reading sent after it (T0 + 6353, reset T0 + 8080) read two resets 1,980 ms
    // apart as a fixed window of 2 s, and half the rate went unused (1.76 x ideal in the lab, 6 throttled).
    expect(after.anchor).toMatchObject({ resetAtMs: T0 + 7040 });
    expect(after.anchor?.shownResetAtMs).toBeUndefined();
    expect(after).toMatchObject({ refill: "window", windowMs: 1051 });
  });
});

describe("resets closer together than a window that held our units", () => {
  const three = (remaining: number, resetAfterT0Ms: number) => shown({ remaining, limit: 3, resetAtMs: T0 + resetAfterT0Ms });

  /**
   * A limit of 3 spent by ours at T0 and T0 + 50, read with a reset at T0 + 10050 (GitHub's reset is
   * the oldest counted unit's leaving, rounded up to whole seconds): a fixed window that counted the
   * unit sent at T0 then is at least 10 s long, less the resets' rounding. Returns the scope and the
   * next grant (at the reset).
   */
  function spentByThree(): { scope: Scope; next: Go } {
    const scope = new Scope(T0);
    scope.answer(scope.go(T0), T0 + 50, { budget: three(2, 10_050) });
    const pair = [scope.go(T0 + 50), scope.go(T0 + 50)];
    scope.answer(pair[0]!, T0 + 100, { budget: three(1, 10_050) });
    scope.answer(pair[1]!, T0 + 100, { budget: three(0, 10_050) });
    expect(scope.state).toMatchObject({ windowMs: 10_050, windowSource: "inferred", refill: "window" });
    return { scope, next: scope.go(T0 + 100) };
  }

  it("are a sliding window's stepping on, not a fixed window's length: 3 per 10 s whose count came back a second after the first window's reset", () => {
    const { scope, next } = spentByThree();
    expect(next.atMs).toBeGreaterThanOrEqual(T0 + 10_000);
    // The count is back in full with the next reset a second on (the units sent at T0 + 50 leave then):
    // read as a fixed window of one second, three went a second later into a window still holding these.
    scope.answer(next, next.atMs + 50, { budget: three(2, 11_050) });
    expect(scope.state).toMatchObject({ refill: "window", windowMs: 10_050 });
    const more = [scope.go(next.atMs + 50), scope.go(next.atMs + 50)];
    expect(more.every((go) => go.atMs <= T0 + 10_200)).toBe(true);
    expect(scope.go(next.atMs + 50).atMs).toBeGreaterThanOrEqual(T0 + 20_000);
  });

  it("of a fixed window as long as its resets are apart are its length, as before", () => {
    const { scope, next } = spentByThree();
    scope.answer(next, next.atMs + 50, { budget: three(2, 20_050) });
    expect(scope.state).toMatchObject({ refill: "fixed", windowMs: 10_000 });
  });
});

describe("a count that reads as full whatever it shows", () => {
  const ofOne = (remaining: number, resetAtMs: number) => shown({ limit: 1, remaining, resetAtMs });

  it("is no evidence of a fixed window: a bucket of 1 per s behind epoch-second resets, whose reset moved 2 s on", () => {
    // A limit of one: our one unit since the previous reset, less the one-unit tolerance, fills it,
    // so "0 left" would read the same from a fixed window, a sliding one or a bucket.
    const scope = Scope.afterReading(T0 + 50, ofOne(0, T0 + 2_000));
    const next = scope.go(T0 + 50);
    expect(next.atMs).toBe(T0 + 2_000);
    scope.answer(next, next.atMs + 50, { budget: ofOne(0, T0 + 4_000) });
    expect(scope.state.refill).not.toBe("fixed");
  });
});
