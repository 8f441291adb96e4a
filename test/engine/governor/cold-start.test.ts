/**
 * Cold start: nothing is known of a scope's budget, so its first request goes alone and its answer
 * tells the rest (src/engine/governor/claim.ts isCold, heldByProbe).
 */
import { describe, expect, it } from "vitest";
import { isCold } from "../../../src/engine/governor";
import { MAX_IN_FLIGHT } from "../../../src/engine/governor/state";
import { mostInAnyWindow } from "./sim";
import { HOUR_MS, Scope, shown, successes, T0 } from "./helpers";

describe("a cold scope", () => {
  it("grants its first claim at once, as a probe, and remembers the probe", () => {
    const scope = new Scope();
    expect(isCold(scope.state)).toBe(true);
    const first = scope.go(T0);
    expect(first).toMatchObject({ atMs: T0, seq: 1, probe: true });
    expect(scope.state.probe).toEqual({ seq: 1, atMs: T0, untilMs: T0 + scope.options.leaseMs });
  });

  it.each([1, 10, 99, 500, 1_999])("holds every other claim while the probe is out (claim %i ms after it): wait, nothing reserved", (afterMs) => {
    const scope = new Scope();
    scope.go(T0);
    const before = structuredClone(scope.state);
    const held = scope.claim(T0 + afterMs);
    expect(held.kind).toBe("wait");
    if (held.kind !== "wait") return;
    // Asks again after the probe can have answered, and never later than its lease.
    expect(held.untilMs).toBeGreaterThan(T0 + afterMs);
    expect(held.untilMs).toBeLessThanOrEqual(T0 + scope.options.leaseMs);
    expect(scope.state.seq).toBe(before.seq);
    expect(scope.state.slots).toEqual(before.slots);
    expect(scope.state.inFlight).toEqual(before.inFlight);
  });

  it("does not let many waiting claims through at once: ten claims at the same instant give one go and nine waits", () => {
    const scope = new Scope();
    const kinds = Array.from({ length: 10 }, () => scope.claim(T0).kind);
    expect(kinds).toEqual(["go", ...Array<string>(9).fill("wait")]);
  });

  it("after the probe's answer shows 4 of 5 left until the reset, lets 4 go at once and spaces the rest a window apart", () => {
    const scope = new Scope();
    const probe = scope.go(T0);
    scope.answer(probe, T0 + 80, { budget: shown({ remaining: 4, limit: 5, resetAtMs: T0 + 1000, windowMs: 1000 }) });
    expect(isCold(scope.state)).toBe(false);
    const starts = [probe.atMs];
    for (let i = 0; i < 4; i++) starts.push(scope.go(T0 + 90).atMs);
    expect(starts.slice(1)).toEqual([T0 + 90, T0 + 90, T0 + 90, T0 + 90]);
    // The budget is spent: the next start is at the reset at the earliest.
    const sixth = scope.go(T0 + 90);
    expect(sixth.atMs).toBeGreaterThanOrEqual(T0 + 1000);
    starts.push(sixth.atMs);
    for (let i = 0; i < 14; i++) starts.push(scope.go(T0 + 100).atMs);
    expect(mostInAnyWindow(starts, 1000)).toBeLessThanOrEqual(5);
    // Spaced, not stopped: 20 starts at 5 per second need at least 3 more windows, and no more than 4.
    expect(Math.max(...starts) - T0).toBeGreaterThanOrEqual(3000);
    expect(Math.max(...starts) - T0).toBeLessThan(4200);
  });

  it("after an answer that shows no budget, starts slowly: four in flight (TCP's initial window), then one more per success", () => {
    const scope = new Scope();
    const probe = scope.go(T0);
    scope.answer(probe, T0 + 50);
    expect(scope.state.inFlightCap).toBe(4);
    const [a] = [scope.go(T0 + 60), scope.go(T0 + 60), scope.go(T0 + 60), scope.go(T0 + 60)];
    expect(scope.claim(T0 + 60).kind).toBe("wait");
    scope.answer(a!, T0 + 110);
    expect(scope.state.inFlightCap).toBe(5);
    // One answered, three still out: two more may go, then the cap of 5 holds.
    scope.go(T0 + 111);
    scope.go(T0 + 111);
    expect(scope.claim(T0 + 111).kind).toBe("wait");
    expect(scope.state.inFlight).toHaveLength(5);
  });

  it("past eight in flight, doubles no faster than about once a second: 20 ms answers grow the cap by one per 50 successes, 1 s answers by one per success", () => {
    // The probe and four successes take the cap from four to eight; the next 500, answered in 20 ms,
    // add 500 x 20 / 1000 = 10 (one per success, as before, made it 508).
    const fast = new Scope();
    successes(fast, 505, 20);
    expect(fast.state.inFlightCap).toBe(18);
    const slow = new Scope();
    successes(slow, 25, 1000);
    expect(slow.state.inFlightCap).toBe(28);
    // Answers slower than a second grow it no faster than one per success.
    const slower = new Scope();
    successes(slower, 25, 3000);
    expect(slower.state.inFlightCap).toBe(28);
  });

  it("ends its slow start at the most claims it tracks in flight, and does not start slowly again", () => {
    const scope = new Scope();
    // One request at a time, a second each, at an API that shows and throttles nothing.
    successes(scope, MAX_IN_FLIGHT + 1, 1000);
    expect(scope.state.inFlightCap).toBe(MAX_IN_FLIGHT);
    expect(scope.state.inFlightCapGrows).toBe(false);
    expect(isCold(scope.state)).toBe(false);
    // Fifty claims at once after a thousand more successes: none of them a probe, none held.
    successes(scope, 1000, 10, scope.state.updatedAtMs);
    const nowMs = scope.state.updatedAtMs;
    const fifty = Array.from({ length: 50 }, () => scope.claim(nowMs));
    expect(fifty.every((result) => result.kind === "go" && !result.probe && result.atMs === nowMs)).toBe(true);
    expect(scope.state.inFlightCap).toBe(MAX_IN_FLIGHT);
  });

  it("frees the others as soon as the probe is lost, and when its answer is overdue if nothing is heard", () => {
    const lostScope = new Scope();
    const probe = lostScope.go(T0);
    lostScope.lost(probe, T0 + 5000);
    expect(lostScope.state.probe).toBeNull();
    expect(lostScope.claim(T0 + 5000)).toMatchObject({ kind: "go", probe: true });

    // Nothing heard: after ten round trips (at least 2 s) the probe is taken as lost, long before
    // its 30 s lease ends (its answer may have gone to another store while this one was down).
    const silentScope = new Scope();
    silentScope.go(T0);
    const overdueMs = Math.max(2000, 10 * (silentScope.state.rttMs || 100));
    expect(overdueMs).toBeLessThan(silentScope.options.leaseMs);
    expect(silentScope.claim(T0 + overdueMs - 1).kind).toBe("wait");
    expect(silentScope.claim(T0 + overdueMs)).toMatchObject({ kind: "go", probe: true });
    // One more probe, not the rest: the others wait for it in turn.
    expect(silentScope.claim(T0 + overdueMs + 1).kind).toBe("wait");
  });

  it("a throttle before any success teaches no limit, and the next probe goes no earlier than the server's wait", () => {
    const scope = new Scope();
    const probe = scope.go(T0);
    scope.throttle(probe, T0 + 40, 2000);
    expect(scope.state.limit).toBeNull();
    expect(isCold(scope.state)).toBe(true);
    const next = scope.go(T0 + 50);
    expect(next).toMatchObject({ probe: true, atMs: T0 + 40 + 2000 });
    expect(scope.claim(T0 + 60, T0 + HOUR_MS).kind).toBe("wait");
  });
});
