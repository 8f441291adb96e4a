import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developer.etsy.com/documentation/essentials/rate-limits (QPS then QPD, retry-after on the 429)
// https://github.com/etsy/open-api/issues/198 (per-second 429) ; https://github.com/etsy/open-api/issues/256 (QPD 429)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const windows = (second: number, day: number, perSecond = 10, perDay = 10000) => ({
  "x-limit-per-second": String(perSecond),
  "x-remaining-this-second": String(second),
  "x-limit-per-day": String(perDay),
  "x-remaining-today": String(day),
});
const read = (url: string, status: number, headers: Record<string, string>, body: unknown = {}) =>
  classify({ request: { method: "GET", url }, response: { status, headers, body } }, { nowMs: NOW });

describe("Etsy's two windows, read by host", () => {
  it("api.etsy.com and openapi.etsy.com are Etsy's; www.etsy.com (the OAuth consent page) is not", () => {
    expect(read("https://api.etsy.com/v3/application/shops/1", 200, windows(9, 9000)).provider).toBe("etsy");
    expect(read("https://openapi.etsy.com/v3/application/shops/1", 200, windows(9, 9000)).provider).toBe("etsy");
    expect(read("https://www.etsy.com/oauth/connect", 200, windows(9, 9000)).provider).toBe("generic");
  });

  it("a success paces by the second (a 1 s window), and shows the day instead once it is spent", () => {
    expect(read("https://api.etsy.com/v3/application/shops/1", 200, windows(3, 9000)).budget).toEqual({ remaining: 3, limit: 10, resetAt: null, source: "x-remaining-this-second", windowMs: 1000 });
    expect(read("https://api.etsy.com/v3/application/shops/1", 200, windows(9, 0)).budget).toEqual({ remaining: 0, limit: 10000, resetAt: null, source: "x-remaining-today" });
  });

  it("a 429 with the day left is the second's, whatever its body: waited (at least 1 s) and retried", () => {
    const verdict = read("https://api.etsy.com/v3/application/shops/1/receipts", 429, { ...windows(0, 4000), "retry-after": "2" }, { error: "Exceeded per second rate limit" });
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 2000, waitSource: "retry-after", scope: {} });
  });

  it("a bare 429 whose retry-after is longer than a minute can only be the day's: a quota", () => {
    const verdict = read("https://api.etsy.com/v3/application/shops/1/receipts", 429, { "retry-after": "5400" });
    expect(verdict).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: 5_400_000, scope: { limit: "per-day" } });
    expect(verdict.budget).toMatchObject({ remaining: 0, limit: null, resetAt: "2026-11-30T13:30:00.000Z" });
  });

  it("an unreadable count is listed as ignored, never read as a spent day", () => {
    const verdict = read("https://api.etsy.com/v3/application/shops/1", 200, { ...windows(5, 100), "x-remaining-today": "lots" });
    expect(verdict.throttled).toBe(false);
    expect(verdict.budget).toMatchObject({ remaining: 5, source: "x-remaining-this-second" });
    expect(verdict.ignored).toContainEqual(expect.objectContaining({ signal: "x-remaining-today" }));
  });
});

describe("Etsy through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a per-second 429 waits its retry-after once, then the listing is created", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "1", ...windows(0, 9500) }, body: { error: "Exceeded per second rate limit" } },
      { status: 201, headers: windows(9, 9499), body: { listing_id: 42 } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "etsy", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/v3/application/shops/12345678/listings", data: { title: "Mug" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("etsy");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(1000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(1000);
  });

  it("a spent day is deferred by its retry-after after one call, and holds back the next call without sending it", async () => {
    const clock = virtualClock();
    const server = await servers.start([{ status: 429, headers: { ...windows(9, 0), "retry-after": "86400" }, body: { error: "Exceeded daily rate limit" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "etsy", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/v3/application/shops/12345678/receipts" });
    expect(result.outcome).toBe("deferred");
    expect(result.verdict).toMatchObject({ limitType: "quota", retryable: false });
    expect(server.calls).toHaveLength(1);
    expect(Date.parse(result.notBefore!) - start).toBeGreaterThanOrEqual(86_400_000);
    const next = await client.request({ method: "GET", url: "/v3/application/listings/1234567890" });
    expect(next.outcome).toBe("deferred");
    expect(next.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(1);
  });

  it("a 403 with both windows far from spent is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: windows(9, 9800), body: { error: "No user was provided as part of the bearer token." } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "etsy", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v3/application/shops/12345678/receipts" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "etsy", limitType: "permission", retryable: false });
  });
});
