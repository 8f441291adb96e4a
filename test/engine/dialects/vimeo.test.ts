import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://help.vimeo.com/hc/en-us/articles/12427783954065-Rate-limits (per minute, 429, "up to a minute")
// https://github.com/vimeo/vimeo.py/issues/86 (X-RateLimit-Reset: ISO 8601 date-time in UTC; the ban lifts then)
// https://github.com/vimeo/openapi/blob/master/api.yaml (error codes 9006, 4101, 4102, 3417, 8003)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const SERVER_DATE = "Mon, 30 Nov 2026 12:00:00 GMT";
const budget = (remaining: number, reset: string, limit = 250) => ({
  date: SERVER_DATE,
  "x-ratelimit-limit": String(limit),
  "x-ratelimit-remaining": String(remaining),
  "x-ratelimit-reset": reset,
});
const vimeoError = (code: number, message: string) => ({ error: message, link: null, developer_message: message, error_code: code });
const at = (url: string, status: number, headers: Record<string, string>, body: unknown = {}, method = "GET") =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW });

describe("Vimeo's X-RateLimit-* headers, read by host", () => {
  it("api.vimeo.com is Vimeo's, and its reset is an ISO 8601 date-time measured on the answer's Date", () => {
    const verdict = at("https://api.vimeo.com/me/videos", 200, budget(120, "2026-11-30T12:00:40+00:00"), { data: [] });
    expect(verdict).toMatchObject({ provider: "vimeo", throttled: false, limitType: "none" });
    expect(verdict.budget).toMatchObject({ remaining: 120, limit: 250, resetAt: "2026-11-30T12:00:40.000Z", source: "x-ratelimit-remaining" });
  });

  it("a server clock a minute behind the local one: the reset is still 40 s after the answer's own Date", () => {
    const headers = { ...budget(0, "2026-11-30T11:59:40Z"), date: "Mon, 30 Nov 2026 11:59:00 GMT" };
    const verdict = at("https://api.vimeo.com/videos/76979871", 429, headers, { error: "Too many API requests" });
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 40_000, waitSource: "x-ratelimit-reset" });
  });

  it("a reset sent as a UNIX time (the v2 API's form) is read as epoch seconds, and said so", () => {
    const verdict = at("https://api.vimeo.com/me", 429, budget(0, String(NOW / 1000 + 30)));
    expect(verdict).toMatchObject({ limitType: "burst", minWaitMs: 30_000, waitSource: "x-ratelimit-reset" });
    expect(verdict.deviations.join(" ")).toMatch(/epoch seconds/);
  });

  it("an unreadable reset is listed as ignored, and the 429 waits the documented minute", () => {
    const verdict = at("https://api.vimeo.com/me", 429, budget(0, "soon"));
    expect(verdict).toMatchObject({ limitType: "burst", minWaitMs: 60_000, waitSource: "doc:fixed-60s" });
    expect(verdict.ignored).toEqual([expect.objectContaining({ signal: "x-ratelimit-reset" })]);
  });

  it("a Retry-After longer than the reset is the wait (a server wait is a floor)", () => {
    const verdict = at("https://api.vimeo.com/me", 429, { ...budget(0, "2026-11-30T12:00:10Z"), "retry-after": "120" });
    expect(verdict).toMatchObject({ minWaitMs: 120_000, waitSource: "retry-after" });
  });

  it("429 error_code 9006 is the limit on following users: the documented minute, not the request budget's reset", () => {
    const verdict = at("https://api.vimeo.com/me/following/152184", 429, budget(200, "2026-11-30T12:00:50Z"), vimeoError(9006, "The authenticated user is rate-limited from following other users."), "PUT");
    expect(verdict).toMatchObject({ limitType: "burst", retryable: true, minWaitMs: 60_000, waitSource: "doc:fixed-60s", scope: { limit: "following" } });
  });

  it.each([
    [4102, "upload-quota"],
    [4101, "disk-space"],
  ])("403 error_code %i on an upload is a quota, never retried in this run", (code, limit) => {
    const verdict = at("https://api.vimeo.com/me/videos", 403, budget(240, "2026-11-30T12:01:00Z"), vimeoError(code, "The authenticated user's allotted quota has been reached."), "POST");
    expect(verdict).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: null, scope: { limit } });
  });

  it("a 403 beside a spent budget stays an access error: Vimeo's throttle is the 429", () => {
    const verdict = at("https://api.vimeo.com/me/following/7", 403, budget(0, "2026-11-30T12:00:30Z"), vimeoError(3417, "The authenticated user can't follow other users."), "PUT");
    expect(verdict).toMatchObject({ throttled: false, retryable: false, limitType: "permission", minWaitMs: null });
  });

  it("only the API host is claimed: the player is not Vimeo's API", () => {
    expect(at("https://player.vimeo.com/video/76979871/config", 429, {}).provider).toBe("generic");
  });
});

describe("a Vimeo 429, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("waits until X-RateLimit-Reset (30 s after the answer's Date), then the video is read", async () => {
    const server = await servers.start([
      { status: 429, headers: budget(0, "2026-11-30T12:00:30+00:00"), body: { error: "Too many API requests" } },
      { status: 200, headers: budget(249, "2026-11-30T12:01:30+00:00"), body: { uri: "/videos/76979871" } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "vimeo", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/videos/76979871" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("vimeo");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-ratelimit-reset" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(30_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(40_000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(30_000);
  });

  it("a 403 error_code 3417 with budget left is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: budget(200, "2026-11-30T12:01:00Z"), body: vimeoError(3417, "The authenticated user can't follow other users.") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "vimeo", clock: virtualClock() });
    const result = await client.request({ method: "PUT", url: "/me/following/152184" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "vimeo", limitType: "permission", retryable: false });
  });

  it("a spent upload quota (403 error_code 4102) is not retried: one call, given up (a quota with no reset to defer to)", async () => {
    const server = await servers.start([{ status: 403, headers: budget(240, "2026-11-30T12:01:00Z"), body: vimeoError(4102, "The authenticated user's allotted quota has been reached.") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "vimeo", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/me/videos", data: { upload: { approach: "tus", size: "13623861" } } });
    expect(result.outcome).toBe("gave_up");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "vimeo", limitType: "quota", retryable: false });
  });
});
