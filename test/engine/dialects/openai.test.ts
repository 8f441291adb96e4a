import { describe, expect, it } from "vitest";
import { classify } from "../../../src/engine";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const run = (status: number, headers: Record<string, string>, body: unknown = {}) =>
  classify({ request: { method: "POST", url: "https://api.openai.com/v1/responses" }, response: { status, headers, body } }, { nowMs: NOW });

describe("openai dialect", () => {
  it("both dimensions spent: the later reset frees the request", () => {
    const v = run(429, {
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "20ms",
      "x-ratelimit-remaining-tokens": "0",
      "x-ratelimit-reset-tokens": "1m30s",
    });
    expect(v).toMatchObject({ minWaitMs: 90_000, waitSource: "x-ratelimit-reset-tokens" });
  });

  it("a malformed retry-after-ms is ignored and retry-after is used", () => {
    const v = run(429, { "retry-after-ms": "-5", "retry-after": "2" });
    expect(v).toMatchObject({ minWaitMs: 2000, waitSource: "retry-after" });
    expect(v.ignored.map((i) => i.signal)).toContain("retry-after-ms");
  });

  it("x-should-retry: true is obeyed even on insufficient_quota (openai-node src/client.ts shouldRetry: 'If the server explicitly says whether or not to retry, obey.')", () => {
    const v = run(429, { "x-should-retry": "true" }, { error: { type: "insufficient_quota", code: "insufficient_quota" } });
    expect(v).toMatchObject({ limitType: "quota", retryable: true, retryAllowed: true });
    expect(run(429, {}, { error: { type: "insufficient_quota", code: "insufficient_quota" } })).toMatchObject({ retryable: false, retryAllowed: null });
  });

  it("x-should-retry: false stops even a plain rate limit", () => {
    expect(run(429, { "x-should-retry": "false", "retry-after": "1" })).toMatchObject({ retryable: false, retryAllowed: false });
  });

  it("x-should-retry: true makes a 409 retryable", () => {
    const v = run(409, { "x-should-retry": "true" });
    expect(v).toMatchObject({ retryable: true, retryAllowed: true, throttled: false });
  });
});
