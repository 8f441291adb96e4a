import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const minute = (remaining: number, used = 1) => ({ "x-ratelimit-total": "200", "x-ratelimit-remaining": String(remaining), "x-ratelimit-used-currentrequest": String(used) });

describe("Freshdesk's headers, read by host", () => {
  it("any account's subdomain is Freshdesk's, and X-RateLimit-Total is the minute's budget", () => {
    const verdict = classify({ request: { method: "GET", url: "https://acme.freshdesk.com/api/v2/tickets" }, response: { status: 200, headers: minute(120, 2), body: [] } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ provider: "freshdesk", throttled: false, budget: { remaining: 120, limit: 200, resetAt: null, windowMs: 60_000, requestUnits: 2 } });
  });
});

describe("a Freshdesk 429, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("waits its Retry-After once, then the ticket is created", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "23", ...minute(0) }, body: {} },
      { status: 201, headers: minute(199), body: { id: 42 } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "freshdesk", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/api/v2/tickets", data: { subject: "Printer on fire" } });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(23_000);
  });

  it("with no Retry-After waits the documented minute once, not a backoff from half a second inside it", async () => {
    const server = await servers.start([{ status: 429, headers: minute(0), body: {} }, { status: 200, headers: minute(199), body: [] }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "freshdesk", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/api/v2/contacts" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "doc:fixed-60s" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(60_000);
  });

  it("a 403 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: minute(150), body: { code: "access_denied", message: "You are not authorized to perform this action." } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "freshdesk", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/api/v2/tickets/42" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
  });
});
