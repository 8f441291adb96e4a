import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor, writeRetrySafety } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://www.zoho.com/crm/developer/docs/api/v8/api-limits.html (credits, concurrency, X-API-CREDITS-REMAINING)
// https://www.zoho.com/crm/developer/docs/api/v8/status-codes.html (429 TOO_MANY_REQUESTS: 24 h credits or concurrency)
// https://help.zoho.com/portal/en/community/topic/credit-calculation-and-concurrency-in-zoho-crm-apis (rolling 24 h)
const NOW = { nowMs: Date.parse("2026-11-30T12:00:00Z") };
const tooMany = { code: "TOO_MANY_REQUESTS", details: {}, message: "too many requests", status: "error" };
const json = { "content-type": "application/json;charset=UTF-8" };

describe("zoho-crm dialect edge cases", () => {
  it.each([
    "https://www.zohoapis.com/crm/v8/Leads",
    "https://www.zohoapis.eu/crm/v8/Leads",
    "https://www.zohoapis.in/crm/v8/Leads",
    "https://www.zohoapis.com.au/crm/v8/Leads",
    "https://www.zohoapis.com.cn/crm/v8/Leads",
    "https://www.zohoapis.jp/crm/v8/Leads",
    "https://www.zohoapis.ca/crm/v8/Leads",
    "https://www.zohoapis.sa/crm/v8/Leads",
    "https://sandbox.zohoapis.com/crm/v8/Leads",
    "https://content.zohoapis.com/crm/v8/upload",
  ])("%s is Zoho CRM's, in the crm scope", (url) => {
    const v = classify({ request: { method: "GET", url }, response: { status: 429, headers: json, body: tooMany } }, NOW);
    expect(v).toMatchObject({ provider: "zoho-crm", limitType: "concurrency", scope: { api: "crm" } });
    expect(requestScopeFor({ request: { method: "GET", url } })).toEqual({ api: "crm" });
  });

  it("a 429 with credits 0 is the credits quota; with credits left, or none shown, the concurrency limit", () => {
    const at = (headers: Record<string, string>) => classify({ request: { method: "POST", url: "https://www.zohoapis.com/crm/v8/Leads" }, response: { status: 429, headers: { ...json, ...headers }, body: tooMany } }, NOW);
    expect(at({ "X-API-CREDITS-REMAINING": "0" })).toMatchObject({ limitType: "quota", retryable: false, minWaitMs: 86_400_000, waitSource: "doc:rolling-24h" });
    expect(at({ "X-API-CREDITS-REMAINING": "12" })).toMatchObject({ limitType: "concurrency", retryable: true, minWaitMs: null });
    expect(at({})).toMatchObject({ limitType: "concurrency", retryable: true, minWaitMs: null });
    // An unreadable count is recorded, not taken for 0.
    const garbled = at({ "X-API-CREDITS-REMAINING": "lots" });
    expect(garbled).toMatchObject({ limitType: "concurrency" });
    expect(garbled.ignored.map((i) => i.signal)).toContain("x-api-credits-remaining");
  });

  it("a Retry-After, if one came, is a floor under either reading", () => {
    const v = classify({ request: { method: "GET", url: "https://www.zohoapis.com/crm/v8/Leads" }, response: { status: 429, headers: { ...json, "Retry-After": "5" }, body: tooMany } }, NOW);
    expect(v).toMatchObject({ limitType: "concurrency", minWaitMs: 5000, waitSource: "retry-after" });
  });

  it("a POST refused by the concurrency limit may be sent again: a throttle refusal", () => {
    const v = classify({ request: { method: "POST", url: "https://www.zohoapis.com/crm/v8/Leads" }, response: { status: 429, headers: json, body: tooMany } }, NOW);
    expect(v).toMatchObject({ provider: "zoho-crm", limitType: "concurrency" });
    expect(writeRetrySafety({ method: "POST", body: { data: [{ Last_Name: "Lovelace" }] } }, v)).toMatchObject({ repeatable: true, basis: "throttle-refusal" });
  });

  it("another Zoho product on the same host keeps the generic reading, in its own scope", () => {
    const url = "https://www.zohoapis.com/books/v4/invoices?organization_id=10234695";
    const v = classify({ request: { method: "GET", url }, response: { status: 429, headers: { ...json, "X-API-CREDITS-REMAINING": "0" }, body: { code: 44, message: "You have made too many requests." } } }, NOW);
    expect(v).toMatchObject({ provider: "zoho-crm", limitType: "burst", retryable: true, scope: { api: "books" } });
    expect(requestScopeFor({ request: { method: "GET", url } })).toEqual({ api: "books" });
  });
});

describe("Zoho CRM's TOO_MANY_REQUESTS, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a concurrency 429 (credits left) is retried with backoff and the call goes through", async () => {
    const server = await servers.start([
      { status: 429, headers: { "x-api-credits-remaining": "20512" }, body: tooMany },
      { status: 200, headers: { "x-api-credits-remaining": "20511" }, body: { data: [{ id: "4150868000000225013" }] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "zoho-crm", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/crm/v8/Leads?fields=Last_Name" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("zoho-crm");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429 });
    expect(result.attempts[0]!.waitSource).not.toBe("doc:rolling-24h");
  });

  it("a 429 with the credits spent is not retried in this run: deferred by the rolling 24 hours", async () => {
    const server = await servers.start([{ status: 429, headers: { "x-api-credits-remaining": "0" }, body: tooMany }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "zoho-crm", clock: virtualClock(), onLongWait: "defer" });
    const result = await client.request({ method: "POST", url: "/crm/v8/Contacts", data: { data: [{ Last_Name: "Lovelace" }] } });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "zoho-crm", limitType: "quota", retryable: false });
    expect(result.notBefore).toBe("2026-01-02T00:00:00.000Z");
  });

  it("a 401 INVALID_TOKEN is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 401, body: { code: "INVALID_TOKEN", details: {}, message: "invalid oauth token", status: "error" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "zoho-crm", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/crm/v8/Accounts" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "zoho-crm", limitType: "permission", retryable: false });
  });
});
