import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developers.klaviyo.com/en/docs/rate_limits_and_error_handling (burst 1 s and steady 1 min windows per endpoint, RateLimit-*, Retry-After on 429)
// https://github.com/klaviyo/klaviyo-api-node/issues/66 (the 429 body: code throttled, "Expected available in 1 second.")
const NOW = Date.parse("2026-11-30T12:00:00Z");
const steady = (remaining: number, reset = 30, limit = 700) => ({ "ratelimit-limit": String(limit), "ratelimit-remaining": String(remaining), "ratelimit-reset": String(reset) });
const throttled = (seconds: number) => ({
  errors: [{ id: "8c8f4aea-7289-4a13-b697-5dd5dde38f1e", status: 429, code: "throttled", title: "Request was throttled.", detail: `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? "" : "s"}.`, source: { pointer: "/data/" } }],
});
const denied = { errors: [{ id: "1d3f5a7c", status: 403, code: "permission_denied", title: "You do not have permission to perform this action.", detail: "You do not have permission to perform this action." }] };
const scopeOf = (method: string, url: string) => requestScopeFor({ request: { method, url } });

describe("a Klaviyo request's scope: its endpoint, known before it is sent", () => {
  it.each([
    ["GET", "https://a.klaviyo.com/api/profiles/?page[size]=100", "GET /api/profiles"],
    ["POST", "https://a.klaviyo.com/api/profiles/", "POST /api/profiles"],
    ["GET", "https://a.klaviyo.com/api/profiles/01GDDKASAP8TKDDA2GRZDSVP4H/", "GET /api/profiles/{id}"],
    ["PATCH", "https://a.klaviyo.com/api/profiles/01GDDKASAP8TKDDA2GRZDSVP4H", "PATCH /api/profiles/{id}"],
    ["POST", "https://a.klaviyo.com/api/lists/Y6nRLr/relationships/profiles/", "POST /api/lists/{id}/relationships/profiles"],
    ["GET", "https://a.klaviyo.com/api/catalog-items/$custom:::$default:::SKU-1/variants/", "GET /api/catalog-items/{id}/variants"],
    ["POST", "https://a.klaviyo.com/client/subscriptions/?company_id=AbC123", "POST /client/subscriptions"],
    ["POST", "https://a.klaviyo.com/api/campaign-values-reports/", "POST /api/campaign-values-reports"],
  ])("%s %s counts against %s", (method, url, endpoint) => {
    expect(scopeOf(method, url)).toEqual({ endpoint });
  });

  it("a.klaviyo.com is Klaviyo's, and a 429 names the same scope as its request", () => {
    const url = "https://a.klaviyo.com/api/events/";
    const verdict = classify({ request: { method: "POST", url }, response: { status: 429, headers: { "retry-after": "2" }, body: throttled(2) } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ provider: "klaviyo", throttled: true, retryable: true, limitType: "burst", minWaitMs: 2000, waitSource: "retry-after" });
    expect(verdict.scope).toEqual(scopeOf("POST", url));
  });
});

describe("Klaviyo's answers, read by classify", () => {
  it("a success's RateLimit-* fields are the steady window's budget (delta seconds, a 1-minute window)", () => {
    const verdict = classify({ request: { method: "GET", url: "https://a.klaviyo.com/api/profiles/" }, response: { status: 200, headers: steady(12, 42), body: { data: [] } } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: false, limitType: "none", scope: { endpoint: "GET /api/profiles" } });
    expect(verdict.budget).toMatchObject({ remaining: 12, limit: 700, resetAt: "2026-11-30T12:00:42.000Z", source: "ratelimit-remaining", windowMs: 60_000 });
  });

  it("a 429 with no Retry-After waits the body's 'Expected available in N seconds'", () => {
    const verdict = classify({ request: { method: "GET", url: "https://a.klaviyo.com/api/segments/" }, response: { status: 429, body: throttled(56) } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ limitType: "burst", retryable: true, minWaitMs: 56_000, waitSource: "body:errors[].detail" });
  });

  it("the longer of Retry-After and the body's seconds is the wait", () => {
    const verdict = classify({ request: { method: "GET", url: "https://a.klaviyo.com/api/segments/" }, response: { status: 429, headers: { "retry-after": "3" }, body: throttled(7) } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ minWaitMs: 7000, waitSource: "body:errors[].detail" });
  });

  it("a stated 0 s waits the 1-second burst window, and a 429 that states nothing backs off", () => {
    const zero = classify({ request: { url: "https://a.klaviyo.com/api/flows/" }, response: { status: 429, body: throttled(0) } }, { nowMs: NOW });
    expect(zero).toMatchObject({ limitType: "burst", minWaitMs: 1000, waitSource: "doc:fixed-1s" });
    const bare = classify({ request: { url: "https://a.klaviyo.com/api/flows/" }, response: { status: 429, body: "Too Many Requests" } }, { nowMs: NOW });
    expect(bare).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: null });
  });

  it("a wait longer than the steady window is a daily limit: a quota, deferred, not retried", () => {
    const verdict = classify({ request: { method: "POST", url: "https://a.klaviyo.com/api/flow-series-reports/" }, response: { status: 429, headers: { "retry-after": "7200" }, body: throttled(7200) } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: 7_200_000, scope: { endpoint: "POST /api/flow-series-reports", limit: "daily" } });
  });

  it("a 403 with the steady window spent is still an access error", () => {
    const verdict = classify({ request: { method: "GET", url: "https://a.klaviyo.com/api/campaigns/" }, response: { status: 403, headers: steady(0, 20), body: denied } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: false, retryable: false, limitType: "permission", minWaitMs: null });
  });

  it("524 (Klaviyo's edge timed out) is a transient server failure, as Klaviyo's SDK retries it", () => {
    const verdict = classify({ request: { url: "https://a.klaviyo.com/api/events/" }, response: { status: 524, body: "A timeout occurred" } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: false, retryable: true, limitType: "server" });
  });
});

describe("a Klaviyo 429, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("waits its Retry-After, then the event is created", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "3" }, body: throttled(3) },
      { status: 202, headers: steady(699, 58), body: "" },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "klaviyo", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/api/events/", data: { data: { type: "event", attributes: {} } } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("klaviyo");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(3000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(3000);
  });

  it("with no Retry-After, waits the seconds the body names, then the read goes through", async () => {
    const server = await servers.start([
      { status: 429, body: throttled(12) },
      { status: 200, headers: steady(40), body: { data: [] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "klaviyo", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/api/profiles/" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "body:errors[].detail" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(12_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(20_000);
  });

  it("a daily limit's 429 is deferred after one call", async () => {
    const clock = virtualClock();
    const server = await servers.start([{ status: 429, headers: { "retry-after": "36000" }, body: throttled(36000) }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "klaviyo", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/api/campaign-values-reports/", data: { data: { type: "campaign-values-report" } } });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    expect(Date.parse(result.notBefore!) - start).toBeGreaterThanOrEqual(36_000_000);
  });

  it("a 403 permission_denied is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: steady(0, 20, 150), body: denied }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "klaviyo", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/api/catalog-items/SKU-1/" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "klaviyo", limitType: "permission", retryable: false });
  });
});
