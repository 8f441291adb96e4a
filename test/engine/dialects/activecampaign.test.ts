import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developers.activecampaign.com/reference/rate-limits (5 per second per account, 429 + Retry-After, RateLimit-Limit/-Remaining)
// https://developers.activecampaign.com/reference/errors (402, 403, 404, 422 are final)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const counts = (remaining: number) => ({ "ratelimit-limit": "5", "ratelimit-remaining": String(remaining) });
const read = (status: number, headers: Record<string, string>, url = "https://acme.api-us1.com/api/3/contacts", body: unknown = {}) =>
  classify({ request: { method: "GET", url }, response: { status, headers, body } }, { nowMs: NOW });

describe("ActiveCampaign's 5 requests per second, read by host", () => {
  it("any account's api-us1.com host is ActiveCampaign's; RateLimit-Remaining of RateLimit-Limit is a one-second budget", () => {
    expect(read(200, counts(3))).toMatchObject({
      provider: "activecampaign",
      throttled: false,
      limitType: "none",
      budget: { remaining: 3, limit: 5, resetAt: null, source: "ratelimit-remaining", windowMs: 1000 },
    });
  });

  it("a 429 waits its Retry-After (the documented 30), a burst of the account", () => {
    expect(read(429, { "retry-after": "30", ...counts(0) })).toMatchObject({
      provider: "activecampaign",
      throttled: true,
      retryable: true,
      limitType: "burst",
      minWaitMs: 30_000,
      waitSource: "retry-after",
      scope: {},
    });
  });

  it("a 429 with no Retry-After waits the documented one-second window", () => {
    expect(read(429, {})).toMatchObject({ provider: "activecampaign", throttled: true, limitType: "burst", minWaitMs: 1000, waitSource: "doc:fixed-1s" });
  });

  it("a 403 showing RateLimit-Remaining 0 stays an access error: ActiveCampaign throttles with 429 only", () => {
    expect(read(403, counts(0), "https://acme.api-us1.com/api/3/users/7")).toMatchObject({ provider: "activecampaign", throttled: false, retryable: false, limitType: "permission", minWaitMs: null });
  });

  it("a 402 (account payment issues) is final and no throttle", () => {
    expect(read(402, counts(4))).toMatchObject({ provider: "activecampaign", throttled: false, retryable: false, minWaitMs: null });
  });

  it("a host that only ends like api-us1.com is not ActiveCampaign's", () => {
    expect(read(429, {}, "https://acme.notapi-us1.com/api/3/contacts").provider).toBe("generic");
  });
});

describe("an ActiveCampaign 429, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("waits its Retry-After once, then the contact is synced", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "3", ...counts(0) }, body: { message: "Too Many Requests" } },
      { status: 201, headers: counts(4), body: { contact: { id: "42" } } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "activecampaign", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/api/3/contact/sync", data: { contact: { email: "jane@example.com" } } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("activecampaign");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(3000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(3000);
  });

  it("a 429 with no Retry-After waits about the one-second window, then the call goes through", async () => {
    const server = await servers.start([
      { status: 429, body: { message: "Too Many Requests" } },
      { status: 200, headers: counts(4), body: { contacts: [] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "activecampaign", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/api/3/contacts" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "doc:fixed-1s" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(1000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(5000);
  });

  it("a 403 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: counts(4), body: { message: "You do not have permission to access this resource" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "activecampaign", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/api/3/users/7" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "activecampaign", limitType: "permission", retryable: false });
  });
});
