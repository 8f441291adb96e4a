import { describe, expect, it } from "vitest";
import { budgetNotBefore, classify } from "../../src/engine";

const NOW_MS = Date.parse("2026-11-30T12:00:00Z");

function verdictOf(url: string, headers: Record<string, string>, body?: unknown) {
  return classify({ request: { method: "GET", url }, response: { status: 200, headers, body } }, { nowMs: NOW_MS });
}

describe("budgetNotBefore: pacing from the budget a success shows", () => {
  it("leaves room while the budget is above the threshold", () => {
    const verdict = verdictOf("https://api.github.com/user", { "x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4", "x-ratelimit-reset": String(NOW_MS / 1000 + 60) });
    expect(budgetNotBefore(verdict, 3, NOW_MS)).toBeNull();
  });

  it("waits for the reset of a window that shows one", () => {
    const verdict = verdictOf("https://api.github.com/user", { "x-ratelimit-limit": "5000", "x-ratelimit-remaining": "3", "x-ratelimit-reset": String(NOW_MS / 1000 + 60) });
    expect(budgetNotBefore(verdict, 3, NOW_MS)).toBe("2026-11-30T12:01:00.000Z");
  });

  it("waits only for the points the threshold needs in a bucket that restores continuously (Shopify GraphQL)", () => {
    const body = { data: {}, extensions: { cost: { requestedQueryCost: 10, actualQueryCost: 10, throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 30, restoreRate: 50 } } } };
    const verdict = verdictOf("https://s.myshopify.com/admin/api/2025-01/graphql.json", {}, body);
    expect(verdict.budget).toMatchObject({ remaining: 30, restorePerSecond: 50 });
    // Threshold 49: 20 points short, 50 points/s -> 400 ms, not the 19.4 s a full refill takes.
    expect(budgetNotBefore(verdict, 49, NOW_MS)).toBe("2026-11-30T12:00:00.400Z");
  });

  it("paces a rolling window that shows only its length at limit per window (HubSpot)", () => {
    const verdict = verdictOf("https://api.hubapi.com/crm/v3/objects/contacts", {
      "x-hubspot-ratelimit-max": "100",
      "x-hubspot-ratelimit-remaining": "2",
      "x-hubspot-ratelimit-interval-milliseconds": "10000",
    });
    expect(verdict.budget).toMatchObject({ remaining: 2, limit: 100, resetAt: null, windowMs: 10_000 });
    // Threshold 4: 3 requests short, one comes back every 100 ms on average.
    expect(budgetNotBefore(verdict, 4, NOW_MS)).toBe("2026-11-30T12:00:00.300Z");
    // Never longer than the window itself: by then every counted request has left it.
    expect(budgetNotBefore(verdict, 500, NOW_MS)).toBe("2026-11-30T12:00:10.000Z");
  });

  it("paces Shopify REST at its documented leak rate (2/s for a 40-request bucket)", () => {
    const verdict = verdictOf("https://s.myshopify.com/admin/api/2025-01/products.json", { "x-shopify-shop-api-call-limit": "39/40" });
    expect(verdict.budget).toMatchObject({ remaining: 1, limit: 40, resetAt: null, restorePerSecond: 2 });
    // Threshold 3: 3 requests short at 2/s -> 1.5 s.
    expect(budgetNotBefore(verdict, 3, NOW_MS)).toBe("2026-11-30T12:00:01.500Z");
  });

  it("says nothing when the budget shows no way to know when it refills", () => {
    const verdict = verdictOf("https://api.example.test/items", { "x-ratelimit-limit": "100", "x-ratelimit-remaining": "0" });
    expect(verdict.budget).toMatchObject({ remaining: 0, resetAt: null });
    expect(budgetNotBefore(verdict, 0, NOW_MS)).toBeNull();
  });
});

describe("IETF RateLimit-Policy quota unit (qu)", () => {
  // https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/: qu is "requests" (the
  // default), "content-bytes" or "concurrent-requests".
  it.each([
    ['"default";q=10;w=1;qu="concurrent-requests"', true],
    ['"default";q=10;w=1', undefined],
    ['"default";q=10;w=1;qu="requests"', undefined],
    ['"burst";q=10;qu="concurrent-requests"', undefined],
  ])("policy %s: concurrent %s", (policy, concurrent) => {
    const verdict = verdictOf("https://api.example.com/items", { ratelimit: '"default";r=4;t=1', "ratelimit-policy": policy });
    // The last policy names another item: the budget's limit and unit come only from its own policy.
    expect(verdict.budget).toMatchObject({ remaining: 4, limit: policy.startsWith('"default"') ? 10 : null });
    expect(verdict.budget?.concurrent).toBe(concurrent);
  });
});

describe("IETF RateLimit-Policy window (w)", () => {
  // The draft's w is "the time window over which the quota is counted", in seconds: the window a
  // pacer needs where only throttles carry the fields.
  it.each([
    ['"default";q=60;w=1', 1000],
    ['"default";q=100;w=60', 60_000],
    ['"default";q=100;w=0.5', 500],
    ['"default";q=100', undefined],
    ['"default";q=100;w=0', undefined],
    ['"burst";q=10;w=5', undefined],
  ])("policy %s: windowMs %s", (policy, windowMs) => {
    const verdict = classify(
      { request: { method: "GET", url: "https://api.example.com/items" }, response: { status: 429, headers: { ratelimit: '"default";r=0;t=1', "ratelimit-policy": policy }, body: null } },
      { nowMs: NOW_MS },
    );
    expect(verdict.budget).toMatchObject({ remaining: 0, resetAt: "2026-11-30T12:00:01.000Z" });
    expect(verdict.budget?.windowMs).toBe(windowMs);
  });
});
