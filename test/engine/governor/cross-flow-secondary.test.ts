/**
 * A throttle with no budget, in a scope whose successes show one, read by one execution of many
 * that share state through cross-flow state: its own claims are not what the server counts, so the
 * shown limit stays and only the throttle's wait holds the scope (observe.ts secondaryLimitUnseen).
 * Found in lab:random seed 2681 #5 (GitHub's secondary limit beside a shown 20 per minute, cross-flow).
 */
import { describe, expect, it } from "vitest";
import { Scope, shown, T0 } from "./helpers";

const MINUTE_MS = 60_000;

/** Two successes showing 20 per minute (reset a minute after T0), then a throttle showing no budget with a 2 s wait. */
function secondaryThrottleAfterShownBudget(claimsAllSeen: boolean): Scope {
  const scope = Scope.afterReading(T0 + 200, shown({ remaining: 19, limit: 20, resetAtMs: T0 + MINUTE_MS }), { claimsAllSeen });
  const second = scope.go(T0 + 200);
  scope.answer(second, T0 + 400, { budget: shown({ remaining: 18, limit: 20, resetAtMs: T0 + MINUTE_MS }) });
  const third = scope.go(T0 + 400);
  scope.throttle(third, T0 + 600, 2000, { limitType: "burst", budget: null });
  return scope;
}

describe("a budget-less throttle beside a shown budget", () => {
  it("across executions blind to each other: the shown limit stays, the scope waits the throttle's 2 s", () => {
    const scope = secondaryThrottleAfterShownBudget(false);
    expect(scope.state.limit).toBe(20);
    expect(scope.state.notBeforeMs).toBe(T0 + 600 + 2000);
  });

  it("where every claim is seen (memory, Redis), our count is the server's, and the throttle is a lesson as before", () => {
    const scope = secondaryThrottleAfterShownBudget(true);
    expect(scope.state.limit).toBeLessThan(20);
  });
});
