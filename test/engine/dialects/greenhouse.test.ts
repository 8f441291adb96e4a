import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developers.greenhouse.io/harvest.html#rate-limiting (per 10 s; 429 with X-RateLimit-Reset and Retry-After)
// https://harvestdocs.greenhouse.io/docs/api-rate-limiting (v3: fixed 30 s windows)
// https://developers.greenhouse.io/audit-log.html#rate-limiting ; https://developers.greenhouse.io/gho.html#rate-limiting
const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const NOW_S = NOW_MS / 1000;
const SERVER_DATE = "Mon, 30 Nov 2026 12:00:00 GMT";
const counts = (limit: number, remaining: number, resetInS?: number): Record<string, string> => ({
  date: SERVER_DATE,
  "x-ratelimit-limit": String(limit),
  "x-ratelimit-remaining": String(remaining),
  ...(resetInS === undefined ? {} : { "x-ratelimit-reset": String(NOW_S + resetInS) }),
});
const rateLimited = (resetAt: string) => ({ errors: [{ message: "Rate limit reached.", limit: 100, remaining: 0, resetAt }] });
const at = (url: string, status: number, headers: Record<string, string>, body: unknown = "", method = "GET") =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW_MS });

describe("Greenhouse's hosts and windows, read by host", () => {
  it.each([
    "https://harvest.greenhouse.io/v1/candidates",
    "https://harvest.greenhouse.io/v3/candidates",
    "https://auditlog.us.greenhouse.io/events",
    "https://onboarding-api.greenhouse.io/graphql",
    "https://boards-api.greenhouse.io/v1/boards/acme/jobs",
    "https://api.greenhouse.io/v1/partner/candidates",
  ])("%s is Greenhouse's", (url) => {
    expect(at(url, 429, {}).provider).toBe("greenhouse");
  });

  it("Harvest v1 counts per 10 s and shows no reset on a success", () => {
    expect(at("https://harvest.greenhouse.io/v1/jobs", 200, counts(50, 49), [])).toMatchObject({
      throttled: false,
      budget: { remaining: 49, limit: 50, resetAt: null, source: "x-ratelimit-remaining", windowMs: 10_000 },
    });
  });

  it("Harvest v3 counts in fixed 30 s windows with the reset as an epoch timestamp", () => {
    expect(at("https://harvest.greenhouse.io/v3/jobs", 200, counts(75, 10, 18), [])).toMatchObject({
      budget: { remaining: 10, limit: 75, resetAt: "2026-11-30T12:00:18.000Z", windowMs: 30_000 },
    });
  });

  it("a 429's Retry-After (seconds) and X-RateLimit-Reset (the timestamp): the longer is the wait", () => {
    const verdict = at("https://harvest.greenhouse.io/v1/applications", 429, { date: SERVER_DATE, "retry-after": "4", "x-ratelimit-reset": String(NOW_S + 9) });
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 9000, waitSource: "x-ratelimit-reset", scope: {} });
  });

  it("a 429 with no wait at all waits the window: 10 s on v1, 30 s on v3, 30 s on the audit log (its paginated window)", () => {
    expect(at("https://harvest.greenhouse.io/v1/users", 429, {})).toMatchObject({ minWaitMs: 10_000, waitSource: "doc:fixed-10s" });
    expect(at("https://harvest.greenhouse.io/v3/users", 429, {})).toMatchObject({ minWaitMs: 30_000, waitSource: "doc:fixed-30s" });
    expect(at("https://auditlog.us.greenhouse.io/events", 429, {})).toMatchObject({ minWaitMs: 30_000, waitSource: "doc:fixed-30s" });
  });

  it("an ISO reset (v3's unit is not written down) is read, and the deviation listed", () => {
    const verdict = at("https://harvest.greenhouse.io/v3/offers", 429, { date: SERVER_DATE, "x-ratelimit-reset": "2026-11-30T12:00:21Z" });
    expect(verdict).toMatchObject({ minWaitMs: 21_000, waitSource: "x-ratelimit-reset" });
    expect(verdict.deviations.join(" ")).toContain("ISO 8601");
  });

  it("Onboarding's 'Rate limit reached.' inside a GraphQL 200 is a throttle until resetAt", () => {
    const verdict = at("https://onboarding-api.greenhouse.io/graphql", 200, { date: SERVER_DATE }, rateLimited("2026-11-30T12:45:00Z"), "POST");
    expect(verdict).toMatchObject({
      throttled: true,
      retryable: true,
      limitType: "burst",
      minWaitMs: 45 * 60_000,
      waitSource: "body:errors[].resetAt",
      budget: { remaining: 0, limit: 100, resetAt: "2026-11-30T12:45:00.000Z" },
    });
  });

  it("Onboarding's errorCode RateLimit is read without the message, and other GraphQL errors are not throttles", () => {
    const coded = at("https://onboarding-api.greenhouse.io/graphql", 200, {}, { errors: [{ message: "Too many", errorCode: "RateLimit" }] }, "POST");
    expect(coded).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: null });
    const notFound = at("https://onboarding-api.greenhouse.io/graphql", 200, {}, { data: { employee: null }, errors: [{ message: "Unable to find Employee with id 1", errorCode: "NotFound" }] }, "POST");
    expect(notFound).toMatchObject({ throttled: false, limitType: "none" });
  });

  it("a 403 with the window's count at 0 stays an access error; a 422 stays a validation error", () => {
    expect(at("https://harvest.greenhouse.io/v3/offers/1", 403, counts(75, 0, 10))).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    expect(at("https://harvest.greenhouse.io/v1/candidates", 422, counts(50, 40), { message: "Validation error", errors: [] }, "POST")).toMatchObject({ throttled: false, limitType: "validation" });
  });
});

describe("Greenhouse throttles, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a Harvest 429 waits its Retry-After once, then the note is added", async () => {
    const server = await servers.start([
      { status: 429, headers: { date: SERVER_DATE, "retry-after": "10", "x-ratelimit-reset": String(NOW_S + 10) } },
      { status: 201, headers: counts(50, 49), body: { id: 226809052 } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "greenhouse", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/v1/candidates/4356789/activity_feed/notes", data: { body: "Called back", visibility: "public" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("greenhouse");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(10_000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(10_000);
  });

  it("an Onboarding GraphQL 200 that says 'Rate limit reached.' is sent again after resetAt", async () => {
    const server = await servers.start([
      { status: 200, headers: { date: SERVER_DATE }, body: rateLimited("2026-11-30T12:00:40Z") },
      { status: 200, headers: { date: SERVER_DATE }, body: { data: { employee: { email: "pat@example.com" } } } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "greenhouse", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/graphql", data: { query: "{ employee(id: 25) { email } }" } });
    expect(result.outcome).toBe("success");
    expect(result.data).toMatchObject({ data: { employee: { email: "pat@example.com" } } });
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 200, waitSource: "body:errors[].resetAt" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(40_000);
  });

  it("a Harvest 403 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: counts(50, 48), body: { message: "Forbidden" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "greenhouse", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v1/offers/123456" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "greenhouse", limitType: "permission", retryable: false });
  });
});
