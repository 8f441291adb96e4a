/**
 * ScopeWaiters, the waiting behind every store's `changed` (memory and Redis): woken by a write in
 * this process, by the time named, or rejected by the caller's abort, on a clock that moves only
 * when the test says so.
 */
import { describe, expect, it } from "vitest";
import { ScopeWaiters } from "../../src/store/waiters";
import { FakeClock, isSettled, settle } from "./fake-clock";

const T0 = Date.UTC(2026, 0, 1);

describe("ScopeWaiters", () => {
  it("wakes a waiter when its scope is notified, not one of another scope", async () => {
    const clock = new FakeClock(T0);
    const waiters = new ScopeWaiters(clock);
    const mine = waiters.changed("api|a", 60_000);
    const other = waiters.changed("api|b", 60_000);
    waiters.notify("api|a");
    await settle();
    expect(await isSettled(mine)).toBe(true);
    expect(await isSettled(other)).toBe(false);
    await clock.advance(60_000);
    expect(await isSettled(other)).toBe(true);
    expect(clock.pending).toBe(0);
  });

  // Both stores wait through ScopeWaiters. A signal already aborted was never listened to (an abort
  // listener added after the abort does not fire): the memory store's own copy had learned to reject
  // at once, the Redis store's wait ran its full length (up to its 250 ms check).
  it("rejects at once when the caller's signal is already aborted, and leaves no timer", async () => {
    const clock = new FakeClock(T0);
    const waiters = new ScopeWaiters(clock);
    const controller = new AbortController();
    controller.abort(new Error("already gone"));
    const waiting = waiters.changed("api|a", 60_000, controller.signal);
    const outcome = waiting.then(
      () => "resolved",
      (error: unknown) => error,
    );
    await settle();
    expect(await isSettled(waiting)).toBe(true);
    expect(await outcome).toEqual(new Error("already gone"));
    expect(clock.pending).toBe(0);
  });

  it("notifyAll wakes every scope's waiters (a closing store leaves no timer)", async () => {
    const clock = new FakeClock(T0);
    const waiters = new ScopeWaiters(clock);
    const all = [waiters.changed("x", 10_000), waiters.changed("y", 20_000)];
    waiters.notifyAll();
    await settle();
    for (const waiting of all) expect(await isSettled(waiting)).toBe(true);
    expect(clock.pending).toBe(0);
  });
});
