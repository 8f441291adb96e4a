import { describe, expect, it } from "vitest";
import { classify } from "../../../src/engine";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const gql = "https://shop.myshopify.com/admin/api/2024-10/graphql.json";
const run = (status: number, headers: Record<string, string>, body: unknown, url = gql) =>
  classify({ request: { method: "POST", url }, response: { status, headers, body } }, { nowMs: NOW });

describe("shopify dialect", () => {
  it("THROTTLED with a fractional refill rounds the wait up to the next ms", () => {
    const v = run(200, {}, {
      errors: [{ message: "Throttled", extensions: { code: "THROTTLED" } }],
      extensions: { cost: { requestedQueryCost: 101, throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 0, restoreRate: 50 } } },
    });
    expect(v).toMatchObject({ throttled: true, limitType: "cost", minWaitMs: 2020, scope: { store: "shop.myshopify.com", api: "graphql" } });
  });

  it("THROTTLED without the cost extension is a cost throttle with no wait", () => {
    const v = run(200, {}, { errors: [{ message: "Throttled", extensions: { code: "THROTTLED" } }] });
    expect(v).toMatchObject({ throttled: true, retryable: true, limitType: "cost", minWaitMs: null });
  });

  it("a malformed call-limit header is ignored with a reason", () => {
    const v = run(200, { "X-Shopify-Shop-Api-Call-Limit": "lots" }, {}, "https://shop.myshopify.com/admin/api/2024-10/orders.json");
    expect(v.budget).toBeNull();
    expect(v.ignored).toEqual([{ signal: "x-shopify-shop-api-call-limit", value: "lots", why: "not used/limit" }]);
  });

  it("REST 429 without Retry-After gives no wait (back off)", () => {
    const v = run(429, { "X-Shopify-Shop-Api-Call-Limit": "40/40" }, { errors: "Exceeded 2 calls per second" }, "https://shop.myshopify.com/admin/api/2024-10/orders.json");
    expect(v).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: null, scope: { api: "rest" } });
  });
});
