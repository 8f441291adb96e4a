/**
 * The breaker: breakerThreshold throttles in a row open it; after the server's wait one request
 * probes at a time, and the probe's success closes it at once, with no lease holding the others
 * back (issue 7).
 */
import { describe, expect, it } from "vitest";
import { HOUR_MS, Scope, shown, T0, type Go } from "./helpers";

/** A scope that knows its budget (10 per minute, 8 left) and has `count` claims out. */
function busyScope(threshold: number, count: number): { scope: Scope; out: Go[] } {
  const scope = new Scope(T0, { breakerThreshold: threshold });
  scope.answer(scope.go(T0), T0 + 40, { budget: shown({ remaining: 9, limit: 10, resetAtMs: T0 + 60_000, windowMs: 60_000 }) });
  const out = Array.from({ length: count }, () => scope.go(T0 + 50));
  return { scope, out };
}

describe("the breaker", () => {
  it.each([1, 3, 5])("opens at %i throttles in a row, not one before", (threshold) => {
    const { scope, out } = busyScope(threshold, threshold);
    out.forEach((granted, i) => {
      expect(scope.state.breakerOpen).toBe(false);
      scope.throttle(granted, T0 + 100 + i, 2000);
      expect(scope.state.throttleStreak).toBe(i + 1);
    });
    expect(scope.state.breakerOpen).toBe(true);
  });

  it("a success between throttles starts the count again", () => {
    const { scope, out } = busyScope(3, 5);
    scope.throttle(out[0]!, T0 + 100, 500);
    scope.throttle(out[1]!, T0 + 101, 500);
    scope.answer(out[2]!, T0 + 102);
    scope.throttle(out[3]!, T0 + 103, 500);
    expect(scope.state).toMatchObject({ throttleStreak: 1, breakerOpen: false });
  });

  it("once open: one probe, no earlier than the server's wait; the others wait while it is out", () => {
    const { scope, out } = busyScope(3, 3);
    out.forEach((granted, i) => scope.throttle(granted, T0 + 100 + i, 5000));
    const floorMs = T0 + 102 + 5000;
    const probe = scope.go(T0 + 200);
    expect(probe).toMatchObject({ probe: true, atMs: floorMs });
    for (const atMs of [T0 + 201, floorMs, floorMs + 40, floorMs + 1_900]) {
      const held = scope.claim(atMs);
      expect(held.kind).toBe("wait");
    }
    expect(scope.state.inFlight.map(([seq]) => seq)).toEqual([probe.seq]);
  });

  it("closes at once on the probe's success: the next claim goes at the same instant, not after the probe's lease", () => {
    const { scope, out } = busyScope(3, 3);
    out.forEach((granted, i) => scope.throttle(granted, T0 + 100 + i, 5000));
    const probe = scope.go(T0 + 200);
    const answeredMs = probe.atMs + 40;
    scope.answer(probe, answeredMs, { budget: shown({ remaining: 6, limit: 10, resetAtMs: T0 + 60_000, windowMs: 60_000 }) });
    expect(scope.state).toMatchObject({ breakerOpen: false, probe: null, throttleStreak: 0 });
    const next = [scope.go(answeredMs), scope.go(answeredMs), scope.go(answeredMs)];
    expect(next.map((g) => g.atMs)).toEqual([answeredMs, answeredMs, answeredMs]);
    expect(next.every((g) => !g.probe)).toBe(true);
  });

  it("a wait handed to the others while the probe is out asks again soon after the probe can have answered, not at the end of its lease", () => {
    const { scope, out } = busyScope(3, 3);
    out.forEach((granted, i) => scope.throttle(granted, T0 + 100 + i, 5000));
    const probe = scope.go(T0 + 200);
    const held = scope.claim(probe.atMs + 1);
    expect(held.kind).toBe("wait");
    if (held.kind !== "wait") return;
    expect(held.untilMs).toBeLessThanOrEqual(probe.atMs + scope.state.rttMs + 1000);
    expect(held.untilMs).toBeLessThan(probe.atMs + scope.options.leaseMs);
  });

  it("a throttled probe keeps it open, and the next probe waits for the new wait", () => {
    const { scope, out } = busyScope(3, 3);
    out.forEach((granted, i) => scope.throttle(granted, T0 + 100 + i, 5000));
    const probe = scope.go(T0 + 200);
    scope.throttle(probe, probe.atMs + 30, 10_000);
    expect(scope.state).toMatchObject({ breakerOpen: true, probe: null, throttleStreak: 4 });
    const second = scope.go(probe.atMs + 40);
    expect(second).toMatchObject({ probe: true, atMs: probe.atMs + 30 + 10_000 });
  });

  it("a lost probe frees the next probe at once", () => {
    const { scope, out } = busyScope(3, 3);
    out.forEach((granted, i) => scope.throttle(granted, T0 + 100 + i, 5000));
    const probe = scope.go(T0 + 200);
    scope.lost(probe, probe.atMs + 10_000);
    expect(scope.state.probe).toBeNull();
    expect(scope.claim(probe.atMs + 10_000, probe.atMs + HOUR_MS)).toMatchObject({ kind: "go", probe: true, atMs: probe.atMs + 10_000 });
  });

  it("a probe whose claimant never reports is taken as lost once its answer is overdue (ten round trips, at least 2 s), not at the end of its lease: one more probe goes", () => {
    const { scope, out } = busyScope(3, 3);
    out.forEach((granted, i) => scope.throttle(granted, T0 + 100 + i, 5000));
    const probe = scope.go(T0 + 200);
    const overdueMs = Math.max(2000, 10 * (scope.state.rttMs || 100));
    expect(overdueMs).toBeLessThan(scope.options.leaseMs);
    expect(scope.claim(probe.atMs + overdueMs - 1).kind).toBe("wait");
    expect(scope.claim(probe.atMs + overdueMs)).toMatchObject({ kind: "go", probe: true });
    expect(scope.claim(probe.atMs + overdueMs + 1).kind).toBe("wait");
  });

  // Found by the governor fuzz target: a probe (cold scope or open breaker) was granted at the
  // latest slot already handed out even when that was past the claim's latest start, so its
  // caller would sleep past its inline limit instead of deferring.
  it("a probe keeps to the latest start: with slots booked past it, the claim is deferred, nothing reserved", () => {
    const scope = new Scope(T0, { breakerThreshold: 3 });
    scope.answer(scope.go(T0), T0 + 40, { budget: shown({ remaining: 1, limit: 2, resetAtMs: T0 + 1000, windowMs: 1000 }) });
    const booked = Array.from({ length: 6 }, () => scope.go(T0 + 50));
    const lastMs = booked[5]!.atMs;
    expect(lastMs).toBeGreaterThan(T0 + 2000);
    booked.slice(0, 3).forEach((granted, i) => scope.throttle(granted, T0 + 60 + i, 500));
    expect(scope.state.breakerOpen).toBe(true);
    const seqBefore = scope.state.seq;
    const result = scope.claim(T0 + 600, T0 + 1600);
    expect(result).toMatchObject({ kind: "defer", notBeforeMs: lastMs });
    expect(scope.state.seq).toBe(seqBefore);
    expect(scope.claim(T0 + 600, lastMs)).toMatchObject({ kind: "go", probe: true, atMs: lastMs });
  });
});
