import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://apidocs.chargebee.com/docs/api/error-handling (429, Retry-After, the error envelope)
// https://www.chargebee.com/docs/billing/2.0/kb/platform/what-are-the-chargebee-api-limits (per minute and concurrent, "in approximately a minute")
// https://github.com/chargebee/chargebee-java/blob/v4/src/main/java/com/chargebee/v4/exceptions/codes/TooManyRequestsApiErrorCode.java (the 429 codes)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const LIMIT_MESSAGE = "Sorry, access has been blocked temporarily due to request count exceeding acceptable limits. Please try after some time.";
const cbError = (status: number, code: string, message: string, type = "operation_failed") => ({ message, type, api_error_code: code, http_status_code: status });
const limitExceeded = cbError(429, "api_request_limit_exceeded", LIMIT_MESSAGE);
const classifyAt = (url: string, status: number, body: unknown, headers: Record<string, string> = {}, method = "GET") =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW });

describe("Chargebee's answers, read by host", () => {
  it("every site's subdomain, live or test, is Chargebee's", () => {
    for (const url of ["https://acme.chargebee.com/api/v2/customers", "https://acme-test.chargebee.com/api/v2/customers"]) {
      expect(classifyAt(url, 200, { list: [] })).toMatchObject({ provider: "chargebee", throttled: false, limitType: "none", budget: null });
    }
  });

  it("a 429 api_request_limit_exceeded waits its Retry-After, in the site's scope", () => {
    const verdict = classifyAt("https://acme.chargebee.com/api/v2/subscriptions", 429, limitExceeded, { "retry-after": "17" });
    expect(verdict).toMatchObject({ provider: "chargebee", throttled: true, retryable: true, limitType: "burst", minWaitMs: 17_000, waitSource: "retry-after", scope: {} });
    expect(verdict.reason).toContain("api_request_limit_exceeded");
  });

  it("with no Retry-After, the documented minute until the limit resets is the wait", () => {
    expect(classifyAt("https://acme.chargebee.com/api/v2/invoices", 429, limitExceeded)).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 60_000, waitSource: "doc:fixed-60s" });
  });

  it("a 429 with no JSON at all is still the site's limit", () => {
    expect(classifyAt("https://acme.chargebee.com/api/v2/invoices", 429, "Too Many Requests")).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 60_000 });
  });

  it("a 429 whose message names concurrent requests is the site's concurrency limit", () => {
    const body = cbError(429, "api_request_limit_exceeded", "Sorry, access has been blocked temporarily due to concurrent request count exceeding acceptable limits.");
    expect(classifyAt("https://acme.chargebee.com/api/v2/customers", 429, body, { "retry-after": "5" })).toMatchObject({ throttled: true, retryable: true, limitType: "concurrency", minWaitMs: 5000 });
  });

  it("lock_timeout is contention and a third party's limit is not the site's: both retried, neither a throttle of the site", () => {
    const lock = classifyAt("https://acme.chargebee.com/api/v2/subscriptions/sub_1/cancel", 429, cbError(429, "lock_timeout", "The resource is locked. Please retry after some time."), {}, "POST");
    expect(lock).toMatchObject({ throttled: false, retryable: true, limitType: "contention", minWaitMs: null });
    const thirdParty = classifyAt("https://acme.chargebee.com/api/v2/invoices/inv_1/collect_payment", 429, cbError(429, "third_party_api_request_limit_exceeded", "Gateway rate limit exceeded."), { "retry-after": "3" }, "POST");
    expect(thirdParty).toMatchObject({ throttled: false, retryable: true, limitType: "burst", minWaitMs: 3000, waitSource: "retry-after" });
  });

  it("the 503 codes are transient and retried; 403 request_blocked and api_authorization_failed are final", () => {
    for (const code of ["site_not_ready", "site_read_only_mode", "db_connection_failure", "internal_temporary_error"]) {
      const verdict = classifyAt("https://acme.chargebee.com/api/v2/plans", 503, cbError(503, code, "Please retry after some time."));
      expect(verdict).toMatchObject({ throttled: false, retryable: true, limitType: "server" });
      expect(verdict.reason).toContain(code);
    }
    for (const code of ["request_blocked", "api_authorization_failed"]) {
      expect(classifyAt("https://acme.chargebee.com/api/v2/customers", 403, cbError(403, code, "Not allowed."))).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    }
  });
});

describe("a Chargebee site's limit, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 with Retry-After waits it once, then the customer is created", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "4" }, body: limitExceeded },
      { status: 200, body: { customer: { id: "cust_1" } } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "chargebee", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/api/v2/customers", data: "first_name=Ann" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("chargebee");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(4000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(4000);
  });

  it("a 429 with no Retry-After waits the documented minute, then the list comes back", async () => {
    const server = await servers.start([{ status: 429, body: limitExceeded }, { status: 200, body: { list: [] } }]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "chargebee", clock });
    const result = await client.request({ method: "GET", url: "/api/v2/subscriptions" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "doc:fixed-60s" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(60_000);
  });

  it("a 400 invalid_request is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 400, body: cbError(400, "param_wrong_value", "email : invalid email", "invalid_request") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "chargebee", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/api/v2/customers", data: "email=nope" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "chargebee", throttled: false, retryable: false });
  });

  it("a 401 api_authentication_failed is final: one call", async () => {
    const server = await servers.start([{ status: 401, body: cbError(401, "api_authentication_failed", "Sorry, authentication failed. Invalid api key", "invalid_request") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "chargebee", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/api/v2/customers" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ limitType: "permission", retryable: false });
  });
});
