import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { requestScopeFor } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

const burst = (remaining: number, reset = 2, limit = 40) => ({ "x-ratelimit-limit": String(limit), "x-ratelimit-remaining": String(remaining), "x-ratelimit-reset": String(reset) });

describe("a Pipedrive request's scope", () => {
  it("tells the Search API, limited on its own, from the rest of the API", () => {
    for (const url of ["https://acme.pipedrive.com/api/v2/deals/search?term=x", "https://api.pipedrive.com/v1/itemSearch?term=x", "https://acme.pipedrive.com/api/v1/itemSearch/field"]) {
      expect(requestScopeFor({ request: { url } })).toEqual({ endpoint: "search" });
    }
    for (const url of ["https://acme.pipedrive.com/api/v2/deals/7", "https://api.pipedrive.com/v1/persons", "https://acme.pipedrive.com/api/v1/searchResults"]) {
      expect(requestScopeFor({ request: { url } })).toEqual({ endpoint: "api" });
    }
  });
});

describe("Pipedrive's limits, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a burst 429 waits the window's reset, then the call goes through", async () => {
    const server = await servers.start([{ status: 429, headers: burst(0, 2), body: { success: false } }, { status: 200, headers: burst(39), body: { success: true, data: [] } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "pipedrive", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/api/v2/deals" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-ratelimit-reset" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(2000);
  });

  it("a 429 with the daily token budget spent is deferred a day after one call, and holds back searches too", async () => {
    const clock = virtualClock();
    const server = await servers.start([{ status: 429, headers: { ...burst(38), "x-daily-ratelimit-token-limit": "30000", "x-daily-ratelimit-token-remaining": "0" }, body: { success: false } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "pipedrive", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/api/v2/activities" });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    expect(Date.parse(result.notBefore!) - start).toBeGreaterThanOrEqual(24 * 3_600_000);
    const search = await client.request({ method: "GET", url: "/api/v2/deals/search?term=acme" });
    expect(search.outcome).toBe("deferred");
    expect(search.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(1);
  });

  it("a POST's 429 with the day's POST/PUT requests spent is deferred to midnight UTC on the server's clock", async () => {
    const server = await servers.start([{ status: 429, headers: { ...burst(12), "x-daily-requests-left": "0", date: "Tue, 01 Dec 2026 21:00:00 GMT" }, body: { success: false } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "pipedrive", clock: virtualClock(), onLongWait: "defer" });
    const result = await client.request({ method: "POST", url: "/api/v1/notes", data: { content: "hi", deal_id: 7 } });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    // The server's clock reads 21:00 UTC: midnight UTC is 3 h away, from the local clock's 2026-01-01T00:00Z.
    expect(result.notBefore).toBe("2026-01-01T03:00:00.000Z");
  });

  it("a spent Search API holds back searches, not the other calls", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 429, headers: { ...burst(0, 1, 10), "retry-after": "3600" }, body: { success: false } },
      { status: 200, headers: burst(39), body: { success: true, data: { id: 7 } } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "pipedrive", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const search = await client.request({ method: "GET", url: "/api/v2/persons/search?term=ann" });
    expect(search.outcome).toBe("deferred");
    const deal = await client.request({ method: "GET", url: "/api/v2/deals/7" });
    expect(deal).toMatchObject({ outcome: "success", slotWaitMs: 0 });
    const searchAgain = await client.request({ method: "GET", url: "/api/v2/persons/search?term=bob" });
    expect(searchAgain.outcome).toBe("deferred");
    expect(searchAgain.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(2);
  });
});
