import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://postmarkapp.com/developer/api/overview (HTTP response codes) and #error-codes (ErrorCode 429, 405, 406, 100)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const SEND = "https://api.postmarkapp.com/email";
const apiError = (code: number, message: string) => ({ ErrorCode: code, Message: message });
const sent = { To: "receiver@example.com", SubmittedAt: "2026-11-30T07:00:00.0000000-05:00", MessageID: "b7bc2f4a-e38e-4336-af7d-e6c392c2f817", ErrorCode: 0, Message: "OK" };

describe("Postmark's answers, read by host", () => {
  it("a 429 from api.postmarkapp.com is Postmark's burst throttle: no wait is documented, so backoff", () => {
    const verdict = classify({ request: { method: "POST", url: SEND }, response: { status: 429, body: apiError(429, "Rate Limit Exceeded") } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ provider: "postmark", throttled: true, retryable: true, limitType: "burst", minWaitMs: null, waitSource: null });
    expect(verdict.reason).toContain("ErrorCode 429");
  });

  it("a Retry-After on a 429, though undocumented, is still a floor", () => {
    const verdict = classify({ request: { method: "POST", url: SEND }, response: { status: 429, headers: { "retry-after": "3" }, body: apiError(429, "Rate Limit Exceeded") } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ provider: "postmark", limitType: "burst", minWaitMs: 3000, waitSource: "retry-after" });
  });

  it("ErrorCode 429 under another status is the same throttle", () => {
    const verdict = classify({ request: { method: "POST", url: SEND }, response: { status: 422, body: apiError(429, "Rate Limit Exceeded") } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst" });
  });

  it("422 ErrorCode 406, an inactive recipient, is final and says which code", () => {
    const verdict = classify({ request: { method: "POST", url: SEND }, response: { status: 422, body: apiError(406, "You tried to send email to a recipient that has been marked as inactive.") } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ provider: "postmark", throttled: false, retryable: false, limitType: "validation", minWaitMs: null });
    expect(verdict.reason).toContain("ErrorCode 406");
  });

  it("422 ErrorCode 405, out of credits, is a quota: not retried in this run, no wait", () => {
    const verdict = classify({ request: { method: "POST", url: SEND }, response: { status: 422, body: apiError(405, "Not allowed to send") } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: null, scope: { limit: "credits" } });
  });

  it("ErrorCode 100, maintenance, and a 500 are transient server failures, retried", () => {
    const maintenance = classify({ request: { method: "GET", url: "https://api.postmarkapp.com/deliverystats" }, response: { status: 503, body: apiError(100, "Maintenance") } }, { nowMs: NOW });
    expect(maintenance).toMatchObject({ throttled: false, retryable: true, limitType: "server" });
    const failure = classify({ request: { method: "POST", url: SEND }, response: { status: 500, body: "" } }, { nowMs: NOW });
    expect(failure).toMatchObject({ provider: "postmark", throttled: false, retryable: true, limitType: "server", writeNotProcessed: false });
  });

  it("a 401 (ErrorCode 10) is an access error, final", () => {
    const verdict = classify({ request: { method: "POST", url: SEND }, response: { status: 401, body: apiError(10, "Bad or missing API token") } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ provider: "postmark", throttled: false, retryable: false, limitType: "permission" });
  });

  it("a 200 is no throttle and shows no budget (Postmark sends no rate-limit headers)", () => {
    const verdict = classify({ request: { method: "POST", url: SEND }, response: { status: 200, body: sent } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ provider: "postmark", throttled: false, limitType: "none", budget: null });
  });
});

describe("Postmark through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 with no wait given backs off once, then the email is sent", async () => {
    const server = await servers.start([
      { status: 429, body: apiError(429, "Rate Limit Exceeded") },
      { status: 200, body: sent },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "postmark", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/email", data: { From: "sender@example.com", To: "receiver@example.com", Subject: "Hello", TextBody: "Hi" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("postmark");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429 });
    expect(result.attempts[0]!.waitMs).toBeGreaterThan(0);
    expect(clock.nowMs() - start).toBeGreaterThan(0);
  });

  it("a 429 with a Retry-After waits it, then the call goes through", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "4" }, body: apiError(429, "Rate Limit Exceeded") },
      { status: 200, body: sent },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "postmark", clock });
    const result = await client.request({ method: "POST", url: "/email", data: { From: "sender@example.com", To: "receiver@example.com", Subject: "Hello", TextBody: "Hi" } });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(4000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(6000);
  });

  it("422 ErrorCode 406 (inactive recipient) is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 422, body: apiError(406, "You tried to send email to a recipient that has been marked as inactive.") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "postmark", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/email", data: { From: "sender@example.com", To: "bounced@example.com", Subject: "Hello", TextBody: "Hi" } });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "postmark", limitType: "validation", retryable: false });
  });

  it("422 ErrorCode 405 (out of credits) is not retried in this run: one call", async () => {
    const server = await servers.start([{ status: 422, body: apiError(405, "Not allowed to send") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "postmark", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/email", data: { From: "sender@example.com", To: "receiver@example.com", Subject: "Hello", TextBody: "Hi" } });
    expect(result.outcome).not.toBe("success");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "postmark", limitType: "quota", retryable: false });
  });
});
