/**
 * Each lab dialect emits what its provider documents (the URLs in src/engine/dialects/), and the engine's classify reads the
 * throttled answer as throttled with the wait the limiter meant (never less).
 */
import { describe, expect, it } from "vitest";
import { classify } from "../../src/engine";
import { isSuccess, renderOk, renderThrottled, type LabResponse, type RenderContext } from "../../src/lab/dialects";
import type { Admission } from "../../src/lab/limiters";
import { ENGINE_PROVIDER } from "../../src/lab/strategies/ours";
import type { DialectId } from "../../src/lab/types";

const NOW = Date.UTC(2026, 2, 2, 9, 0, 0); // a whole second, as the virtual clock starts
const ctx = (over: Partial<RenderContext> = {}): RenderContext => ({ nowMs: NOW, retryAfter: "seconds", budgetHeaders: true, cost: 1, jobId: "job-1", ...over });
const burst = (waitMs: number, over: Partial<Admission> = {}): Admission => ({
  admitted: false,
  waitMs,
  limit: 100,
  remaining: 0,
  resetMs: waitMs,
  unit: "requests",
  quota: false,
  windowMs: 10_000,
  ...over,
});

function read(dialect: DialectId, response: LabResponse) {
  return classify(
    { request: { method: "GET", url: "http://127.0.0.1/items/job-1" }, response: { status: response.status, headers: response.headers, body: response.body }, provider: ENGINE_PROVIDER[dialect] },
    { nowMs: NOW },
  );
}

describe("generic (RFC 6585 / RFC 9110)", () => {
  it("429 with Retry-After in whole seconds, rounded up", () => {
    const r = renderThrottled("generic", burst(2300), ctx());
    expect(r.status).toBe(429);
    expect(r.headers["retry-after"]).toBe("3");
    const v = read("generic", r);
    expect(v.throttled).toBe(true);
    expect(v.minWaitMs).toBe(3000);
  });

  it("429 with Retry-After as an IMF-fixdate HTTP-date", () => {
    const r = renderThrottled("generic", burst(2300), ctx({ retryAfter: "http-date" }));
    expect(r.headers["retry-after"]).toBe("Mon, 02 Mar 2026 09:00:03 GMT");
    const v = read("generic", r);
    expect(v.throttled).toBe(true);
    expect(v.minWaitMs).toBe(3000);
  });

  it("429 with no Retry-After: throttled, no wait", () => {
    const r = renderThrottled("generic", burst(2300), ctx({ retryAfter: "absent", budgetHeaders: false }));
    expect(r.headers["retry-after"]).toBeUndefined();
    const v = read("generic", r);
    expect(v.throttled).toBe(true);
    expect(v.minWaitMs).toBeNull();
  });

  it("a success carries X-RateLimit-* with an epoch-seconds reset the engine reads as a budget", () => {
    const r = renderOk("generic", { ...burst(0), admitted: true, remaining: 7, resetMs: 4000 }, ctx(), { id: "job-1" });
    expect(r.headers["x-ratelimit-remaining"]).toBe("7");
    expect(r.headers["x-ratelimit-reset"]).toBe(String(NOW / 1000 + 4));
    const v = read("generic", r);
    expect(v.throttled).toBe(false);
    expect(v.budget?.remaining).toBe(7);
    expect(Date.parse(v.budget!.resetAt!)).toBe(NOW + 4000);
  });
});

describe("IETF RateLimit fields", () => {
  it("RateLimit-Policy and RateLimit (r=, t=) with Retry-After", () => {
    const r = renderThrottled("ietf", burst(2300), ctx());
    expect(r.headers["ratelimit-policy"]).toBe('"default";q=100;w=10');
    expect(r.headers.ratelimit).toBe('"default";r=0;t=3');
    const v = read("ietf", r);
    expect(v.throttled).toBe(true);
    expect(v.minWaitMs).toBe(3000);
    expect(v.budget?.remaining).toBe(0);
    expect(v.budget?.limit).toBe(100);
  });
});

describe("GitHub", () => {
  it("primary: 403, remaining 0 and an epoch reset; waits until the reset", () => {
    const r = renderThrottled("github", burst(42_000), ctx());
    expect(r.status).toBe(403);
    expect(r.headers["x-ratelimit-remaining"]).toBe("0");
    expect(r.headers["x-ratelimit-reset"]).toBe(String(NOW / 1000 + 42));
    expect(JSON.stringify(r.body)).toContain("API rate limit exceeded");
    const v = read("github", r);
    expect(v.throttled).toBe(true);
    expect(v.limitType).not.toBe("permission");
    expect(v.minWaitMs).toBe(42_000);
  });

  it("secondary: 403 with retry-after and the 'secondary rate limit' wording", () => {
    const r = renderThrottled("github-secondary", burst(5000), ctx());
    expect(r.status).toBe(403);
    expect(r.headers["retry-after"]).toBe("5");
    expect(JSON.stringify(r.body)).toMatch(/secondary rate limit/);
    const v = read("github-secondary", r);
    expect(v.throttled).toBe(true);
    expect(v.minWaitMs).toBeGreaterThanOrEqual(5000);
  });
});

describe("Shopify", () => {
  it("REST: 429 with decimal Retry-After and X-Shopify-Shop-Api-Call-Limit used/limit", () => {
    const r = renderThrottled("shopify-rest", burst(1500, { limit: 40, remaining: 0 }), ctx());
    expect(r.status).toBe(429);
    expect(r.headers["retry-after"]).toBe("1.5");
    expect(r.headers["x-shopify-shop-api-call-limit"]).toBe("40/40");
    const v = read("shopify-rest", r);
    expect(v.throttled).toBe(true);
    expect(v.minWaitMs).toBe(1500);
  });

  it("GraphQL: 200 with THROTTLED and the cost fields; the wait is (cost - available) / restoreRate", () => {
    // 1,000 points restoring 50/s; 10 available, a 50-point query: 0.8 s.
    const a = burst(800, { limit: 1000, remaining: 10, windowMs: 20_000, unit: "points" });
    const r = renderThrottled("shopify-graphql", a, ctx({ cost: 50 }));
    expect(r.status).toBe(200);
    const body = r.body as { errors: { extensions: { code: string } }[]; extensions: { cost: { requestedQueryCost: number; throttleStatus: Record<string, number> } } };
    expect(body.errors[0]!.extensions.code).toBe("THROTTLED");
    expect(body.extensions.cost.requestedQueryCost).toBe(50);
    expect(body.extensions.cost.throttleStatus).toEqual({ maximumAvailable: 1000, currentlyAvailable: 10, restoreRate: 50 });
    const v = read("shopify-graphql", r);
    expect(v.throttled).toBe(true);
    expect(v.limitType).toBe("cost");
    expect(v.minWaitMs).toBe(800);
  });
});

describe("Stripe", () => {
  it("429 with Stripe-Rate-Limited-Reason and code rate_limit, no wait", () => {
    const r = renderThrottled("stripe", burst(1000), ctx());
    expect(r.status).toBe(429);
    expect(r.headers["stripe-rate-limited-reason"]).toBe("global-rate");
    expect(r.headers["retry-after"]).toBeUndefined();
    expect((r.body as { error: { code: string; type: string } }).error).toMatchObject({ code: "rate_limit", type: "invalid_request_error" });
    const v = read("stripe", r);
    expect(v.throttled).toBe(true);
    expect(v.retryable).toBe(true);
  });

  it("names the concurrency limiter (global-concurrency) when the limit is on requests in flight, as Stripe does (https://docs.stripe.com/rate-limits)", () => {
    const r = renderThrottled("stripe", burst(0, { waitMs: null, unit: "concurrent", limit: 25, resetMs: 0 } as Partial<Admission>), ctx());
    expect(r.headers["stripe-rate-limited-reason"]).toBe("global-concurrency");
    expect(read("stripe", r).limitType).toBe("concurrency");
  });
});

describe("a scenario's own 429 body (server.throttleBody)", () => {
  it("replaces the generic dialect's text and becomes the IETF problem's detail; a body that says concurrent is read as a concurrency limit", () => {
    const body = '{"detail":{"status":"too_many_concurrent_requests"}}';
    const generic = renderThrottled("generic", burst(1000), ctx({ throttleBody: body }));
    expect(generic.body).toBe(body);
    expect(read("generic", generic).limitType).toBe("concurrency");
    const ietf = renderThrottled("ietf", burst(1000), ctx({ throttleBody: "Too many concurrent requests" }));
    expect((ietf.body as { detail: string }).detail).toBe("Too many concurrent requests");
    expect(read("ietf", ietf).limitType).toBe("concurrency");
    expect(read("generic", renderThrottled("generic", burst(1000), ctx())).limitType).toBe("burst");
  });
});

describe("Slack", () => {
  it("429 with Retry-After in integer seconds and ok:false, error ratelimited", () => {
    const r = renderThrottled("slack", burst(30_000), ctx());
    expect(r.status).toBe(429);
    expect(r.headers["retry-after"]).toBe("30");
    expect(r.body).toEqual({ ok: false, error: "ratelimited" });
    const v = read("slack", r);
    expect(v.throttled).toBe(true);
    expect(v.minWaitMs).toBe(30_000);
  });
});

describe("HubSpot", () => {
  it("a burst limit: 429, policyName TEN_SECONDLY_ROLLING, X-HubSpot-RateLimit-* headers", () => {
    const r = renderThrottled("hubspot", burst(4000), ctx());
    expect(r.status).toBe(429);
    expect(r.headers["x-hubspot-ratelimit-interval-milliseconds"]).toBe("10000");
    expect(r.body).toMatchObject({ errorType: "RATE_LIMIT", policyName: "TEN_SECONDLY_ROLLING" });
    const v = read("hubspot", r);
    expect(v.throttled).toBe(true);
    expect(v.retryable).toBe(true);
  });

  it("the daily limit: policyName DAILY is a quota, not retried in this run", () => {
    const r = renderThrottled("hubspot", burst(3_600_000, { quota: true, limit: 500 }), ctx());
    expect(r.body).toMatchObject({ policyName: "DAILY" });
    expect(r.headers["x-hubspot-ratelimit-daily-remaining"]).toBe("0");
    const v = read("hubspot", r);
    expect(v.throttled).toBe(true);
    expect(v.limitType).toBe("quota");
    expect(v.retryable).toBe(false);
  });
});

describe("Marketo (limits answered 200, the code in the body)", () => {
  it("a rolling window's throttle is a 200 606 naming the limit and the window; read as a burst whose wait is that window, never less than the limiter's", () => {
    const r = renderThrottled("marketo", burst(2300), ctx());
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: false, errors: [{ code: "606", message: "Max rate limit '100' exceeded with in '10' secs" }] });
    expect(isSuccess(r.status, r.body)).toBe(false);
    const v = read("marketo", r);
    expect(v).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 10_000, writeNotProcessed: true });
  });

  it("a concurrency limiter's throttle is 615, a daily quota's 607", () => {
    expect(read("marketo", renderThrottled("marketo", burst(0, { waitMs: null, unit: "concurrent" }), ctx()))).toMatchObject({ throttled: true, limitType: "concurrency" });
    expect(read("marketo", renderThrottled("marketo", burst(3_600_000, { quota: true }), ctx()))).toMatchObject({ throttled: true, limitType: "quota", retryable: false });
  });

  it("a success is 200 success true with the result, and shows no count", () => {
    const r = renderOk("marketo", { ...burst(0), admitted: true, remaining: 7 }, ctx(), { id: "job-1" });
    expect(r.body).toMatchObject({ success: true, result: [{ id: "job-1" }] });
    expect(isSuccess(r.status, r.body)).toBe(true);
    expect(read("marketo", r)).toMatchObject({ throttled: false, budget: null });
  });
});
