import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developer.clickup.com/docs/rate-limits (per token per minute; X-RateLimit-Reset a Unix timestamp)
// https://developer.clickup.com/docs/common_errors (429 "Rate limit reached"; OAUTH_* codes)
const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const NOW_S = NOW_MS / 1000;
const SERVER_DATE = "Mon, 30 Nov 2026 12:00:00 GMT";
const APP_002 = { err: "Rate limit reached", ECODE: "APP_002" };
const minute = (limit: number, remaining: number, resetInS: number) => ({
  date: SERVER_DATE,
  "x-ratelimit-limit": String(limit),
  "x-ratelimit-remaining": String(remaining),
  "x-ratelimit-reset": String(NOW_S + resetInS),
});
const at = (status: number, headers: Record<string, string>, body: unknown, method = "GET", url = "https://api.clickup.com/api/v2/team") =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW_MS });

describe("ClickUp's X-RateLimit-* headers, read by host", () => {
  it("api.clickup.com is ClickUp's, and a success shows the token's minute with its epoch reset", () => {
    const verdict = at(200, minute(100, 97, 42), { teams: [] });
    expect(verdict).toMatchObject({
      provider: "clickup",
      throttled: false,
      limitType: "none",
      budget: { remaining: 97, limit: 100, resetAt: "2026-11-30T12:00:42.000Z", source: "x-ratelimit-remaining", windowMs: 60_000 },
    });
  });

  it("a 429 APP_002 waits until X-RateLimit-Reset, read as epoch seconds on the answer's Date", () => {
    const verdict = at(429, minute(100, 0, 37), APP_002, "POST", "https://api.clickup.com/api/v2/list/901234567/task");
    expect(verdict).toMatchObject({ provider: "clickup", throttled: true, retryable: true, limitType: "burst", minWaitMs: 37_000, waitSource: "x-ratelimit-reset", scope: {} });
    expect(verdict.reason).toContain("APP_002");
  });

  it("a Retry-After longer than the reset is the wait (a server's wait is a floor)", () => {
    const verdict = at(429, { ...minute(1000, 0, 5), "retry-after": "12" }, APP_002);
    expect(verdict).toMatchObject({ limitType: "burst", minWaitMs: 12_000, waitSource: "retry-after" });
  });

  it("a 429 with no header at all waits the documented minute", () => {
    expect(at(429, {}, APP_002)).toMatchObject({ throttled: true, minWaitMs: 60_000, waitSource: "doc:fixed-60s" });
  });

  it("APP_002 in the body is the rate limit even under another status", () => {
    expect(at(400, minute(100, 0, 20), APP_002)).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 20_000 });
  });

  it("a 401 OAUTH_019 (token revoked) stays an access error even with the minute's count at 0", () => {
    const verdict = at(401, minute(100, 0, 30), { err: "Token not found", ECODE: "OAUTH_019" });
    expect(verdict).toMatchObject({ provider: "clickup", throttled: false, retryable: false, limitType: "permission", minWaitMs: null });
  });

  it("app.clickup.com (the web app) is not the API and is left to the generic rules", () => {
    expect(at(200, minute(100, 99, 60), "", "GET", "https://app.clickup.com/9012345/home").provider).toBe("generic");
  });
});

describe("a ClickUp 429, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("waits until X-RateLimit-Reset once, then the task is created", async () => {
    const server = await servers.start([
      { status: 429, headers: minute(100, 0, 30), body: APP_002 },
      { status: 200, headers: minute(100, 99, 60), body: { id: "86a1b2c3d", name: "Ship it" } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "clickup", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/api/v2/list/901234567/task", data: { name: "Ship it" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("clickup");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-ratelimit-reset" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(30_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(40_000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(30_000);
  });

  it("a success showing the minute spent holds the next call until the reset, before any 429", async () => {
    const server = await servers.start([
      { status: 200, headers: minute(100, 0, 20), body: { teams: [] } },
      { status: 200, headers: minute(100, 99, 60), body: { teams: [] } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "clickup", clock });
    expect((await client.request({ method: "GET", url: "/api/v2/team" })).outcome).toBe("success");
    const before = clock.nowMs();
    expect((await client.request({ method: "GET", url: "/api/v2/team" })).outcome).toBe("success");
    expect(clock.nowMs() - before).toBeGreaterThanOrEqual(19_000);
    expect(server.calls).toHaveLength(2);
  });

  it("a 401 OAUTH_027 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 401, headers: minute(100, 98, 60), body: { err: "Team not authorized", ECODE: "OAUTH_027" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "clickup", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/api/v2/team/9012345/space" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "clickup", limitType: "permission", retryable: false });
  });
});
