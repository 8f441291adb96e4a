/**
 * The window length a policy names beside the resets (the IETF policy's w=, passed as
 * policyWindowMs): the resets still teach the window's kind, but a sliding log's length is the one
 * named, neither the whole second a rounded-up reset adds nor less than it (observe.ts holdPolicyWindow).
 */
import { describe, expect, it } from "vitest";
import { Scope, shown, T0 } from "./helpers";

/** A sliding window of 2 per 2 s whose RateLimit t= is rounded up to whole seconds after each answer. */
const sliding = (remaining: number, resetAfterT0Ms: number, policyWindowMs: number | null) =>
  shown({ remaining, limit: 2, resetAtMs: T0 + resetAfterT0Ms, policyWindowMs });

/** a at T0 answered at T0 + 600 (t = ceil(1.4) = 2: reset read at T0 + 2600), b at T0 + 600 answered at T0 + 650 (remaining 0). */
function spentFirstWindow(policyWindowMs: number | null): Scope {
  const scope = new Scope(T0);
  scope.answer(scope.go(T0), T0 + 600, { budget: sliding(1, 2600, policyWindowMs) });
  scope.answer(scope.go(T0 + 600), T0 + 650, { budget: sliding(0, 2650, policyWindowMs) });
  return scope;
}

describe("a window length named by the policy", () => {
  it("is the sliding log's length, not the 2.65 s a rounded-up reset gives: the next start is when our oldest unit leaves", () => {
    const scope = spentFirstWindow(2000);
    expect(scope.state).toMatchObject({ refill: "window", windowMs: 2000, windowSource: "inferred" });
    expect(scope.go(T0 + 650).atMs).toBe(T0 + 2000);
  });

  it("without it, the rounded-up reading is all there is (the case it was written for: 1.18 x ideal)", () => {
    const scope = spentFirstWindow(null);
    expect(scope.state.windowMs).toBe(2650);
    expect(scope.go(T0 + 650).atMs).toBe(T0 + 2650);
  });

  it("is not trimmed below by units a fixed window dropped at its reset (they left sooner than a window after their send)", () => {
    // A fixed window of 2 per 2 s aligned to T0 + 2000: a and b spent late in the first window.
    const scope = new Scope(T0 + 1500);
    scope.answer(scope.go(T0 + 1500), T0 + 1550, { budget: sliding(1, 2000, 2000) });
    scope.answer(scope.go(T0 + 1550), T0 + 1600, { budget: sliding(0, 2000, 2000) });
    const c = scope.go(T0 + 1600);
    // The count comes back in full at the reset: a and b are gone 0.5 s after their send.
    scope.answer(c, c.atMs + 50, { budget: sliding(1, 4000, 2000) });
    expect(scope.state.windowMs).toBe(2000);
  });

  it("leaves a length the API shows as the window alone (HubSpot's interval, a bucket's restore rate)", () => {
    const scope = Scope.afterReading(T0 + 50, shown({ remaining: 9, limit: 10, windowMs: 10_000, policyWindowMs: 2000 }));
    expect(scope.state).toMatchObject({ windowMs: 10_000, windowSource: "shown" });
  });
});
