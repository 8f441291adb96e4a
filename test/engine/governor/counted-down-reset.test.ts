/**
 * A reset counted down from when the server wrote the answer (the IETF fields' delta seconds,
 * ObservedBudget.resetCountsDown) is read on the answer's arrival: with slow answers, each reading
 * of one fixed window's reset lands up to a round trip later than the last, and that is not the
 * reset moving on (observe.ts resetMoveMinMs).
 */
import { describe, expect, it } from "vitest";
import { Scope, shown, T0 } from "./helpers";

/** A fixed 15 per 3 s whose answers take 800 ms: the probe at T0, six claims when it answers, the first of them answered. */
function readingsOfOneWindow(resetCountsDown: boolean): Scope {
  const reading = (remaining: number, answeredAtMs: number) =>
    // The server wrote 3 s (its countdown rounded up to whole seconds) on each answer; read on arrival.
    shown({ remaining, limit: 15, resetAtMs: answeredAtMs + 3000, policyWindowMs: 3000, resetCountsDown });
  const scope = Scope.afterReading(T0 + 800, reading(14, T0 + 800));
  const claims = Array.from({ length: 6 }, () => scope.go(T0 + 800));
  scope.answer(claims[0]!, T0 + 1600, { budget: reading(13, T0 + 1600) });
  return scope;
}

describe("a reset counted down from when the answer was written", () => {
  it("read 800 ms later at the next slow answer is the same window's reset, not a bucket's moving on", () => {
    expect(readingsOfOneWindow(true).state.refill).not.toBe("bucket");
  });

  it("is told from an instant the server named: an epoch reset read 800 ms on while the count runs on is a bucket's", () => {
    expect(readingsOfOneWindow(false).state.refill).toBe("bucket");
  });
});
