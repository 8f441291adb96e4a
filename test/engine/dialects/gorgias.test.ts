import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developers.gorgias.com/reference/limitations (leaky bucket, X-Gorgias-Account-Api-Call-Limit, Retry-After)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const bucket = (used: number, limit = 40) => ({ "x-gorgias-account-api-call-limit": `${used}/${limit}` });

describe("Gorgias's call-limit header, read by host", () => {
  it("any account's subdomain is Gorgias's, and used/limit is the bucket's budget with the documented leak", () => {
    const verdict = classify({ request: { method: "GET", url: "https://acme.gorgias.com/api/tickets" }, response: { status: 200, headers: bucket(12), body: { data: [] } } }, { nowMs: NOW });
    expect(verdict).toMatchObject({
      provider: "gorgias",
      throttled: false,
      budget: { remaining: 28, limit: 40, resetAt: null, source: "x-gorgias-account-api-call-limit", restorePerSecond: 2, restoreEstimated: true, restoreFloorPerSecond: 2 },
    });
  });

  it("an OAuth2 app's bucket of 80 leaks 80 per 20 s", () => {
    const verdict = classify({ request: { method: "GET", url: "https://shop.gorgias.com/api/customers" }, response: { status: 200, headers: bucket(79, 80), body: { data: [] } } }, { nowMs: NOW });
    expect(verdict.budget).toMatchObject({ remaining: 1, limit: 80, restorePerSecond: 4 });
  });
});

describe("a Gorgias 429, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("waits its Retry-After once, then the ticket is created", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "5", ...bucket(40) }, body: { error: { msg: "Too Many Requests" } } },
      { status: 201, headers: bucket(30), body: { id: 42 } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "gorgias", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/api/tickets", data: { subject: "Where is my order?" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("gorgias");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(5000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(5000);
  });

  it("a success showing the bucket full (40/40) holds the next call for one request's leak at 40 per 20 s, before any 429", async () => {
    const server = await servers.start([{ status: 200, headers: bucket(40), body: { data: [] } }]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "gorgias", clock });
    expect((await client.request({ method: "GET", url: "/api/tickets" })).outcome).toBe("success");
    const before = clock.nowMs();
    expect((await client.request({ method: "GET", url: "/api/tickets" })).outcome).toBe("success");
    expect(clock.nowMs() - before).toBeGreaterThanOrEqual(500);
    expect(clock.nowMs() - before).toBeLessThan(2000);
    expect(server.calls).toHaveLength(2);
  });

  it("a 403 with room in the bucket is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: bucket(3), body: { error: { msg: "You do not have permission to perform this action." } } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "gorgias", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/api/users/7" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "gorgias", limitType: "permission", retryable: false });
  });
});
