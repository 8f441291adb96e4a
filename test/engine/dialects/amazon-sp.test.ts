import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { requestScopeFor } from "../../../src/engine";
import { spApiOperationOf } from "../../../src/engine/dialects/amazon-sp";
import { serverPerTest, virtualClock } from "../../helpers/server";

describe("an SP-API request's operation", () => {
  it("keeps the API, its version and the resource names, and takes out the ids", () => {
    expect(spApiOperationOf("/orders/v0/orders/902-3159896-1390916/orderItems")).toBe("/orders/v0/orders/:id/orderItems");
    expect(spApiOperationOf("/listings/2021-08-01/items/A3SELLER1D/SKU-42?marketplaceIds=X")).toBe("/listings/2021-08-01/items/:id/:id");
    expect(spApiOperationOf("/fba/inventory/v1/summaries")).toBe("/fba/inventory/v1/summaries");
  });

  it("is known before the request is sent, so a spent getOrders bucket does not hold back a catalog call", () => {
    const orders = requestScopeFor({ request: { url: "https://sellingpartnerapi-na.amazon.com/orders/v0/orders?MarketplaceIds=X" } });
    const catalog = requestScopeFor({ request: { url: "https://sellingpartnerapi-na.amazon.com/catalog/2022-04-01/items/B07N4M94X4" } });
    expect(orders).toEqual({ operation: "/orders/v0/orders" });
    expect(catalog).toEqual({ operation: "/catalog/2022-04-01/items/:id" });
  });
});

describe("an SP-API QuotaExceeded, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("waits at least one token's time at the rate shown (0.5 per s: 2 s), not a half-second backoff", async () => {
    const server = await servers.start([
      { status: 429, headers: { "x-amzn-ratelimit-limit": "0.5" }, body: { errors: [{ code: "QuotaExceeded", message: "You exceeded your quota for the requested resource." }] } },
      { status: 200, headers: { "x-amzn-ratelimit-limit": "0.5" }, body: { payload: { BuyerEmail: "x@example.com" } } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "amazon-sp", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/orders/v0/orders/902-3159896-1390916/buyerInfo" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-amzn-ratelimit-limit" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(2000);
  });
});
