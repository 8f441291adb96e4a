import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { ebayApiOf, pacificOffsetMs } from "../../../src/engine/dialects/ebay";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developer.ebay.com/develop/get-started/api-call-limits (calls per day per API)
// https://developer.ebay.com/develop/api/sell/error_codes (HTTP 429, errorId 2001)
// https://developer.ebay.com/api-docs/developer/analytics/overview.html (reset, timeWindow)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const HOUR = 3_600_000;
const callLimitReached = {
  errors: [{ errorId: 2001, domain: "ACCESS", category: "REQUEST", message: "Too many requests.", longMessage: "The request limit has been reached for the resource." }],
};

describe("eBay's hosts and scopes", () => {
  it("production and Sandbox hosts are eBay's; the scope is the API the path names", () => {
    expect(classify({ request: { url: "https://api.ebay.com/buy/browse/v1/item_summary/search?q=x" }, response: { status: 200, body: { total: 0 } } }, { nowMs: NOW }).provider).toBe("ebay");
    expect(classify({ request: { url: "https://API.Sandbox.eBay.com/sell/inventory/v1/offer" }, response: { status: 200, body: {} } }, { nowMs: NOW }).provider).toBe("ebay");
    expect(requestScopeFor({ request: { url: "https://api.ebay.com/buy/browse/v1/item/v1%7C1%7C0" } })).toEqual({ api: "buy.browse" });
    expect(requestScopeFor({ request: { url: "https://api.ebay.com/sell/inventory/v1/inventory_item/sku1" } })).toEqual({ api: "sell.inventory" });
  });

  it("a version right after the context leaves the context alone; the Trading API's endpoint is its own", () => {
    expect(ebayApiOf("/identity/v1/oauth2/token")).toBe("identity");
    expect(ebayApiOf("/developer/analytics/v1_beta/rate_limit/")).toBe("developer.analytics");
    expect(ebayApiOf("/ws/api.dll")).toBe("trading");
    expect(ebayApiOf("/")).toBe("/");
  });

  it("Pacific time is 7 h behind UTC in daylight time and 8 h otherwise, switching at 2:00 local time", () => {
    expect(pacificOffsetMs(Date.parse("2026-11-30T12:00:00Z"))).toBe(8 * HOUR);
    expect(pacificOffsetMs(Date.parse("2026-08-10T20:00:00Z"))).toBe(7 * HOUR);
    // 2026: daylight time from Sunday 8 March 10:00 UTC to Sunday 1 November 09:00 UTC.
    expect(pacificOffsetMs(Date.parse("2026-03-08T09:59:59Z"))).toBe(8 * HOUR);
    expect(pacificOffsetMs(Date.parse("2026-03-08T10:00:00Z"))).toBe(7 * HOUR);
    expect(pacificOffsetMs(Date.parse("2026-11-01T08:59:59Z"))).toBe(7 * HOUR);
    expect(pacificOffsetMs(Date.parse("2026-11-01T09:00:00Z"))).toBe(8 * HOUR);
  });
});

describe("eBay's call-limit error, read by host", () => {
  it("429 errorId 2001 is the day's call limit: a quota to the next midnight Pacific, not retried", () => {
    const verdict = classify({ request: { method: "GET", url: "https://api.ebay.com/buy/browse/v1/item_summary/search?q=drone" }, response: { status: 429, body: callLimitReached } }, { nowMs: NOW });
    expect(verdict).toMatchObject({
      provider: "ebay",
      throttled: true,
      retryable: false,
      limitType: "quota",
      minWaitMs: 20 * HOUR,
      waitSource: "doc:daily-reset-midnight-pacific",
      scope: { api: "buy.browse" },
      budget: { remaining: 0, resetAt: "2026-12-01T08:00:00.000Z" },
    });
  });

  it("a Retry-After longer than the reset still wins; a 429 without 2001 is a short-window throttle", () => {
    const longer = classify({ request: { url: "https://api.ebay.com/buy/browse/v1/item_summary/search" }, response: { status: 429, headers: { "retry-after": String(21 * 3600) }, body: callLimitReached } }, { nowMs: NOW });
    expect(longer).toMatchObject({ limitType: "quota", retryable: false, minWaitMs: 21 * HOUR, waitSource: "retry-after" });
    const bare = classify({ request: { url: "https://api.ebay.com/commerce/taxonomy/v1/category_tree/0" }, response: { status: 429, body: "Too Many Requests" } }, { nowMs: NOW });
    expect(bare).toMatchObject({ provider: "ebay", throttled: true, retryable: true, limitType: "burst", minWaitMs: null, scope: { api: "commerce.taxonomy" } });
  });

  it("403 access denied with errorId 1100 stays final", () => {
    const verdict = classify({ request: { url: "https://api.ebay.com/sell/fulfillment/v1/order" }, response: { status: 403, body: { errors: [{ errorId: 1100, domain: "ACCESS", category: "REQUEST", message: "Access denied" }] } } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
  });
});

describe("eBay's limits, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 without errorId 2001 waits its Retry-After once, then the call goes through", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "3" }, body: "Too Many Requests" },
      { status: 200, body: { categoryTreeId: "0" } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "ebay", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/commerce/taxonomy/v1/category_tree/0" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("ebay");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(3000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(3000);
  });

  it("errorId 2001 defers the work to midnight Pacific after one call, and holds back that API only", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 429, headers: { date: "Thu, 01 Jan 2026 00:00:00 GMT" }, body: callLimitReached },
      { status: 200, body: { sku: "sku1" } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "ebay", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const result = await client.request({ method: "GET", url: "/buy/browse/v1/item_summary/search?q=drone" });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    // 00:00 UTC on 1 January is 16:00 PST: the day resets at 08:00 UTC.
    expect(result.notBefore).toBe("2026-01-01T08:00:00.000Z");
    const again = await client.request({ method: "GET", url: "/buy/browse/v1/item/v1%7C1%7C0" });
    expect(again.outcome).toBe("deferred");
    expect(again.attempts).toHaveLength(0);
    const inventory = await client.request({ method: "GET", url: "/sell/inventory/v1/inventory_item/sku1" });
    expect(inventory.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
  });

  it("a 403 access denied is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, body: { errors: [{ errorId: 1100, domain: "ACCESS", category: "REQUEST", message: "Access denied", longMessage: "Insufficient permissions to fulfill the request." }] } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "ebay", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/sell/fulfillment/v1/order" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "ebay", limitType: "permission", retryable: false });
  });
});
