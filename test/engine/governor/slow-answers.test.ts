/**
 * Claims whose answers are slow (or will be lost to a client timeout) and the readings that come
 * before them: a claim started well before a reading's request is in its count (observe.ts
 * lateClaimUnits), and one still late for it is not among the units the reading counts
 * (model.ts heldSlots with skipLate).
 */
import { describe, expect, it } from "vitest";
import { Scope, shown, T0 } from "./helpers";

/** A window of 6 per 1000 ms, shown with no reset (HubSpot's headers): a probe at T0 answered after 60 ms, then two claims at T0 + 60 answered after 60 ms. */
function windowOfSix(): Scope {
  const budget = (remaining: number) => ({ budget: shown({ limit: 6, remaining, windowMs: 1000 }) });
  const scope = Scope.afterReading(T0 + 60, budget(5).budget);
  const first = scope.go(T0 + 60);
  const second = scope.go(T0 + 60);
  scope.answer(first, T0 + 120, budget(4));
  scope.answer(second, T0 + 120, budget(3));
  return scope;
}

describe("a claim whose answer is still out", () => {
  it("is in the count of a reading whose request started more than two round trips after it", () => {
    const scope = windowOfSix();
    const slow = scope.go(T0 + 120);
    // 180 ms later (two round trips are 120): the server counted the slow one first.
    const later = scope.go(T0 + 300);
    scope.answer(later, T0 + 360, { budget: shown({ limit: 6, remaining: 1, windowMs: 1000 }) });
    expect(scope.state.anchor).toMatchObject({ seq: later.seq, remaining: 1, lateUnits: 0 });
    // The one unit left is ours at once, not after the probe's unit leaves the window (T0 + 1000).
    expect(scope.go(T0 + 360).atMs).toBe(T0 + 360);
    expect(slow.seq).toBeLessThan(later.seq);
  });

  it("is held back as late for a reading sent within two round trips of it, and the reading's oldest unit is the first to leave", () => {
    const scope = windowOfSix();
    scope.go(T0 + 120); // slow: its answer is still out
    const counted = scope.go(T0 + 120);
    // Counted before the slow one reached the server: the probe, the two at T0 + 60 and this one.
    scope.answer(counted, T0 + 180, { budget: shown({ limit: 6, remaining: 2, windowMs: 1000 }) });
    expect(scope.state.anchor).toMatchObject({ seq: counted.seq, remaining: 2, lateUnits: 1 });
    // One unit left for us (the other is the slow claim's), then the window is full.
    expect(scope.go(T0 + 180).atMs).toBe(T0 + 180);
    // The reading counts the probe (sent at T0), which leaves first; the slow claim is not one of
    // its four, so the walk over its units reaches back to the probe.
    expect(scope.go(T0 + 180).atMs).toBe(T0 + 1000);
  });
});
