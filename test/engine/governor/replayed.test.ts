/**
 * A replayed answer (the server answered an idempotency key it had seen, without admitting the
 * request: counted false) teaches nothing of the budget (observe.ts applyOk).
 */
import { describe, expect, it } from "vitest";
import { Scope, T0 } from "./helpers";

/** A silent limit of 3 learned from a throttle with no wait told (Stripe's bare 429), at T0 + 100. */
function lessonOfThree(): Scope {
  const scope = new Scope(T0);
  scope.answer(scope.go(T0), T0 + 50);
  const [b, c, d] = [scope.go(T0 + 50), scope.go(T0 + 50), scope.go(T0 + 50)];
  scope.answer(b, T0 + 100);
  scope.answer(c, T0 + 100);
  scope.throttle(d, T0 + 100, null);
  expect(scope.state).toMatchObject({ limit: 3, refill: "window" });
  return scope;
}

describe("a replayed success after a silent lesson", () => {
  it("is not what the window gave back: a throttle after it keeps the lesson's limit, not a bucket of one unit per the time since", () => {
    const scope = lessonOfThree();
    const replay = scope.go(T0 + 150);
    scope.answer(replay, replay.atMs + 50, { counted: false });
    const next = scope.go(replay.atMs + 50);
    scope.throttle(next, next.atMs + 50, null);
    expect(scope.state.refill).toBe("window");
    expect(scope.state.limit).toBeGreaterThanOrEqual(2);
  });

  it("while an admitted success there is (the same answer counted: a bucket refilling slower than its burst)", () => {
    const scope = lessonOfThree();
    const admitted = scope.go(T0 + 150);
    scope.answer(admitted, admitted.atMs + 50);
    const next = scope.go(admitted.atMs + 50);
    scope.throttle(next, next.atMs + 50, null);
    expect(scope.state).toMatchObject({ refill: "bucket", limit: 1 });
  });
});
