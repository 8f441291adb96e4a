import { describe, expect, it } from "vitest";
import { classify, DEFAULT_POLICY, plan } from "../../../src/engine";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const run = (status: number, headers: Record<string, string>, body: unknown = {}) =>
  classify({ request: { method: "POST", url: "https://api.stripe.com/v1/payment_intents" }, response: { status, headers, body } }, { nowMs: NOW });

describe("stripe dialect", () => {
  it("Stripe-Should-Retry: true is followed on a 4xx: the verdict is retryable (https://docs.stripe.com/error-low-level; stripe-node obeys it first)", () => {
    const v = run(400, { "Stripe-Should-Retry": "true" }, { error: { type: "invalid_request_error", code: "parameter_missing" } });
    expect(v).toMatchObject({ limitType: "validation", retryable: true, retryAllowed: true });
    const decision = plan(v, { attempts: 1, firstAttemptAtMs: NOW }, DEFAULT_POLICY, { nowMs: NOW, random: () => 0.5 });
    expect(decision.decision).toBe("retry");
    // Without the header the same answer stays final.
    const plain = run(400, {}, { error: { type: "invalid_request_error", code: "parameter_missing" } });
    expect(plan(plain, { attempts: 1, firstAttemptAtMs: NOW }, DEFAULT_POLICY, { nowMs: NOW, random: () => 0.5 }).decision).toBe("fail");
  });

  it("Stripe-Should-Retry: false keeps meaning do not retry, even on a rate limiter's 429", () => {
    const v = run(429, { "Stripe-Should-Retry": "false", "Stripe-Rate-Limited-Reason": "global-rate" });
    expect(v).toMatchObject({ retryable: false, retryAllowed: false });
    expect(plan(v, { attempts: 1, firstAttemptAtMs: NOW }, DEFAULT_POLICY, { nowMs: NOW, random: () => 0.5 }).decision).toBe("fail");
  });

  it("Stripe-Should-Retry: true on a 500 keeps it retryable", () => {
    expect(run(500, { "Stripe-Should-Retry": "true" })).toMatchObject({ limitType: "server", retryable: true, retryAllowed: true });
  });

  it("an unreadable Stripe-Should-Retry is ignored with a reason", () => {
    const v = run(429, { "Stripe-Should-Retry": "maybe", "Stripe-Rate-Limited-Reason": "endpoint-rate" });
    expect(v).toMatchObject({ retryAllowed: null, retryable: true, limitType: "burst", scope: { limiter: "endpoint-rate", endpoint: "POST /v1/payment_intents" } });
    expect(v.ignored).toContainEqual({ signal: "stripe-should-retry", value: "maybe", why: "neither true nor false" });
  });

  it("resource-specific limits are a burst limit scoped to the object", () => {
    const v = run(429, { "Stripe-Rate-Limited-Reason": "resource-specific" });
    expect(v).toMatchObject({ throttled: true, limitType: "burst", scope: { limiter: "resource-specific" } });
  });
});
