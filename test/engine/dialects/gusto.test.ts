import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://docs.gusto.com/embedded-payroll/docs/rate-limits (200 per minute per application-user pair, the headers)
// https://docs.gusto.com/embedded-payroll/changelog/added-rate-limit-headers (X-RateLimit-Reset "2025-07-08 15:35:40 -0700", 429 Retry-After: 30)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const SERVER_DATE = "Mon, 30 Nov 2026 12:00:00 GMT";
const window = (remaining: number, reset: string) => ({ "x-ratelimit-limit": "200", "x-ratelimit-remaining": String(remaining), "x-ratelimit-reset": reset });
const read = (status: number, headers: Record<string, string>, url = "https://api.gusto.com/v1/companies/7756341741123456/employees") =>
  classify({ request: { method: "GET", url }, response: { status, headers, body: "" } }, { nowMs: NOW });

describe("Gusto's X-RateLimit-* headers, read by host", () => {
  it.each([
    ["2026-11-30 04:00:45 -0800", 45_000],
    ["2026-11-30 17:31:00 +0530", 60_000],
    ["2026-11-30 12:00:20 UTC", 20_000],
    ["2026-11-30T12:00:30Z", 30_000],
    ["2026-11-30 11:59:00 +0000", 0],
  ])("X-RateLimit-Reset %s is the instant the window reopens (%i ms on)", (reset, waitMs) => {
    const verdict = read(429, window(0, reset));
    expect(verdict).toMatchObject({ provider: "gusto", throttled: true, limitType: "burst", minWaitMs: waitMs, waitSource: "x-ratelimit-reset" });
    expect(verdict.ignored).toEqual([]);
  });

  it("the production and the demo hosts are Gusto's; a success shows the minute's budget and its reset", () => {
    for (const url of ["https://api.gusto.com/v1/me", "https://api.gusto-demo.com/v1/me"]) {
      expect(read(200, window(198, "2026-11-30 04:00:45 -0800"), url)).toMatchObject({
        provider: "gusto",
        throttled: false,
        budget: { remaining: 198, limit: 200, resetAt: "2026-11-30T12:00:45.000Z", source: "x-ratelimit-remaining", windowMs: 60_000 },
      });
    }
  });

  it("a 429's Retry-After and reset are both floors: the later wins", () => {
    expect(read(429, { "retry-after": "30", ...window(0, "2026-11-30 04:00:45 -0800") })).toMatchObject({ minWaitMs: 45_000, waitSource: "x-ratelimit-reset" });
    expect(read(429, { "retry-after": "50", ...window(0, "2026-11-30 04:00:45 -0800") })).toMatchObject({ minWaitMs: 50_000, waitSource: "retry-after" });
  });

  it("a 429 with no header waits the documented 60-second window", () => {
    expect(read(429, {})).toMatchObject({ provider: "gusto", throttled: true, retryable: true, minWaitMs: 60_000, waitSource: "doc:fixed-60s" });
  });

  it("a reset that is no datetime is listed as unreadable, not guessed", () => {
    const verdict = read(200, window(120, "1796040045"));
    expect(verdict.budget).toMatchObject({ remaining: 120, resetAt: null });
    expect(verdict.ignored).toEqual([expect.objectContaining({ signal: "x-ratelimit-reset" })]);
  });

  it("a 403 showing remaining 0 stays an access error: Gusto throttles with 429 only", () => {
    expect(read(403, window(0, "2026-11-30 04:00:45 -0800"))).toMatchObject({ provider: "gusto", throttled: false, retryable: false, limitType: "permission", minWaitMs: null });
  });
});

describe("Gusto's rate limit, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 waits its Retry-After once, then the payroll is fetched", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "30" }, body: "" },
      { status: 200, headers: { date: SERVER_DATE, ...window(199, "2026-11-30 04:01:00 -0800") }, body: [] },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "gusto", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/v1/companies/7756341741123456/payrolls" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("gusto");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(30_000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(30_000);
  });

  it("a 429 with only X-RateLimit-Reset waits until it, measured against the answer's Date", async () => {
    const server = await servers.start([
      { status: 429, headers: { date: SERVER_DATE, ...window(0, "2026-11-30 04:00:20 -0800") }, body: "" },
      { status: 200, headers: { date: SERVER_DATE, ...window(199, "2026-11-30 04:01:00 -0800") }, body: {} },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "gusto", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v1/me" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-ratelimit-reset" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(20_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(30_000);
  });

  it("a 409 invalid_resource_version is final: one call, no retry", async () => {
    const server = await servers.start([
      { status: 409, headers: window(150, "2026-11-30 04:00:45 -0800"), body: { errors: [{ error_key: "base", category: "invalid_resource_version", message: "The version of this resource is out of date." }] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "gusto", clock: virtualClock() });
    const result = await client.request({ method: "PUT", url: "/v1/employees/9f0d2c4a", data: { version: "stale", first_name: "Frank" } });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "gusto", throttled: false, retryable: false });
  });
});
