import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { requestScopeFor } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

describe("a BigCommerce request's scope", () => {
  it("is its store, known from the path before it is sent", () => {
    expect(requestScopeFor({ request: { url: "https://api.bigcommerce.com/stores/abc123de/v3/catalog/products" } })).toEqual({ store: "abc123de" });
    expect(requestScopeFor({ request: { url: "https://api.bigcommerce.com/stores/zz9/v2/orders/7" } })).toEqual({ store: "zz9" });
  });
});

describe("BigCommerce's own headers, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 waits its X-Retry-After, then the update goes through", async () => {
    const server = await servers.start([
      { status: 429, headers: { "x-retry-after": "3", "x-rate-limit-requests-left": "0", "x-rate-limit-time-reset-ms": "2800" }, body: { status: 429, title: "Too many requests" } },
      { status: 200, headers: { "x-rate-limit-requests-left": "149", "x-rate-limit-requests-quota": "150", "x-rate-limit-time-reset-ms": "30000", "x-rate-limit-time-window-ms": "30000" }, body: { data: { id: 111 } } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "bigcommerce", clock: virtualClock() });
    const result = await client.request({ method: "PUT", url: "/stores/abc123de/v3/catalog/products/111", data: { price: 10 } });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(3000);
  });

  it("a success that shows the window spent makes the next request wait for the window's end", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 200, headers: { "x-rate-limit-requests-left": "0", "x-rate-limit-requests-quota": "150", "x-rate-limit-time-reset-ms": "5000", "x-rate-limit-time-window-ms": "30000" }, body: { data: [] } },
      { status: 200, headers: { "x-rate-limit-requests-left": "149", "x-rate-limit-requests-quota": "150", "x-rate-limit-time-reset-ms": "30000", "x-rate-limit-time-window-ms": "30000" }, body: { data: [] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "bigcommerce", clock });
    const first = await client.request({ method: "GET", url: "/stores/abc123de/v3/customers" });
    expect(first.outcome).toBe("success");
    const before = clock.nowMs();
    const second = await client.request({ method: "GET", url: "/stores/abc123de/v3/customers" });
    expect(second.outcome).toBe("success");
    expect(clock.nowMs() - before).toBeGreaterThanOrEqual(4000);
    expect(server.calls).toHaveLength(2);
  });
});
