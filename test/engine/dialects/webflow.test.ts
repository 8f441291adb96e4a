import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developers.webflow.com/data/reference/rate-limits (per key, per minute, X-RateLimit-Limit/-Remaining, Retry-After, one publish per minute)
// https://developers.webflow.com/data/reference/sites/publish
const NOW = Date.parse("2026-11-30T12:00:00Z");
const SITE = "580e63e98c9a982ac9b8b741";
const key = (remaining: number, limit = 60) => ({ "x-ratelimit-limit": String(limit), "x-ratelimit-remaining": String(remaining) });
const TOO_MANY = { message: "Too Many Requests", code: "too_many_requests", externalReference: null, details: [] };

describe("Webflow's per-minute headers, read by host", () => {
  it("api.webflow.com and api-cdn.webflow.com are Webflow's, and the headers are the key's budget for its minute", () => {
    for (const url of ["https://api.webflow.com/v2/sites", "https://api-cdn.webflow.com/v2/collections/580e63fc8c9a982ac9b8b745/items/live"]) {
      const verdict = classify({ request: { method: "GET", url }, response: { status: 200, headers: key(22) } }, { nowMs: NOW });
      expect(verdict).toMatchObject({
        provider: "webflow",
        throttled: false,
        budget: { remaining: 22, limit: 60, resetAt: null, source: "x-ratelimit-remaining", windowMs: 60_000 },
      });
    }
  });

  it("a 429 waits its Retry-After (seconds), over the whole key", () => {
    const verdict = classify({ request: { method: "GET", url: "https://api.webflow.com/v2/sites" }, response: { status: 429, headers: { ...key(0, 120), "retry-after": "60" }, body: TOO_MANY } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 60_000, waitSource: "retry-after", budget: { remaining: 0, limit: 120 } });
    expect(verdict.scope).toEqual({});
  });

  it("a 429 with no Retry-After waits the minute", () => {
    const verdict = classify({ request: { method: "DELETE", url: "https://api.webflow.com/v2/collections/c/items/i" }, response: { status: 429, headers: key(0), body: TOO_MANY } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 60_000, waitSource: "doc:fixed-60s" });
  });

  it("a 403 forbidden with budget left is final", () => {
    const verdict = classify({ request: { method: "POST", url: `https://api.webflow.com/v2/sites/${SITE}/webhooks` }, response: { status: 403, headers: key(41), body: { message: "Forbidden", code: "forbidden", externalReference: null, details: [] } } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ provider: "webflow", throttled: false, retryable: false, limitType: "permission" });
  });
});

describe("Publish Site, limited to one successful publish per minute beside the key's limit", () => {
  it.each([
    ["POST", `https://api.webflow.com/v2/sites/${SITE}/publish`, { endpoint: "site-publish" }],
    ["POST", `https://api.webflow.com/beta/sites/${SITE}/publish`, { endpoint: "site-publish" }],
    ["POST", `https://api.webflow.com/sites/${SITE}/publish`, { endpoint: "site-publish" }],
    ["GET", `https://api.webflow.com/v2/sites/${SITE}`, {}],
    ["POST", `https://api.webflow.com/v2/collections/c/items/publish`, {}],
    ["POST", "https://api.webflow.com/v2/sites/publish/custom_code", {}],
  ])("%s %s is scoped %j", (method, url, parts) => {
    expect(requestScopeFor({ request: { method, url } })).toEqual(parts);
  });

  it("a publish 429 with requests left in the key's minute is the publish limit, scoped to publishing", () => {
    const verdict = classify({ request: { method: "POST", url: `https://api.webflow.com/v2/sites/${SITE}/publish` }, response: { status: 429, headers: { ...key(57), "retry-after": "45" }, body: TOO_MANY } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 45_000, scope: { endpoint: "site-publish" } });
  });

  it("a publish 429 with the key's minute spent is the key's limit: no publish scope", () => {
    const verdict = classify({ request: { method: "POST", url: `https://api.webflow.com/v2/sites/${SITE}/publish` }, response: { status: 429, headers: { ...key(0), "retry-after": "45" }, body: TOO_MANY } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 45_000 });
    expect(verdict.scope).toEqual({});
  });
});

describe("Webflow's limits, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 waits its Retry-After once, then the item is created", async () => {
    const server = await servers.start([
      { status: 429, headers: { ...key(0), "retry-after": "60" }, body: TOO_MANY },
      { status: 202, headers: key(59), body: { id: "62b720ef280c7a7a3be8cabe" } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "webflow", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/v2/collections/580e63fc8c9a982ac9b8b745/items", data: { isDraft: false, fieldData: { name: "Hello", slug: "hello" } } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("webflow");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(60_000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(60_000);
  });

  it("a 401 not_authorized is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 401, body: { message: "The request lacks valid authentication credentials.", code: "not_authorized", externalReference: null, details: [] } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "webflow", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v2/sites" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "webflow", limitType: "permission", retryable: false });
  });

  it("a spent publish minute holds back publishes, not the key's other calls", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 429, headers: { ...key(57), "retry-after": "3600" }, body: TOO_MANY },
      { status: 200, headers: key(56), body: { sites: [] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "webflow", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const publish = await client.request({ method: "POST", url: `/v2/sites/${SITE}/publish`, data: { publishToWebflowSubdomain: true } });
    expect(publish.outcome).toBe("deferred");
    const sites = await client.request({ method: "GET", url: "/v2/sites" });
    expect(sites).toMatchObject({ outcome: "success", slotWaitMs: 0 });
    const publishAgain = await client.request({ method: "POST", url: `/v2/sites/${SITE}/publish`, data: { publishToWebflowSubdomain: true } });
    expect(publishAgain.outcome).toBe("deferred");
    expect(publishAgain.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(2);
  });

  it("a publish 429 with the key's minute spent holds back the key's other calls too", async () => {
    const clock = virtualClock();
    const server = await servers.start([{ status: 429, headers: { ...key(0), "retry-after": "3600" }, body: TOO_MANY }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "webflow", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const publish = await client.request({ method: "POST", url: `/v2/sites/${SITE}/publish`, data: { publishToWebflowSubdomain: true } });
    expect(publish.outcome).toBe("deferred");
    const sites = await client.request({ method: "GET", url: "/v2/sites" });
    expect(sites.outcome).toBe("deferred");
    expect(sites.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(1);
  });
});
