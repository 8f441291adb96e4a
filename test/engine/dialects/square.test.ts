import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developer.squareup.com/reference/square/objects/ErrorCategory: "monitor responses for 429
// RATE_LIMITED errors and use a retry mechanism with an exponential backoff schedule ... jitter".
const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const rateLimited = { errors: [{ category: "RATE_LIMIT_ERROR", code: "RATE_LIMITED", detail: "This request was rate limited. Please retry later." }] };
const read = (status: number, body: unknown, url = "https://connect.squareup.com/v2/payments") =>
  classify({ request: { method: "POST", url }, response: { status, headers: { "content-type": "application/json" }, body } }, { nowMs: NOW_MS });

describe("Square's errors array", () => {
  it("429 RATE_LIMITED is a burst with no wait of its own (backoff), named in the reason", () => {
    const verdict = read(429, rateLimited);
    expect(verdict).toMatchObject({ provider: "square", throttled: true, retryable: true, limitType: "burst", minWaitMs: null, waitSource: null });
    expect(verdict.reason).toMatch(/RATE_LIMITED/);
  });

  it("a Retry-After, were one ever sent, is still the wait", () => {
    const verdict = classify({ request: { method: "GET", url: "https://connect.squareup.com/v2/locations" }, response: { status: 429, headers: { "retry-after": "4" }, body: rateLimited } }, { nowMs: NOW_MS });
    expect(verdict).toMatchObject({ provider: "square", throttled: true, minWaitMs: 4000, waitSource: "retry-after" });
  });

  it.each([
    [401, "AUTHENTICATION_ERROR", "UNAUTHORIZED", "permission"],
    [403, "AUTHENTICATION_ERROR", "INSUFFICIENT_SCOPES", "permission"],
    [400, "INVALID_REQUEST_ERROR", "INVALID_VALUE", "validation"],
    [402, "PAYMENT_METHOD_ERROR", "CARD_DECLINED", "none"],
  ])("%i %s %s stays final (%s)", (status, category, code, limitType) => {
    const verdict = read(status, { errors: [{ category, code, detail: "x" }] });
    expect(verdict).toMatchObject({ provider: "square", throttled: false, retryable: false, limitType });
  });

  it("a bulk endpoint's 200 that lists an operation's error is not a throttle of the request", () => {
    // https://developer.squareup.com/docs/build-basics/handling-errors: "Bulk endpoints ... might also return errors for individual operations within a 200 response."
    const verdict = read(200, { responses: {}, errors: rateLimited.errors }, "https://connect.squareup.com/v2/customers/bulk-create");
    expect(verdict).toMatchObject({ provider: "square", throttled: false, limitType: "none" });
  });
});

describe("a Square 429, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("backs off (no wait header), then the payment goes through", async () => {
    const clock = virtualClock();
    const server = await servers.start([{ status: 429, body: rateLimited }, { status: 200, body: { payment: { id: "R2B3Z8WMVt3EAmzYWLZvz7Y69EbZY", status: "COMPLETED" } } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "square", clock });
    const result = await client.request({ method: "POST", url: "/v2/payments", data: { idempotency_key: "4935a656-a929-4792-b97c-8848be85c27c", source_id: "cnon:card-nonce-ok" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("square");
    expect(server.calls).toHaveLength(2);
    // The client's own exponential backoff with jitter, as Square asks: no server wait to take.
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: expect.stringMatching(/^backoff/) });
    expect(result.attempts[0]!.waitMs).toBeGreaterThan(0);
    expect(result.attempts[0]!.waitMs).toBeLessThan(10_000);
  });

  it("a 401 AUTHENTICATION_ERROR is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 401, body: { errors: [{ category: "AUTHENTICATION_ERROR", code: "UNAUTHORIZED", detail: "This request could not be authorized." }] } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "square", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v2/locations" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "square", limitType: "permission", retryable: false });
  });
});
