/**
 * The engine never throws on input that type-checks, never sleeps an absurd wait, and reads a
 * hostile body in linear time (issue 11, section 2).
 */
import { describe, expect, it } from "vitest";
import { budgetNotBefore, classify, DEFAULT_POLICY, plan } from "../../src/engine";
import type { ClassifyInput, Verdict } from "../../src/engine";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const DAY_MS = 86_400_000;
const ISO = /^[+-]?\d{4,6}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const at = (status: number, headers: Record<string, string>, url = "https://api.example.test/x", body?: unknown): ClassifyInput => ({
  request: { method: "GET", url },
  response: { status, headers, body },
});
const firstPlan = (verdict: Verdict, policy = DEFAULT_POLICY) => plan(verdict, { attempts: 1, firstAttemptAtMs: NOW }, policy, { nowMs: NOW, random: () => 0.5 });

describe("times beyond what a Date can hold (ECMA-262 time range, ±8.64e15 ms)", () => {
  it("x-ratelimit-reset 8700000000000000 on a 200 does not throw; the reset past the cap is dropped and said so", () => {
    const verdict = classify(at(200, { "x-ratelimit-remaining": "5", "x-ratelimit-reset": "8700000000000000" }), { nowMs: NOW });
    expect(verdict.budget).toMatchObject({ remaining: 5, resetAt: null });
    expect(verdict.ignored).toContainEqual(expect.objectContaining({ signal: "x-ratelimit-remaining reset" }));
    expect(budgetNotBefore(verdict, 10, NOW)).toBeNull();
  });

  it("Retry-After 8700000000000 does not throw in classify or plan, and is deferred, not slept", () => {
    const verdict = classify(at(429, { "Retry-After": "8700000000000" }), { nowMs: NOW });
    expect(verdict.minWaitMs).toBeNull();
    expect(verdict.waitAboveCapMs).toBe(8_700_000_000_000_000);
    const decision = firstPlan(verdict);
    expect(decision).toMatchObject({ decision: "defer", waitMs: 31 * DAY_MS });
    if (decision.decision === "defer") expect(decision.notBefore).toMatch(ISO);
  });

  it("a clock near the end of the Date range still yields valid ISO strings", () => {
    const nowMs = 8.64e15 - 1000;
    const verdict = classify(at(429, { "Retry-After": "60", RateLimit: '"d";r=0;t=600' }), { nowMs });
    expect(verdict.budget?.resetAt).toMatch(ISO);
    const decision = plan(verdict, { attempts: 1, firstAttemptAtMs: nowMs }, DEFAULT_POLICY, { nowMs, random: () => 0.5 });
    expect(decision.decision).toBe("retry");
    if (decision.decision === "retry") expect(decision.notBefore).toMatch(ISO);
  });
});

describe("a server wait above the cap (default 31 days) is reported and deferred, never slept", () => {
  it("Retry-After: 10000000000 (year 2343) is in ignored with the reason; plan defers by the cap", () => {
    const verdict = classify(at(429, { "Retry-After": "10000000000" }), { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: true, minWaitMs: null, waitSource: null, waitAboveCapMs: 10_000_000_000_000 });
    expect(verdict.ignored).toEqual([expect.objectContaining({ signal: "retry-after", value: "10000000000", why: expect.stringMatching(/above the cap of 31 days/) })]);
    const decision = firstPlan(verdict);
    expect(decision).toMatchObject({ decision: "defer", waitMs: 31 * DAY_MS, notBefore: "2026-12-31T12:00:00.000Z" });
  });

  it("never retries an above-cap wait, whatever the inline limit", () => {
    const verdict = classify(at(429, { "Retry-After": String(40 * 86_400) }), { nowMs: NOW });
    const generous = { ...DEFAULT_POLICY, maxInlineWaitMs: 8e15, maxTotalMs: 8e15 };
    expect(firstPlan(verdict, generous).decision).toBe("defer");
  });

  it("an HTTP-date in year 9999 is above the cap too", () => {
    const verdict = classify(at(503, { "Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT" }), { nowMs: NOW });
    expect(verdict.waitAboveCapMs).toBeGreaterThan(31 * DAY_MS);
    expect(firstPlan(verdict).decision).toBe("defer");
  });

  it("the cap is configurable in classify (maxServerWaitMs) and in the policy", () => {
    const twoHours = at(429, { "Retry-After": "7200" });
    expect(classify(twoHours, { nowMs: NOW }).minWaitMs).toBe(7_200_000);
    const capped = classify(twoHours, { nowMs: NOW, maxServerWaitMs: 3_600_000 });
    expect(capped).toMatchObject({ minWaitMs: null, waitAboveCapMs: 7_200_000 });
    expect(firstPlan(capped)).toMatchObject({ decision: "defer", waitMs: 31 * DAY_MS });
    // A policy with a smaller cap defers a wait that classify let through, by its own cap.
    const policyCap = { ...DEFAULT_POLICY, maxServerWaitMs: 3_600_000 };
    expect(firstPlan(classify(twoHours, { nowMs: NOW }), policyCap)).toMatchObject({ decision: "defer", waitMs: 3_600_000 });
  });

  it("a quota whose reset is above the cap is deferred by the cap, not failed and not slept", () => {
    const verdict = classify(
      at(429, { "Retry-After": String(90 * 86_400) }, "https://api.openai.com/v1/x", { error: { code: "rate_limit_exceeded", message: "on requests per day (RPD)" } }),
      { nowMs: NOW },
    );
    expect(verdict).toMatchObject({ limitType: "quota", retryable: false, minWaitMs: null });
    expect(firstPlan(verdict)).toMatchObject({ decision: "defer", waitMs: 31 * DAY_MS });
  });

  it("a pacing wait from a vanishing restore rate is not trusted (budgetNotBefore gives null)", () => {
    const verdict = classify(
      at(200, {}, "https://shop.myshopify.com/admin/api/2025-01/graphql.json", { data: {}, extensions: { cost: { requestedQueryCost: 1, throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 0, restoreRate: 1e-12 } } } }),
      { nowMs: NOW },
    );
    expect(budgetNotBefore(verdict, 10, NOW)).toBeNull();
  });
});

describe("plan never throws on a policy or random source that type-checks", () => {
  const verdict = classify(at(503, {}), { nowMs: NOW });
  it.each([
    ["NaN backoff base", { backoffBaseMs: Number.NaN }],
    ["infinite total time", { maxTotalMs: Number.POSITIVE_INFINITY }],
    ["negative inline limit", { maxInlineWaitMs: -1 }],
    ["an unknown jitter", { jitter: "wobbly" as never }],
    ["zero attempts", { maxAttempts: 0 }],
  ])("%s: one clear reason, no exception", (_label, change) => {
    const decision = firstPlan(verdict, { ...DEFAULT_POLICY, ...change });
    expect(decision.decision).toBe("fail");
    expect(decision.reason).toMatch(/^Not retried: policy\.\w+ is /);
  });

  it("a random source that returns NaN or 7 still gives a whole, non-negative wait", () => {
    for (const value of [Number.NaN, 7, -3]) {
      const decision = plan(verdict, { attempts: 1, firstAttemptAtMs: NOW }, DEFAULT_POLICY, { nowMs: NOW, random: () => value });
      expect(decision.decision).toBe("retry");
      if (decision.decision === "retry") expect(Number.isSafeInteger(decision.waitMs) && decision.waitMs >= 0).toBe(true);
    }
  });
});

describe("hostile bodies and headers classify in linear time (a guard against super-linear regexes, not a speed claim)", () => {
  const MB = 2_100_000;
  // Each of these took seconds to minutes with the former patterns: QuickBooks' /<Error[^>]*\bcode="3001"/
  // restarted at every "<Error" and scanned to the end; Shopify's /(\d+)\s*\/\s*(\d+)/ restarted at every digit.
  it.each([
    ["a 2.1 MB QuickBooks 200 made of unclosed <Error tags", at(200, {}, "https://quickbooks.api.intuit.com/v3/company/1/query", "<Error ".repeat(MB / 7))],
    ["a 2.1 MB QuickBooks body of near-miss codes", at(200, {}, "https://quickbooks.api.intuit.com/v3/company/1/query", '<Error code="300'.repeat(MB / 16))],
    ["a 2.1 MB Shopify call-limit digit run", at(200, { "x-shopify-shop-api-call-limit": "1".repeat(MB) }, "https://s.myshopify.com/admin/api/2025-01/products.json")],
    ["a 2.1 MB Retry-After of digits", at(429, { "Retry-After": "9".repeat(MB) })],
    ["a 2.1 MB Retry-After of spaces", at(429, { "Retry-After": `Mon,${" ".repeat(MB)}x` })],
    ["a 1 MB OpenAI duration", at(429, { "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": `${"1s".repeat(MB / 4)}x` }, "https://api.openai.com/v1/x")],
    ["a 2.1 MB Google quota message", at(429, {}, "https://sheets.googleapis.com/v4/x", { error: { status: "RESOURCE_EXHAUSTED", message: "limit '".repeat(MB / 7) } })],
    ["a 2.1 MB Jira beta RateLimit policy", at(429, { "beta-ratelimit": '"a";r=1', "beta-ratelimit-policy": '"a"'.repeat(MB / 3) }, "https://x.atlassian.net/rest/api/3/issue/A-1")],
    ["a 2.1 MB Salesforce limit info", at(200, { "sforce-limit-info": `api-usage=${"1".repeat(MB)}` }, "https://x.my.salesforce.com/x")],
  ])("%s", (_label, input) => {
    const startedMs = performance.now();
    const verdict = classify(input, { nowMs: NOW });
    const elapsedMs = performance.now() - startedMs;
    expect(typeof verdict.reason).toBe("string");
    expect(elapsedMs).toBeLessThan(1000);
  });
});
