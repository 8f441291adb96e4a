/**
 * A window whose length is shown with no reset (HubSpot's X-HubSpot-RateLimit-Interval-Milliseconds)
 * is read as rolling until its count comes back faster than our own units leave it: then it is a
 * bucket refilling the limit per interval (sliding.ts learnRefillBehindShownWindow). Not where the
 * count came back to the limit at once (a fixed window's reset), nor where others' units were in it.
 */
import { describe, expect, it } from "vitest";
import { Scope, shown, T0 } from "./helpers";

const LIMIT = 100;
const INTERVAL_MS = 10_000;
const reading = (remaining: number) => ({ budget: shown({ limit: LIMIT, remaining, windowMs: INTERVAL_MS }) });

/** A probe at T0 showing firstRemaining, then `burst` claims at T0 + 50 answered at T0 + 100, the count falling by one each. */
function afterBurst(firstRemaining: number, burst: number): { scope: Scope; remaining: number } {
  const scope = Scope.afterReading(T0 + 50, reading(firstRemaining).budget);
  const sent = Array.from({ length: burst }, () => scope.go(T0 + 50));
  let remaining = firstRemaining;
  for (const go of sent) scope.answer(go, T0 + 100, reading(--remaining));
  return { scope, remaining };
}

describe("a window shown with no reset", () => {
  it("whose count came back by a second's refill within the interval is a bucket of the limit per interval", () => {
    const { scope, remaining } = afterBurst(99, 60);
    expect(scope.state).toMatchObject({ refill: "window", windowSource: "shown", windowMs: INTERVAL_MS });
    const next = scope.go(T0 + 1050);
    expect(next.atMs).toBe(T0 + 1050);
    // A second on, 10 units came back (100 per 10 s) where a rolling window gives none back.
    scope.answer(next, T0 + 1100, reading(remaining - 1 + 10));
    expect(scope.state).toMatchObject({ refill: "bucket", windowSource: "shown", windowMs: INTERVAL_MS });
  });

  it("stays rolling where the count came back to the limit at once (a fixed window's reset)", () => {
    const { scope } = afterBurst(99, 60);
    // 9 s on, a bucket of 100 per 10 s could have refilled as much: the count back to the limit less
    // our one request is a fixed window's reset all the same.
    const next = scope.go(T0 + 9050);
    scope.answer(next, T0 + 9100, reading(LIMIT - 1));
    expect(scope.state.refill).not.toBe("bucket");
  });

  it("stays rolling where the first reading counted others' units (theirs may leave the window)", () => {
    const { scope, remaining } = afterBurst(80, 40);
    const next = scope.go(T0 + 1050);
    scope.answer(next, T0 + 1100, reading(remaining - 1 + 10));
    expect(scope.state.refill).toBe("window");
  });

  it("stays rolling where no more came back than our own units leaving it", () => {
    const { scope, remaining } = afterBurst(99, 30);
    // Thirty more five seconds later, counted one by one.
    const later = Array.from({ length: 30 }, () => scope.go(T0 + 5050));
    let left = remaining;
    for (const go of later) scope.answer(go, T0 + 5100, reading(--left));
    // By T0 + 10,060 the probe and the first thirty have left: 31 back, as a rolling window gives them.
    const next = scope.go(T0 + 10_060);
    scope.answer(next, T0 + 10_110, reading(left - 1 + 31));
    expect(scope.state.refill).toBe("window");
  });

  it("whose count came back less than a unit between each two readings, but units in all, is a bucket all the same", () => {
    // A bucket of 40 per 3 s (13.3 per s) answering 50 ms apart: each reading shows at most one unit
    // back beyond our one claim, and two readings never prove a refill; their sum does.
    const limit = 40;
    const intervalMs = 3000;
    const at = (remaining: number) => ({ budget: shown({ limit, remaining, windowMs: intervalMs }) });
    const scope = Scope.afterReading(T0 + 50, at(limit - 1).budget);
    const burst = Array.from({ length: 20 }, () => scope.go(T0 + 50));
    let count = limit - 1;
    for (const go of burst) scope.answer(go, T0 + 100, at(--count));
    const refills: string[] = [];
    for (let k = 1; k <= 8; k++) {
      const sentAtMs = T0 + 100 + 50 * k;
      const go = scope.go(sentAtMs);
      expect(go.atMs).toBe(sentAtMs);
      scope.answer(go, sentAtMs + 50, at(count - k + Math.floor((50 * k * limit) / intervalMs)));
      refills.push(scope.state.refill);
    }
    // Units back beyond ours after k readings: floor(2k / 3), 2 at the third.
    expect(refills).toEqual(["window", "window", "bucket", "bucket", "bucket", "bucket", "bucket", "bucket"]);
    expect(scope.state).toMatchObject({ refill: "bucket", windowSource: "shown", windowMs: intervalMs });
  });

  it("counts afresh after a pair that cannot tell: units back across it prove nothing", () => {
    const limit = 40;
    const intervalMs = 3000;
    const at = (remaining: number, resetAtMs?: number) => ({ budget: shown({ limit, remaining, windowMs: intervalMs, ...(resetAtMs ? { resetAtMs } : {}) }) });
    const scope = Scope.afterReading(T0 + 50, at(limit - 1).budget);
    const burst = Array.from({ length: 20 }, () => scope.go(T0 + 50));
    let count = limit - 1;
    for (const go of burst) scope.answer(go, T0 + 100, at(--count));
    // One unit back beyond ours, then a reading with a reset (it cannot tell), then one more back.
    const first = scope.go(T0 + 200);
    scope.answer(first, T0 + 250, at(count));
    const withReset = scope.go(T0 + 300);
    scope.answer(withReset, T0 + 350, at(count - 1, T0 + 3000));
    const between = scope.go(T0 + 400);
    scope.answer(between, T0 + 450, at(count - 2));
    const last = scope.go(T0 + 500);
    scope.answer(last, T0 + 550, at(count - 2));
    expect(scope.state.refill).toBe("window");
  });
});
