import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://github.com/reddit-archive/reddit/wiki/API (X-Ratelimit-Used/-Remaining/-Reset, seconds to the period's end)
// https://github.com/praw-dev/prawcore/blob/main/prawcore/rate_limit.py (Remaining read as a float)
// https://github.com/reddit-archive/reddit/blob/master/r2/r2/lib/errors.py (RATELIMIT in a write's JSON errors)
const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const counts = (used: number, remaining: string, resetInS: number): Record<string, string> => ({
  "x-ratelimit-used": String(used),
  "x-ratelimit-remaining": remaining,
  "x-ratelimit-reset": String(resetInS),
});
const ratelimited = (message: string, seconds?: number) => ({ json: { ...(seconds === undefined ? {} : { ratelimit: seconds }), errors: [["RATELIMIT", message, "ratelimit"]] } });
const at = (method: string, url: string, status: number, headers: Record<string, string>, body?: unknown) =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW_MS });

describe("Reddit's hosts", () => {
  it.each(["https://oauth.reddit.com/api/v1/me", "https://www.reddit.com/api/v1/access_token", "https://reddit.com/r/all.json"])("%s is Reddit's", (url) => {
    expect(at("GET", url, 200, counts(1, "999.0", 300)).provider).toBe("reddit");
  });

  it("a host that only ends in reddit.com is not", () => {
    expect(at("GET", "https://notreddit.com/api", 200, counts(1, "999.0", 300)).provider).not.toBe("reddit");
  });
});

describe("Reddit's X-Ratelimit-* headers", () => {
  it("Remaining may be a decimal: rounded down, the limit Used + Remaining, the reset delta seconds counted down", () => {
    const verdict = at("GET", "https://oauth.reddit.com/hot", 200, counts(404, "595.0", 120));
    expect(verdict).toMatchObject({ throttled: false, budget: { remaining: 595, limit: 999, resetAt: "2026-11-30T12:02:00.000Z", windowMs: 600_000, resetCountsDown: true }, ignored: [] });
    expect(at("GET", "https://oauth.reddit.com/hot", 200, counts(999, "0.9", 60)).budget).toMatchObject({ remaining: 0, limit: 1000 });
  });

  it("a Reset only an epoch can be is read as one, against the answer's Date, and recorded as a deviation", () => {
    const verdict = at("GET", "https://oauth.reddit.com/new", 429, { ...counts(1000, "0", NOW_MS / 1000 + 39), date: "Mon, 30 Nov 2026 12:00:00 GMT" });
    expect(verdict).toMatchObject({ minWaitMs: 39_000, waitSource: "x-ratelimit-reset" });
    expect(verdict.deviations).toContainEqual(expect.stringMatching(/x-ratelimit-reset read as epoch seconds/));
  });

  it("a Remaining that is no number is listed as ignored, and no budget is made up", () => {
    const verdict = at("GET", "https://oauth.reddit.com/hot", 200, counts(4, "lots", 120));
    expect(verdict.budget).toBeNull();
    expect(verdict.ignored).toContainEqual(expect.objectContaining({ signal: "x-ratelimit-remaining", value: "lots" }));
  });
});

describe("Reddit throttles", () => {
  it("a 429 with the period spent waits the reset; with requests left and no Retry-After it backs off", () => {
    expect(at("GET", "https://oauth.reddit.com/new", 429, counts(1000, "0", 87))).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 87_000, waitSource: "x-ratelimit-reset" });
    expect(at("GET", "https://oauth.reddit.com/new", 429, counts(10, "990.0", 87))).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: null });
  });

  it("a 429's Retry-After wins when it is the longer", () => {
    expect(at("GET", "https://oauth.reddit.com/new", 429, { ...counts(1000, "0", 20), "retry-after": "45" })).toMatchObject({ minWaitMs: 45_000, waitSource: "retry-after" });
  });

  it("RATELIMIT in a write's 200 is a throttle whose write was not done: the longer of the ratelimit field and the message", () => {
    const verdict = at("POST", "https://oauth.reddit.com/api/comment", 200, counts(12, "988.0", 300), ratelimited("you are doing that too much. try again in 3 minutes.", 200.5));
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 200_500, waitSource: "body:json.ratelimit", writeNotProcessed: true });
    expect(at("POST", "https://oauth.reddit.com/api/comment", 200, {}, ratelimited("Looks like you've been doing that a lot. Take a break for 5 minutes before trying again."))).toMatchObject({ minWaitMs: 300_000, waitSource: "body:json.errors" });
  });

  it("QUOTA_FILLED waits its hour; SUBREDDIT_RATELIMIT (\"try again later\") backs off", () => {
    const quota = { json: { errors: [["QUOTA_FILLED", "You've submitted too many links recently. Please try again in an hour.", "ratelimit"]] } };
    expect(at("POST", "https://oauth.reddit.com/api/submit", 200, {}, quota)).toMatchObject({ throttled: true, minWaitMs: 3_600_000, waitSource: "doc:fixed-3600s" });
    const subreddit = { json: { errors: [["SUBREDDIT_RATELIMIT", "you are doing that too much. try again later.", "ratelimit"]] } };
    expect(at("POST", "https://oauth.reddit.com/api/submit", 200, {}, subreddit)).toMatchObject({ throttled: true, minWaitMs: null });
  });
});

describe("Reddit answers that are no throttle", () => {
  it("401 and 403 are final, even beside a spent count", () => {
    expect(at("GET", "https://oauth.reddit.com/api/v1/me", 401, counts(1000, "0", 30), { message: "Unauthorized", error: 401 })).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    expect(at("GET", "https://oauth.reddit.com/r/private/about", 403, counts(1000, "0", 30), { message: "Forbidden", error: 403 })).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
  });

  it("a 522 from the CDN is retried (prawcore's RETRY_STATUSES); a 404 is final", () => {
    expect(at("GET", "https://oauth.reddit.com/hot", 522, {}, "")).toMatchObject({ throttled: false, retryable: true, limitType: "server" });
    expect(at("GET", "https://oauth.reddit.com/r/nope/about", 404, {}, { message: "Not Found", error: 404 })).toMatchObject({ throttled: false, retryable: false });
  });
});

describe("Reddit through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 with the period spent waits X-Ratelimit-Reset, then the listing comes", async () => {
    const server = await servers.start([
      { status: 429, headers: counts(1000, "0.0", 20), body: { message: "Too Many Requests", error: 429 } },
      { status: 200, headers: counts(1, "999.0", 600), body: { kind: "Listing", data: { children: [] } } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "reddit", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/r/programming/hot" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("reddit");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-ratelimit-reset" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(20_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(30_000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(20_000);
  });

  it("a comment refused by RATELIMIT inside a 200 is sent again after the message's wait, then posted", async () => {
    const server = await servers.start([
      { status: 200, headers: counts(5, "995.0", 500), body: ratelimited("you are doing that too much. try again in 6 seconds.") },
      { status: 200, headers: counts(6, "994.0", 494), body: { json: { errors: [], data: { things: [] } } } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "reddit", clock });
    const result = await client.request({ method: "POST", url: "/api/comment", data: { api_type: "json", thing_id: "t3_1yxrp7", text: "Thanks!" } });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 200, waitSource: "body:json.errors" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(6000);
  });

  it("a 403 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: counts(3, "997.0", 400), body: { message: "Forbidden", error: 403 } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "reddit", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/r/private/about" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "reddit", limitType: "permission", retryable: false });
  });
});
