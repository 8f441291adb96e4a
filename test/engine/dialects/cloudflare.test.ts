import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developers.cloudflare.com/fundamentals/api/reference/limits/ (1,200 per 5 min per user, Ratelimit fields, retry-after)
// https://developers.cloudflare.com/analytics/graphql-api/errors/ (GraphQL rate-limit messages and their statuses)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const API = "https://api.cloudflare.com/client/v4";
const window = (remaining: number, resetInS: number) => ({ ratelimit: `"default";r=${remaining};t=${resetInS}`, "ratelimit-policy": '"default";q=1200;w=300' });
const envelope = (code: number, message: string) => ({ success: false, errors: [{ code, message }], messages: [], result: null });
const THROTTLED = envelope(971, "Please wait and consider throttling your request speed");
const graphqlError = (message: string) => ({ data: null, errors: [{ message, path: ["viewer"], extensions: { timestamp: "2026-11-30T12:00:00Z" } }] });
const at = (url: string, status: number, headers: Record<string, string>, body: unknown = {}, method = "GET") =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW });

describe("a Cloudflare request's scope", () => {
  it("tells the GraphQL Analytics API, limited on its own, from the REST API", () => {
    expect(requestScopeFor({ request: { method: "POST", url: `${API}/graphql` } })).toEqual({ endpoint: "graphql" });
    expect(requestScopeFor({ request: { method: "POST", url: `${API}/graphql/` } })).toEqual({ endpoint: "graphql" });
    expect(requestScopeFor({ request: { method: "GET", url: `${API}/zones` } })).toEqual({ endpoint: "rest" });
    expect(requestScopeFor({ request: { method: "GET", url: `${API}/accounts/abc/graphql-schemas` } })).toEqual({ endpoint: "rest" });
  });
});

describe("Cloudflare's rate-limit signals, read by host", () => {
  it("api.cloudflare.com is Cloudflare's; Ratelimit and Ratelimit-Policy are the user's budget and its 300 s window", () => {
    const verdict = at(`${API}/zones`, 200, window(900, 120), { success: true, errors: [], messages: [], result: [] });
    expect(verdict).toMatchObject({ provider: "cloudflare", throttled: false, limitType: "none" });
    expect(verdict.budget).toMatchObject({ remaining: 900, limit: 1200, windowMs: 300_000, resetAt: "2026-11-30T12:02:00.000Z", source: "ratelimit" });
  });

  it("a 429 with a spent window and no retry-after waits the window's t=", () => {
    const verdict = at(`${API}/zones`, 429, window(0, 20), THROTTLED);
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 20_000, waitSource: "ratelimit", scope: { limit: "user" } });
  });

  it("a 429 with room in the user's window (another limit, such as 200 per second per IP) waits retry-after, not the window's reset", () => {
    const verdict = at(`${API}/zones`, 429, { ...window(800, 200), "retry-after": "1" }, THROTTLED);
    expect(verdict).toMatchObject({ limitType: "burst", minWaitMs: 1000, waitSource: "retry-after" });
  });

  it("errors[].code 971 names the throttle whatever the status", () => {
    const verdict = at(`${API}/zones`, 400, {}, THROTTLED);
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 300_000, waitSource: "doc:fixed-300s" });
  });

  it("errors[].code 10000 is an access error, final: on a 401 and on a 400", () => {
    for (const status of [401, 400]) {
      const verdict = at(`${API}/user/tokens/verify`, status, {}, envelope(10000, "Authentication error"));
      expect(verdict).toMatchObject({ throttled: false, retryable: false, limitType: "permission", minWaitMs: null });
    }
  });

  it("the early x-ratelimit-reset is an RFC 1123 date; a bare number there is listed as unreadable", () => {
    const dated = at(`${API}/zones`, 429, { date: "Mon, 30 Nov 2026 12:00:00 GMT", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "Mon, 30 Nov 2026 12:00:25 GMT" }, THROTTLED);
    expect(dated).toMatchObject({ minWaitMs: 25_000, waitSource: "x-ratelimit-reset" });
    const numeric = at(`${API}/zones`, 429, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1796040025" }, THROTTLED);
    expect(numeric).toMatchObject({ minWaitMs: 300_000, waitSource: "doc:fixed-300s" });
    expect(numeric.ignored).toEqual([expect.objectContaining({ signal: "x-ratelimit-reset" })]);
  });

  it("GraphQL: a spent query budget is the GraphQL scope's; spent resources are a cost; a REST envelope's 971 is the user's limit", () => {
    const budget = at(`${API}/graphql`, 429, {}, graphqlError("rate limiter budget depleted, try again after 5 minutes"), "POST");
    expect(budget).toMatchObject({ limitType: "burst", minWaitMs: 300_000, scope: { endpoint: "graphql" } });
    const cost = at(`${API}/graphql`, 429, {}, graphqlError("query consumed excessive resources, please try running smaller queries which consume fewer resources"), "POST");
    expect(cost).toMatchObject({ throttled: true, retryable: true, limitType: "cost", minWaitMs: null, scope: { endpoint: "graphql" } });
    const user = at(`${API}/graphql`, 429, { "retry-after": "30" }, THROTTLED, "POST");
    expect(user).toMatchObject({ limitType: "burst", minWaitMs: 30_000, scope: { limit: "user" } });
  });

  it("GraphQL: a query over the per-query limits is final even as a 429; a 403 on a zone is an access error", () => {
    const tooLarge = at(`${API}/graphql`, 429, { "retry-after": "60" }, graphqlError("in combination, your request queries too many nodes, zones and accounts"), "POST");
    expect(tooLarge).toMatchObject({ throttled: false, retryable: false, limitType: "validation", minWaitMs: null });
    const denied = at(`${API}/graphql`, 403, {}, graphqlError("zones [023e105f4ecef8ad9ca31a8372d0c353] are not authorized"), "POST");
    expect(denied).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
  });
});

describe("Cloudflare's limits, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 waits its retry-after (7 s, the window's t= too), then the DNS record is created", async () => {
    const server = await servers.start([
      { status: 429, headers: { ...window(0, 7), "retry-after": "7" }, body: THROTTLED },
      { status: 200, headers: window(1199, 300), body: { success: true, errors: [], messages: [], result: { id: "372e67954025e0ba6aaa6d586b9e0b59" } } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "cloudflare", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/client/v4/zones/023e105f4ecef8ad9ca31a8372d0c353/dns_records", data: { type: "A", name: "www", content: "192.0.2.1" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("cloudflare");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(7000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(7000);
  });

  it("a 403 code 10000 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: window(1100, 200), body: envelope(10000, "Forbidden") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "cloudflare", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/client/v4/zones/023e105f4ecef8ad9ca31a8372d0c353" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "cloudflare", limitType: "permission", retryable: false });
  });

  it("a spent GraphQL budget holds back GraphQL queries for its 5 minutes, not the REST calls", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 429, body: graphqlError("rate limiter budget depleted, try again after 5 minutes") },
      { status: 200, headers: window(1100, 200), body: { success: true, errors: [], messages: [], result: [] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "cloudflare", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const query = { query: "{ viewer { zones(filter: {zoneTag: $zoneTag}) { httpRequests1dGroups(limit: 1) { sum { requests } } } } }" };
    const first = await client.request({ method: "POST", url: "/client/v4/graphql", data: query });
    expect(first.outcome).toBe("deferred");
    const zones = await client.request({ method: "GET", url: "/client/v4/zones" });
    expect(zones).toMatchObject({ outcome: "success", slotWaitMs: 0 });
    const again = await client.request({ method: "POST", url: "/client/v4/graphql", data: query });
    expect(again.outcome).toBe("deferred");
    expect(again.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(2);
  });

  it("a REST 429 with no header blocks every call for the documented five minutes, GraphQL too", async () => {
    const clock = virtualClock();
    const server = await servers.start([{ status: 429, body: THROTTLED }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "cloudflare", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const start = clock.nowMs();
    const zones = await client.request({ method: "GET", url: "/client/v4/zones" });
    expect(zones.outcome).toBe("deferred");
    expect(Date.parse(zones.notBefore!) - start).toBeGreaterThanOrEqual(300_000);
    const graphql = await client.request({ method: "POST", url: "/client/v4/graphql", data: { query: "{ viewer { budget } }" } });
    expect(graphql.outcome).toBe("deferred");
    expect(graphql.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(1);
  });
});
