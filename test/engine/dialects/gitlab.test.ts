import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://docs.gitlab.com/administration/settings/user_and_ip_rate_limits/ (RateLimit-* headers, Reset an epoch)
// https://docs.gitlab.com/user/gitlab_com/rate_limits/ (application limits not in the headers; 24 h creation windows)
const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const NOW_S = NOW_MS / 1000;
const SERVER_DATE = "Mon, 30 Nov 2026 12:00:00 GMT";
const APP_LIMIT = { message: { error: "This endpoint has been requested too many times. Try again later." } };
const throttle = (observed: number, remaining: number, resetInS: number): Record<string, string> => ({
  date: SERVER_DATE,
  "ratelimit-name": "throttle_authenticated_api",
  "ratelimit-limit": "2000",
  "ratelimit-observed": String(observed),
  "ratelimit-remaining": String(remaining),
  "ratelimit-reset": String(NOW_S + resetInS),
});
const at = (method: string, url: string, status: number, headers: Record<string, string>, body?: unknown, provider?: string) =>
  classify({ provider, request: { method, url }, response: { status, headers, body } }, { nowMs: NOW_MS });

describe("GitLab's hosts", () => {
  it.each(["https://gitlab.com/api/v4/projects", "https://acme.gitlab-dedicated.com/api/v4/projects"])("%s is GitLab's", (url) => {
    expect(at("GET", url, 200, throttle(10, 1990, 40)).provider).toBe("gitlab");
  });

  it("a self-managed host is GitLab's only when the provider is named", () => {
    expect(at("GET", "https://gitlab.example.com/api/v4/projects", 200, throttle(10, 1990, 40)).provider).toBe("generic");
    expect(at("GET", "https://gitlab.example.com/api/v4/projects", 200, throttle(10, 1990, 40), undefined, "gitlab").provider).toBe("gitlab");
  });
});

describe("GitLab's RateLimit-* headers", () => {
  it("RateLimit-Reset is an epoch, read against the answer's Date with no deviation; the limit is Observed + Remaining", () => {
    const verdict = at("GET", "https://gitlab.com/api/v4/projects/1/issues", 200, throttle(1500, 500, 30));
    expect(verdict).toMatchObject({ throttled: false, limitType: "none", deviations: [], budget: { remaining: 500, limit: 2000, resetAt: "2026-11-30T12:00:30.000Z", source: "ratelimit-remaining" } });
  });

  it("a spent throttle's limit is unknown (Observed counts the refused requests too), not RateLimit-Limit's per-minute figure", () => {
    const verdict = at("GET", "https://gitlab.com/api/v4/projects/1/issues", 200, { ...throttle(2004, 0, 30), "ratelimit-limit": "120" });
    expect(verdict.budget).toMatchObject({ remaining: 0, limit: null, resetAt: "2026-11-30T12:00:30.000Z" });
  });

  it("a malformed RateLimit-Reset is listed as ignored, and RateLimit-ResetTime (an HTTP date) gives the reset instead", () => {
    const headers = { ...throttle(2001, 0, 0), "ratelimit-reset": "soon", "ratelimit-resettime": "Mon, 30 Nov 2026 12:00:45 GMT" };
    const verdict = at("GET", "https://gitlab.com/api/v4/users", 429, headers, "Retry later");
    expect(verdict).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 45_000, waitSource: "ratelimit-resettime" });
    expect(verdict.ignored).toContainEqual(expect.objectContaining({ signal: "ratelimit-reset", value: "soon" }));
  });
});

describe("GitLab 429s", () => {
  it("a spent throttle waits the longer of Retry-After and RateLimit-Reset", () => {
    const verdict = at("GET", "https://gitlab.com/api/v4/projects", 429, { ...throttle(2001, 0, 45), "retry-after": "30" }, "Retry later");
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 45_000, waitSource: "ratelimit-reset", scope: { throttle: "throttle_authenticated_api" } });
  });

  it("an application limit with no Retry-After (older GitLab, issue 365728) backs off: no wait is invented", () => {
    const verdict = at("GET", "https://gitlab.com/api/v4/users/10821733", 429, { "content-type": "application/json" }, APP_LIMIT);
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: null, budget: null, scope: { limit: "application" } });
  });

  it("an application limit's 429 beside headers with room does not report their budget as its own", () => {
    const verdict = at("POST", "https://gitlab.com/api/v4/projects/1/issues", 429, { ...throttle(300, 1700, 40), "retry-after": "60" }, APP_LIMIT);
    expect(verdict).toMatchObject({ limitType: "burst", minWaitMs: 60_000, waitSource: "retry-after", budget: null });
  });

  it("a wait longer than an hour (Duo's 8-hour window) is a quota: deferred, not retried in this run", () => {
    const verdict = at("POST", "https://gitlab.com/api/graphql", 429, { "retry-after": "28800" }, APP_LIMIT);
    expect(verdict).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: 28_800_000 });
  });

  it("an hourly throttle (self-managed default period) is still a burst", () => {
    const verdict = at("GET", "https://gitlab.example.com/api/v4/projects", 429, { ...throttle(7201, 0, 3600), "retry-after": "3600" }, "Retry later", "gitlab");
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 3_600_000 });
  });

  it("a project creation refused with a short Retry-After is not the day's creations", () => {
    const verdict = at("POST", "https://gitlab.com/api/v4/projects", 429, { "retry-after": "60" }, APP_LIMIT);
    expect(verdict).toMatchObject({ limitType: "burst", minWaitMs: 60_000, scope: { limit: "application" } });
  });
});

describe("GitLab answers that are no throttle", () => {
  it("401 beside a spent count is final", () => {
    expect(at("GET", "https://gitlab.com/api/v4/user", 401, throttle(2000, 0, 20), { message: "401 Unauthorized" })).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
  });

  it("a 520 from the CDN is retried as a transient failure (python-gitlab's list)", () => {
    expect(at("GET", "https://gitlab.com/api/v4/projects", 520, {}, "")).toMatchObject({ throttled: false, retryable: true, limitType: "server" });
  });

  it("a 409 Conflict is final", () => {
    expect(at("POST", "https://gitlab.com/api/v4/projects", 409, {}, { message: { name: ["has already been taken"] } })).toMatchObject({ throttled: false, retryable: false, limitType: "none" });
  });
});

describe("GitLab through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a spent throttle's 429 waits its Retry-After, then the call goes through", async () => {
    const server = await servers.start([
      { status: 429, headers: { ...throttle(2001, 0, 30), "retry-after": "30", "ratelimit-resettime": "Mon, 30 Nov 2026 12:00:30 GMT" }, body: "Retry later" },
      { status: 200, headers: throttle(1, 1999, 60), body: [] },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "gitlab", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/api/v4/projects/278964/issues" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("gitlab");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(30_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(40_000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(30_000);
  });

  it("a project creation refused for the day is deferred after one call, not retried", async () => {
    const server = await servers.start([{ status: 429, headers: { "retry-after": "86400" }, body: APP_LIMIT }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "gitlab", clock: virtualClock(), onLongWait: "defer" });
    const result = await client.request({ method: "POST", url: "/api/v4/projects", data: { name: "flight" } });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "gitlab", limitType: "quota", retryable: false });
    expect(result.waitMs).toBeGreaterThanOrEqual(86_400_000);
  });

  it("a 403 beside a spent count is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: throttle(2000, 0, 20), body: { message: "403 Forbidden" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "gitlab", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/api/v4/projects/278964" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "gitlab", limitType: "permission", retryable: false });
  });
});
