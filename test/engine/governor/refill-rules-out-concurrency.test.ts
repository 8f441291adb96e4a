/**
 * A count that came back between two readings of one reset is tested as a concurrency limit; a
 * success that disproves the limit leaves refill as the only cause: a bucket whose reset is its
 * time until full (X-RateLimit-Reset in epoch seconds over a token bucket of 20 per second).
 */
import { describe, expect, it } from "vitest";
import { Scope, shown, T0, type Go } from "./helpers";

const LIMIT = 20;
const reading = (remaining: number, resetAfterMs: number) => ({ budget: shown({ remaining, limit: LIMIT, resetAtMs: T0 + resetAfterMs }) });

/** A cold scope's probe and the burst after it, answered as a bucket of 20 per s shows them; returns the scope with its concurrency under test. */
function burstUnderTest(): Scope {
  const scope = new Scope();
  scope.answer(scope.go(T0), T0 + 50, reading(LIMIT - 1, 1050));
  const burst: Go[] = [];
  for (let i = 0; i < LIMIT - 1; i++) burst.push(scope.go(T0 + 50));
  // The first of the burst finds the unit the probe spent back (the bucket refilled it in 50 ms).
  burst.forEach((granted, i) => scope.answer(granted, T0 + 100, reading(LIMIT - 1 - i, 1100)));
  expect(scope.state.concurrency).toBe("testing");
  return scope;
}

describe("a count that came back, tested and found no concurrency limit", () => {
  it("is read as a bucket bounded by the disproving reading's reset, and the next start is paced, not held for that reset", () => {
    const scope = burstUnderTest();
    const test = scope.go(T0 + 100);
    // The test's answer counts more than ours in flight, under a reset two seconds out (rounded up).
    scope.answer(test, T0 + 150, reading(1, 2100));
    expect(scope.state.concurrency).toBe("ruled-out");
    expect(scope.state.refill).toBe("bucket");
    // (2100 - 100) * 20 / (20 - 1 - 1): at most 2,223 ms to refill the bucket.
    expect(scope.state.windowMs).toBe(2223);
    expect(scope.state.windowSource).toBe("inferred");
    const next = scope.go(T0 + 150);
    expect(next.atMs).toBeLessThan(T0 + 1000);
  });

  it("a reading that shows the bucket full (no bound) leaves the refill unread", () => {
    const scope = burstUnderTest();
    const test = scope.go(T0 + 100);
    scope.answer(test, T0 + 150, { budget: shown({ remaining: LIMIT - 1, limit: LIMIT, resetAtMs: T0 + 2100 }) });
    expect(scope.state.concurrency).toBe("ruled-out");
    expect(scope.state.refill).not.toBe("bucket");
  });
});
