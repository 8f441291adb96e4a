import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/rate-limits (per endpoint, X-RateLimit-*)
// https://github.com/sendgrid/sendgrid-go/blob/main/base_interface.go (X-RateLimit-Reset read as a UNIX time in seconds)
// https://support.sendgrid.com/hc/en-us/articles/35466138799899-Understanding-the-Maximum-Credits-Exceeded-error
const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const NOW_S = NOW_MS / 1000;
const SERVER_DATE = "Mon, 30 Nov 2026 12:00:00 GMT";
const TOO_MANY = { errors: [{ field: null, message: "too many requests" }] };
const CREDITS = { errors: [{ message: "Maximum credits exceeded", field: null, help: null }] };
const bucket = (limit: number, remaining: number, resetInS: number) => ({
  date: SERVER_DATE,
  "x-ratelimit-limit": String(limit),
  "x-ratelimit-remaining": String(remaining),
  "x-ratelimit-reset": String(NOW_S + resetInS),
});
const classifyAt = (method: string, url: string, status: number, body: unknown, headers: Record<string, string> = {}) =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW_MS });

describe("a SendGrid request's scope: its endpoint, known before it is sent", () => {
  it.each([
    ["https://api.sendgrid.com/v3/mail/send", "/v3/mail/send"],
    ["https://api.eu.sendgrid.com/v3/mail/send", "/v3/mail/send"],
    ["https://api.sendgrid.com/v3/templates?generations=dynamic", "/v3/templates"],
    ["https://api.sendgrid.com/v3/templates/d-8f2a9c4b1e7d4f0a9b3c2d1e0f9a8b7c", "/v3/templates/{id}"],
    ["https://api.sendgrid.com/v3/asm/groups/123/suppressions", "/v3/asm/groups/{id}/suppressions"],
    ["https://api.sendgrid.com/v3/suppression/bounces/ann@example.com", "/v3/suppression/bounces/{id}"],
    ["https://api.sendgrid.com/v3/marketing/segments/2.0", "/v3/marketing/segments/2.0"],
    ["https://api.sendgrid.com/v3/marketing/contacts/search", "/v3/marketing/contacts/search"],
  ])("%s counts against %s", (url, endpoint) => {
    expect(requestScopeFor({ request: { method: "GET", url } })).toEqual({ endpoint });
  });
});

describe("SendGrid's X-RateLimit-* headers and credits, read by host", () => {
  it("a success shows the endpoint's budget, reset at the epoch second it names", () => {
    const verdict = classifyAt("GET", "https://api.sendgrid.com/v3/stats", 200, [], bucket(600, 598, 30));
    expect(verdict).toMatchObject({ provider: "sendgrid", throttled: false, scope: { endpoint: "/v3/stats" }, budget: { remaining: 598, limit: 600, resetAt: "2026-11-30T12:00:30.000Z" } });
  });

  it("a 429 waits until X-RateLimit-Reset (epoch seconds against the answer's Date), in its endpoint's scope", () => {
    const verdict = classifyAt("GET", "https://api.eu.sendgrid.com/v3/templates", 429, TOO_MANY, bucket(150, 0, 42));
    expect(verdict).toMatchObject({ provider: "sendgrid", throttled: true, retryable: true, limitType: "burst", minWaitMs: 42_000, waitSource: "x-ratelimit-reset", scope: { endpoint: "/v3/templates" } });
  });

  it("a longer Retry-After wins over the reset", () => {
    const verdict = classifyAt("GET", "https://api.sendgrid.com/v3/templates", 429, TOO_MANY, { ...bucket(150, 0, 5), "retry-after": "20" });
    expect(verdict).toMatchObject({ minWaitMs: 20_000, waitSource: "retry-after" });
  });

  it("a 429 with no header at all backs off", () => {
    expect(classifyAt("POST", "https://api.sendgrid.com/v3/mail/send", 429, TOO_MANY)).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: null });
  });

  it("'Maximum credits exceeded' is a quota until midnight UTC on the server's clock, for the sending endpoint only", () => {
    const verdict = classifyAt("POST", "https://api.sendgrid.com/v3/mail/send", 401, CREDITS, { date: "Mon, 30 Nov 2026 18:00:00 GMT" });
    expect(verdict).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: 6 * 3_600_000, waitSource: "doc:daily-reset-midnight-utc", scope: { endpoint: "/v3/mail/send" } });
  });

  it("other 401s and 403s with budget left are final", () => {
    const badKey = { errors: [{ field: null, message: "The provided authorization grant is invalid, expired, or revoked" }] };
    expect(classifyAt("POST", "https://api.sendgrid.com/v3/mail/send", 401, badKey)).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    const forbidden = { errors: [{ field: null, message: "access forbidden" }] };
    expect(classifyAt("GET", "https://api.sendgrid.com/v3/user/credits", 403, forbidden, bucket(600, 500, 30))).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
  });
});

describe("SendGrid's limits, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 waits until X-RateLimit-Reset, then the template is read", async () => {
    const server = await servers.start([
      { status: 429, headers: bucket(150, 0, 25), body: TOO_MANY },
      { status: 200, headers: bucket(150, 149, 60), body: { id: "d-1", name: "Welcome" } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "sendgrid", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v3/templates/d-1" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("sendgrid");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-ratelimit-reset" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(25_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(35_000);
  });

  it("a spent templates endpoint holds back the next templates call, not a stats call (an endpoint of its own)", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 200, headers: bucket(150, 0, 20), body: { result: [] } },
      { status: 200, headers: bucket(600, 599, 60), body: [] },
      { status: 200, headers: bucket(150, 149, 80), body: { result: [] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "sendgrid", clock, store: createMemoryStore({ clock }) });
    expect((await client.request({ method: "GET", url: "/v3/templates" })).outcome).toBe("success");
    const beforeStats = clock.nowMs();
    expect((await client.request({ method: "GET", url: "/v3/stats" })).outcome).toBe("success");
    expect(clock.nowMs() - beforeStats).toBeLessThan(1000);
    const beforeTemplates = clock.nowMs();
    expect((await client.request({ method: "GET", url: "/v3/templates" })).outcome).toBe("success");
    expect(clock.nowMs() - beforeTemplates).toBeGreaterThanOrEqual(19_000);
    expect(server.calls.map((c) => c.url)).toEqual(["/v3/templates", "/v3/stats", "/v3/templates"]);
  });

  it("'Maximum credits exceeded' is deferred to midnight UTC after one call, not retried", async () => {
    const server = await servers.start([{ status: 401, headers: { date: "Tue, 01 Dec 2026 21:00:00 GMT" }, body: CREDITS }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "sendgrid", clock: virtualClock(), onLongWait: "defer" });
    const result = await client.request({ method: "POST", url: "/v3/mail/send", data: { personalizations: [{ to: [{ email: "ann@example.com" }] }] } });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    // The server's clock reads 21:00 UTC: midnight UTC is 3 h away, from the local clock's 2026-01-01T00:00Z.
    expect(result.notBefore).toBe("2026-01-01T03:00:00.000Z");
  });

  it("a 401 with a revoked key is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 401, body: { errors: [{ field: null, message: "The provided authorization grant is invalid, expired, or revoked" }] } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "sendgrid", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/v3/mail/send", data: {} });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "sendgrid", limitType: "permission", retryable: false });
  });
});
