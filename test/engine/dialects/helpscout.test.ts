import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developer.helpscout.com/mailbox-api/overview/rate-limiting/ (per-account minute, writes count 2, X-RateLimit-*-Minute, X-RateLimit-Retry-After)
// https://developer.helpscout.com/mailbox-api/overview/errors/ (403 Access denied)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const minute = (remaining: number, limit = 400) => ({ "x-ratelimit-limit-minute": String(limit), "x-ratelimit-remaining-minute": String(remaining) });
const spent = (retryAfterS: number) => ({ ...minute(0), "x-ratelimit-retry-after": String(retryAfterS) });

describe("Help Scout's per-minute headers, read by host", () => {
  it("api.helpscout.net is Help Scout's (any letter case, a trailing dot), and a read spends one unit of the account's minute", () => {
    for (const url of ["https://api.helpscout.net/v2/mailboxes", "https://API.HelpScout.net./v2/mailboxes"]) {
      const verdict = classify({ request: { method: "GET", url }, response: { status: 200, headers: minute(398) } }, { nowMs: NOW });
      expect(verdict).toMatchObject({
        provider: "helpscout",
        throttled: false,
        budget: { remaining: 398, limit: 400, resetAt: null, source: "x-ratelimit-remaining-minute", windowMs: 60_000, requestUnits: 1 },
      });
    }
  });

  it.each(["POST", "PUT", "PATCH", "DELETE"])("a %s counts as 2 requests toward the limit", (method) => {
    const verdict = classify({ request: { method, url: "https://api.helpscout.net/v2/customers/7" }, response: { status: 204, headers: minute(250) } }, { nowMs: NOW });
    expect(verdict.budget).toMatchObject({ remaining: 250, requestUnits: 2 });
  });

  it("a 429 waits X-RateLimit-Retry-After, seconds from now (not an epoch time), and shows the minute's reset", () => {
    const verdict = classify({ request: { method: "GET", url: "https://api.helpscout.net/v2/conversations" }, response: { status: 429, headers: spent(23) } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 23_000, waitSource: "x-ratelimit-retry-after" });
    expect(verdict.budget).toMatchObject({ remaining: 0, limit: 400, resetAt: "2026-11-30T12:00:23.000Z" });
  });

  it("a standard Retry-After (API 1.0's header) is read too, and the longer of the two wins", () => {
    const headers = { ...spent(10), "retry-after": "30" };
    const verdict = classify({ request: { method: "GET", url: "https://api.helpscout.net/v2/users" }, response: { status: 429, headers } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ minWaitMs: 30_000, waitSource: "retry-after" });
  });

  it("a 429 with no wait header waits the minute; an unreadable one is listed, not taken for a wait", () => {
    const verdict = classify({ request: { method: "GET", url: "https://api.helpscout.net/v2/tags" }, response: { status: 429, headers: { ...minute(0), "x-ratelimit-retry-after": "soon" } } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 60_000, waitSource: "doc:fixed-60s" });
    expect(verdict.ignored).toEqual([expect.objectContaining({ signal: "x-ratelimit-retry-after" })]);
  });

  it("a 403 that shows a spent minute and a retry wait is still an access error: Help Scout throttles with 429 only", () => {
    const verdict = classify({ request: { method: "GET", url: "https://api.helpscout.net/v2/reports/company" }, response: { status: 403, headers: spent(20), body: { message: "Access denied" } } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ provider: "helpscout", throttled: false, retryable: false, limitType: "permission", minWaitMs: null });
  });

  it("Help Scout's other hosts are not the Mailbox API's", () => {
    const verdict = classify({ request: { method: "GET", url: "https://docsapi.helpscout.net/v1/collections" }, response: { status: 200, headers: minute(10) } }, { nowMs: NOW });
    expect(verdict.provider).not.toBe("helpscout");
  });
});

describe("a Help Scout 429, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("waits X-RateLimit-Retry-After once, then the conversation is created", async () => {
    const server = await servers.start([
      { status: 429, headers: spent(17) },
      { status: 201, headers: { ...minute(398), location: "https://api.helpscout.net/v2/conversations/123", "resource-id": "123" } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "helpscout", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/v2/conversations", data: { subject: "Where is my order?", mailboxId: 85 } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("helpscout");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-ratelimit-retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(17_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(30_000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(17_000);
  });

  it("a 429 with no wait header waits the minute, then the read goes through", async () => {
    const server = await servers.start([{ status: 429, headers: minute(0) }, { status: 200, headers: minute(399), body: { _embedded: { mailboxes: [] } } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "helpscout", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v2/mailboxes" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "doc:fixed-60s" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(60_000);
  });

  it("a 403 Access denied is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: minute(350), body: { logRef: "64bb72b4-0a92-11e8-ba89-0ed5f89f718b", message: "Access denied" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "helpscout", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v2/reports/company" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "helpscout", limitType: "permission", retryable: false });
  });
});
