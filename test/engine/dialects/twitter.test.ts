import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://docs.x.com/x-api/fundamentals/rate-limits (per-endpoint windows, x-rate-limit-* with an epoch-seconds reset)
// https://docs.x.com/x-api/fundamentals/response-codes-and-errors (429: rate limit or Post cap)
// https://developer.x.com/en/support/x-api/error-troubleshooting (v1.1 codes 88, 130, 185)
const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const NOW_S = NOW_MS / 1000;
const SERVER_DATE = "Mon, 30 Nov 2026 12:00:00 GMT";
const rateWindow = (limit: number, remaining: number, resetInS: number) => ({
  date: SERVER_DATE,
  "x-rate-limit-limit": String(limit),
  "x-rate-limit-remaining": String(remaining),
  "x-rate-limit-reset": String(NOW_S + resetInS),
});
const userDay = (remaining: number, resetInS: number) => ({
  "x-user-limit-24hour-limit": "100",
  "x-user-limit-24hour-remaining": String(remaining),
  "x-user-limit-24hour-reset": String(NOW_S + resetInS),
});
const tooMany = { title: "Too Many Requests", detail: "Too Many Requests", type: "about:blank", status: 429 };
const forbidden = { title: "Forbidden", detail: "You are not permitted to perform this action.", type: "about:blank", status: 403 };
const scopeOf = (method: string, url: string) => requestScopeFor({ request: { method, url } });

describe("an X request's scope: its endpoint as the rate-limit tables write it", () => {
  it.each([
    ["GET", "https://api.x.com/2/tweets/1460323737035677698?tweet.fields=created_at", "GET /2/tweets/:id"],
    ["GET", "https://api.twitter.com/2/tweets?ids=1,2", "GET /2/tweets"],
    ["POST", "https://api.x.com/2/tweets", "POST /2/tweets"],
    ["GET", "https://api.x.com/2/users/2244994945/following", "GET /2/users/:id/following"],
    ["DELETE", "https://api.x.com/2/users/2244994945/following/6253282", "DELETE /2/users/:id/following/:id"],
    ["GET", "https://api.x.com/2/users/by/username/XDevelopers", "GET /2/users/by/username/:username"],
    ["GET", "https://api.x.com/2/spaces/1DXxyRYNejbKM", "GET /2/spaces/:id"],
    ["GET", "https://api.x.com/2/spaces/search?query=news", "GET /2/spaces/search"],
    ["GET", "https://api.twitter.com/1.1/statuses/show/1460323737035677698.json", "GET /1.1/statuses/show/:id.json"],
  ])("%s %s counts against %s", (method, url, endpoint) => {
    expect(scopeOf(method, url)).toEqual({ endpoint });
  });

  it("both hosts are X's, and a 429 names the same scope as its request", () => {
    for (const host of ["api.x.com", "api.twitter.com"]) {
      const url = `https://${host}/2/users/2244994945/tweets`;
      const verdict = classify({ request: { method: "GET", url }, response: { status: 429, headers: rateWindow(1500, 0, 300), body: tooMany } }, { nowMs: NOW_MS });
      expect(verdict).toMatchObject({ provider: "twitter", throttled: true, retryable: true, limitType: "burst", minWaitMs: 300_000, waitSource: "x-rate-limit-reset" });
      expect(verdict.scope).toEqual(scopeOf("GET", url));
    }
  });
});

describe("X's answers, read by classify", () => {
  it("x-rate-limit-reset is epoch seconds, measured against the answer's Date, not the local clock", () => {
    const verdict = classify({ request: { url: "https://api.x.com/2/tweets/search/recent?query=a" }, response: { status: 429, headers: rateWindow(450, 0, 60), body: tooMany } }, { nowMs: NOW_MS + 3_600_000 });
    expect(verdict.minWaitMs).toBe(60_000);
  });

  it("a 429 with requests left in the window gives no wait of the window's (another limit answered): back off", () => {
    const verdict = classify({ request: { url: "https://api.x.com/2/tweets/search/recent?query=a" }, response: { status: 429, headers: rateWindow(450, 12, 600), body: tooMany } }, { nowMs: NOW_MS });
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: null });
  });

  it("the user's spent 24-hour limit is a quota with the reset of that day, whatever the 15-minute window shows", () => {
    const verdict = classify({ request: { method: "POST", url: "https://api.x.com/2/tweets" }, response: { status: 429, headers: { ...rateWindow(100, 99, 900), ...userDay(0, 5 * 3600) }, body: tooMany } }, { nowMs: NOW_MS });
    expect(verdict).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: 5 * 3_600_000, waitSource: "x-user-limit-24hour-reset", scope: { endpoint: "POST /2/tweets", limit: "24hour" } });
  });

  it("the app's spent 24-hour limit is one too", () => {
    const headers = { ...rateWindow(100, 40, 900), "x-app-limit-24hour-limit": "10000", "x-app-limit-24hour-remaining": "0", "x-app-limit-24hour-reset": String(NOW_S + 7200) };
    const verdict = classify({ request: { method: "POST", url: "https://api.x.com/2/tweets" }, response: { status: 429, headers, body: tooMany } }, { nowMs: NOW_MS });
    expect(verdict).toMatchObject({ retryable: false, limitType: "quota", minWaitMs: 7_200_000, waitSource: "x-app-limit-24hour-reset" });
  });

  it("a success showing the user's day spent shows that budget, not the window's", () => {
    const verdict = classify({ request: { method: "POST", url: "https://api.x.com/2/tweets" }, response: { status: 201, headers: { ...rateWindow(100, 98, 900), ...userDay(0, 3600) }, body: { data: { id: "1", text: "hi" } } } }, { nowMs: NOW_MS });
    expect(verdict).toMatchObject({ throttled: false, limitType: "none", budget: { remaining: 0, limit: 100, source: "x-user-limit-24hour-remaining", resetAt: "2026-11-30T13:00:00.000Z" } });
  });

  it("the monthly Post cap (usage-capped) is a quota with no wait, under either host's problem URL", () => {
    for (const type of ["https://api.twitter.com/2/problems/usage-capped", "https://api.x.com/2/problems/usage-capped"]) {
      const body = { title: "UsageCapExceeded", period: "Monthly", scope: "Product", detail: "Usage cap exceeded: Monthly product cap", type };
      const verdict = classify({ request: { url: "https://api.x.com/2/tweets/search/recent?query=a" }, response: { status: 429, body } }, { nowMs: NOW_MS });
      expect(verdict).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: null, scope: { limit: "usage-cap" } });
    }
  });

  it("a 403 with the window spent is an access error; v1.1's 403 error 185 is a posting limit", () => {
    const denied = classify({ request: { method: "DELETE", url: "https://api.x.com/2/tweets/1" }, response: { status: 403, headers: rateWindow(50, 0, 600), body: forbidden } }, { nowMs: NOW_MS });
    expect(denied).toMatchObject({ throttled: false, retryable: false, limitType: "permission", minWaitMs: null });
    const posting = classify({ request: { method: "POST", url: "https://api.twitter.com/1.1/statuses/update.json" }, response: { status: 403, body: { errors: [{ code: 185, message: "User is over daily status update limit." }] } } }, { nowMs: NOW_MS });
    expect(posting).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: null });
  });
});

describe("X's rate limits, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 waits until x-rate-limit-reset (epoch seconds against the answer's Date), then the call goes through", async () => {
    const server = await servers.start([
      { status: 429, headers: rateWindow(900, 0, 45), body: tooMany },
      { status: 200, headers: rateWindow(900, 899, 900), body: { data: { id: "2244994945", name: "Developers", username: "XDevelopers" } } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "twitter", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/2/users/2244994945" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("twitter");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-rate-limit-reset" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(45_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(60_000);
  });

  it("a 429 with the user's day spent is deferred to that day's reset after one call", async () => {
    const clock = virtualClock();
    const server = await servers.start([{ status: 429, headers: { ...rateWindow(100, 99, 900), ...userDay(0, 6 * 3600) }, body: tooMany }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "twitter", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/2/tweets", data: { text: "hello" } });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    expect(Date.parse(result.notBefore!) - start).toBeGreaterThanOrEqual(6 * 3_600_000);
  });

  it("a 403 with the window spent is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: rateWindow(50, 0, 600), body: forbidden }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "twitter", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/2/tweets/1460323737035677698" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "twitter", limitType: "permission", retryable: false });
  });
});
