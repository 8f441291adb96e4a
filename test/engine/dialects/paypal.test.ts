import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developer.paypal.com/api/rate-limiting (429, no published limits, Retry-After "if available", else backoff)
// https://developer.paypal.com/api/rest/reference/rate-limiting (429 RATE_LIMIT_REACHED)
// https://developer.paypal.com/api/rest/reference/idempotency/ (retry 5xx with the same PayPal-Request-Id)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const RATE_LIMIT_REACHED = { name: "RATE_LIMIT_REACHED", message: "Too many requests. Blocked due to rate limiting.", debug_id: "90957fca61718" };
const INTERNAL_SERVER_ERROR = { name: "INTERNAL_SERVER_ERROR", message: "An internal server error occurred.", debug_id: "90957fca61718" };
const NOT_AUTHORIZED = { name: "NOT_AUTHORIZED", message: "Authorization failed due to insufficient permissions.", details: [{ issue: "PERMISSION_DENIED" }], debug_id: "c3d4e5f607182" };
const at = (url: string, status: number, body: unknown, headers: Record<string, string> = {}) =>
  classify({ request: { method: "POST", url }, response: { status, headers, body } }, { nowMs: NOW });

describe("PayPal's REST answers, read by host", () => {
  it.each(["https://api-m.paypal.com/v2/checkout/orders", "https://api-m.sandbox.paypal.com/v2/checkout/orders", "https://api.paypal.com/v1/oauth2/token", "https://API-M.PayPal.com./v2/checkout/orders"])(
    "%s is PayPal's, and its 429 RATE_LIMIT_REACHED is a burst throttle with no wait named (backoff)",
    (url) => {
      expect(at(url, 429, RATE_LIMIT_REACHED)).toMatchObject({ provider: "paypal", throttled: true, retryable: true, limitType: "burst", minWaitMs: null, waitSource: null });
    },
  );

  it("a host that serves no REST API (the website) is not PayPal's REST dialect", () => {
    expect(at("https://www.paypal.com/cgi-bin/webscr", 429, "Too Many Requests").provider).toBe("generic");
  });

  it("a Retry-After on the 429 is the wait, as PayPal's own example reads it", () => {
    expect(at("https://api-m.paypal.com/v2/checkout/orders", 429, RATE_LIMIT_REACHED, { "retry-after": "30" })).toMatchObject({ limitType: "burst", minWaitMs: 30_000, waitSource: "retry-after" });
  });

  it("the error named RATE_LIMIT_REACHED is a throttle on the 422 that the guideline's \"429 Unprocessable Entity\" could mean", () => {
    expect(at("https://api-m.paypal.com/v2/checkout/orders", 422, RATE_LIMIT_REACHED)).toMatchObject({ throttled: true, retryable: true, limitType: "burst" });
  });

  it("a 422 UNPROCESSABLE_ENTITY and a 403 NOT_AUTHORIZED are final", () => {
    const unprocessable = { name: "UNPROCESSABLE_ENTITY", details: [{ issue: "ORDER_ALREADY_CAPTURED" }] };
    expect(at("https://api-m.paypal.com/v2/checkout/orders/5O1/capture", 422, unprocessable)).toMatchObject({ throttled: false, retryable: false, limitType: "validation" });
    expect(at("https://api-m.paypal.com/v2/checkout/orders", 403, NOT_AUTHORIZED)).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
  });

  it("every 5xx is PayPal's own failure, retryable; a 503 with Retry-After waits it", () => {
    expect(at("https://api-m.paypal.com/v2/payments/captures/1/refund", 500, INTERNAL_SERVER_ERROR)).toMatchObject({ throttled: false, retryable: true, limitType: "server", minWaitMs: null });
    expect(at("https://api-m.paypal.com/v2/checkout/orders", 501, { name: "NOT_IMPLEMENTED" })).toMatchObject({ retryable: true, limitType: "server" });
    expect(at("https://api-m.paypal.com/v2/checkout/orders", 503, { name: "SERVICE_UNAVAILABLE" }, { "retry-after": "10" })).toMatchObject({ retryable: true, limitType: "server", minWaitMs: 10_000, waitSource: "retry-after" });
  });
});

describe("PayPal, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 RATE_LIMIT_REACHED with no wait header backs off, then the order is read", async () => {
    const server = await servers.start([
      { status: 429, body: RATE_LIMIT_REACHED },
      { status: 200, body: { id: "5O190127TN364715T", status: "APPROVED" } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "paypal", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v2/checkout/orders/5O190127TN364715T" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("paypal");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429 });
    expect(result.attempts[0]!.waitSource).toMatch(/^backoff:/);
    expect(result.attempts[0]!.waitMs).toBeGreaterThan(0);
  });

  it("a 429 with Retry-After waits it once, then the call goes through", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "30" }, body: RATE_LIMIT_REACHED },
      { status: 200, body: { id: "5O190127TN364715T" } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "paypal", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/v2/checkout/orders/5O190127TN364715T" });
    expect(result.outcome).toBe("success");
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(30_000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(30_000);
  });

  it("a capture answered 500 is sent again with the same PayPal-Request-Id, and succeeds", async () => {
    const server = await servers.start([
      { status: 500, body: INTERNAL_SERVER_ERROR },
      { status: 201, body: { id: "3C679366HH908993F", status: "COMPLETED" } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "paypal", clock: virtualClock() });
    const key = "capture-0VF52814937998046-1";
    const result = await client.request({ method: "POST", url: "/v2/payments/authorizations/0VF52814937998046/capture", headers: { "PayPal-Request-Id": key }, idempotencyKey: key, data: {} });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(server.calls.map((c) => c.headers["paypal-request-id"])).toEqual([key, key]);
  });

  it("a capture answered 500 without a caller's key gets one generated PayPal-Request-Id, repeated on the retry", async () => {
    const server = await servers.start([
      { status: 500, body: INTERNAL_SERVER_ERROR },
      { status: 201, body: { id: "3C679366HH908993F", status: "COMPLETED" } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "paypal", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/v2/payments/authorizations/0VF52814937998046/capture", data: {} });
    expect(result.outcome).toBe("success");
    const keys = server.calls.map((c) => c.headers["paypal-request-id"]);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(result.attempts[0]).toMatchObject({ status: 500 });
  });

  it("a 403 NOT_AUTHORIZED is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, body: NOT_AUTHORIZED }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "paypal", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v1/reporting/transactions?start_date=2026-11-01T00:00:00Z&end_date=2026-11-30T00:00:00Z" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "paypal", limitType: "permission", retryable: false, throttled: false });
  });
});
