import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://www.contentful.com/developers/docs/references/content-management-api/#/introduction/api-rate-limits
// https://www.contentful.com/developers/docs/references/errors/
const NOW = Date.parse("2026-11-30T12:00:00Z");
const RATE_LIMITED = {
  sys: { type: "Error", id: "RateLimitExceeded" },
  message: "You have exceeded the rate limit of the Organization this Space belongs to by making too many API requests within a short timespan. Please wait a moment before trying the request again.",
};
const second = (remaining: number, reset = 0, limit = 7) => ({
  "x-contentful-ratelimit-reset": String(reset),
  "x-contentful-ratelimit-second-limit": String(limit),
  "x-contentful-ratelimit-second-remaining": String(remaining),
});
const read = (url: string, status: number, headers: Record<string, string>, body: unknown = {}) =>
  classify({ request: { method: "GET", url }, response: { status, headers, body } }, { nowMs: NOW });

describe("Contentful's rate-limit headers, read by host", () => {
  it.each([
    "https://cdn.contentful.com/spaces/cfexampleapi/entries",
    "https://api.contentful.com/spaces/yadj1kx9rmg0/environments/master/entries",
    "https://preview.contentful.com/spaces/cfexampleapi/entries",
    "https://graphql.contentful.com/content/v1/spaces/cfexampleapi/environments/master",
    "https://upload.contentful.com/spaces/yadj1kx9rmg0/uploads",
    "https://cdn.eu.contentful.com/spaces/cfexampleapi/entries",
    "https://api.eu.contentful.com/spaces/yadj1kx9rmg0/entries",
  ])("%s is Contentful's", (url) => {
    expect(read(url, 429, second(0, 1), RATE_LIMITED)).toMatchObject({ provider: "contentful", throttled: true, limitType: "burst" });
  });

  it("the website and the image CDN are not", () => {
    expect(read("https://www.contentful.com/developers/", 200, second(5)).provider).toBe("generic");
    expect(read("https://images.ctfassets.net/cfexampleapi/1/abc/cat.png", 200, second(5)).provider).toBe("generic");
  });

  it("a success's reset of 0 is no wait, and its per-second count is the budget", () => {
    const verdict = read("https://api.contentful.com/spaces/yadj1kx9rmg0/entries", 200, second(4));
    expect(verdict).toMatchObject({ throttled: false, limitType: "none", minWaitMs: null });
    expect(verdict.budget).toEqual({ remaining: 4, limit: 7, resetAt: null, source: "x-contentful-ratelimit-second-remaining", windowMs: 1000 });
  });

  it("a 429 whose hour count is spent is the hour's, waited to its reset (delta seconds)", () => {
    const verdict = read("https://api.contentful.com/spaces/yadj1kx9rmg0/entries", 429, { ...second(6, 1200), "x-contentful-ratelimit-hour-limit": "36000", "x-contentful-ratelimit-hour-remaining": "0" }, RATE_LIMITED);
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 1_200_000, waitSource: "x-contentful-ratelimit-reset", scope: { limit: "hour" } });
    expect(verdict.budget).toMatchObject({ remaining: 0, limit: 36000, resetAt: "2026-11-30T12:20:00.000Z", source: "x-contentful-ratelimit-hour-remaining" });
  });

  it("a 429 with no reset, or a reset of 0, waits the next second; a longer Retry-After still wins", () => {
    expect(read("https://cdn.contentful.com/spaces/cfexampleapi/entries", 429, {}, RATE_LIMITED)).toMatchObject({ limitType: "burst", minWaitMs: 1000, waitSource: "doc:fixed-1s" });
    expect(read("https://cdn.contentful.com/spaces/cfexampleapi/entries", 429, { "x-contentful-ratelimit-reset": "0" }, RATE_LIMITED)).toMatchObject({ minWaitMs: 1000, waitSource: "doc:fixed-1s" });
    expect(read("https://cdn.contentful.com/spaces/cfexampleapi/entries", 429, { "x-contentful-ratelimit-reset": "1", "retry-after": "3" }, RATE_LIMITED)).toMatchObject({ minWaitMs: 3000, waitSource: "retry-after" });
  });

  it("401 AccessTokenInvalid is final", () => {
    expect(read("https://cdn.contentful.com/spaces/cfexampleapi/entries", 401, {}, { sys: { type: "Error", id: "AccessTokenInvalid" }, message: "The access token you sent could not be found or is invalid." })).toMatchObject({
      throttled: false,
      retryable: false,
      limitType: "permission",
    });
  });
});

describe("Contentful through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 with X-Contentful-RateLimit-Reset 1 waits the second, then the entry is saved", async () => {
    const server = await servers.start([
      { status: 429, headers: second(0, 1), body: RATE_LIMITED },
      { status: 200, headers: second(6), body: { sys: { type: "Entry", id: "nyancat", version: 2 } } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "contentful", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "PUT", url: "/spaces/yadj1kx9rmg0/environments/master/entries/nyancat", headers: { "X-Contentful-Version": "1" }, data: { fields: {} } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("contentful");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-contentful-ratelimit-reset" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(1000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(1000);
  });

  it("a spent hour (reset 900) is too long to sleep inline: deferred 15 minutes after one call", async () => {
    const server = await servers.start([{ status: 429, headers: { "x-contentful-ratelimit-reset": "900" }, body: RATE_LIMITED }]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "contentful", clock, onLongWait: "defer" });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/spaces/yadj1kx9rmg0/environments/master/entries" });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    expect(Date.parse(result.notBefore!) - start).toBeGreaterThanOrEqual(900_000);
  });

  it("a 403 AccessDenied with requests left is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: second(6), body: { sys: { type: "Error", id: "AccessDenied" }, message: "The user tried to access a resource they do not have access to." } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "contentful", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/spaces/yadj1kx9rmg0/environments/master/entries/nyancat" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "contentful", limitType: "permission", retryable: false });
  });

  it("a 502 Hibernated read is retried (the space wakes on its own), then succeeds", async () => {
    const server = await servers.start([
      { status: 502, body: { sys: { type: "Error", id: "Hibernated" }, message: "The space has not been accessed for a long time and has been \"hibernated\" in a saved state." } },
      { status: 200, headers: second(6), body: { sys: { type: "Array" }, items: [] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "contentful", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/spaces/cfexampleapi/environments/master/entries" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 502 });
  });
});
