import { describe, expect, it } from "vitest";
import { applyWriteSafety, classify, DEFAULT_POLICY, plan, writeRetrySafety } from "../../src/engine";
import type { Verdict, WriteSafetyRequest } from "../../src/engine";

const NOW = Date.parse("2026-11-30T12:00:00Z");

function answer(url: string, status: number, headers: Record<string, string> = {}, body?: unknown, method = "POST"): Verdict {
  return classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW });
}

/** What the client will do: plan, then the write-safety guard. */
function decide(request: WriteSafetyRequest, verdict: Verdict | null, retryWritesAfterThrottle = true) {
  const safety = writeRetrySafety(request, verdict, { retryWritesAfterThrottle });
  const planned = verdict ? plan(verdict, { attempts: 1, firstAttemptAtMs: NOW }, DEFAULT_POLICY, { nowMs: NOW, random: () => 0.5 }) : null;
  return { safety, decision: planned ? applyWriteSafety(planned, safety) : null };
}

const post: WriteSafetyRequest = { method: "POST" };

describe("writeRetrySafety: may a non-idempotent request be repeated (RFC 9110 §9.2.2)?", () => {
  it("issue 10: a POST on a plain 429 is retried, because a rate limiter's 429 refused it (RFC 6585 §4)", () => {
    const { safety, decision } = decide(post, answer("https://api.example.test/orders", 429, { "Retry-After": "2" }));
    expect(safety).toMatchObject({ repeatable: true, basis: "throttle-refusal" });
    expect(decision).toMatchObject({ decision: "retry", waitMs: expect.any(Number) });
  });

  it("the same 429 is not retried when the caller turns throttle write retries off", () => {
    const { safety, decision } = decide(post, answer("https://api.example.test/orders", 429, { "Retry-After": "2" }), false);
    expect(safety).toMatchObject({ repeatable: false, basis: "throttle-retry-off" });
    expect(decision).toMatchObject({ decision: "fail", reason: expect.stringMatching(/^Not repeated: .*turned off/) });
  });

  it.each([
    ["GitHub's rate-limit 403", answer("https://api.github.com/repos/o/r/issues", 403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW / 1000 + 30) }, { message: "API rate limit exceeded" })],
    ["a GitHub secondary limit", answer("https://api.github.com/repos/o/r/issues", 403, { "retry-after": "30" }, { message: "You have exceeded a secondary rate limit." })],
    ["Slack's 200 ok:false ratelimited", answer("https://slack.com/api/chat.postMessage", 200, { "Retry-After": "1" }, { ok: false, error: "ratelimited" })],
    ["Shopify GraphQL THROTTLED on 200 (documented as not executed)", answer("https://s.myshopify.com/admin/api/2025-01/graphql.json", 200, {}, { errors: [{ extensions: { code: "THROTTLED" } }], extensions: { cost: { requestedQueryCost: 10, throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 0, restoreRate: 50 } } } })],
    ["Twilio 20429 (documented as never processed)", answer("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages.json", 429, {}, { code: 20429 })],
    ["a 413 with Retry-After (a refusal, RFC 9110 §15.5.14)", answer("https://api.example.test/upload", 413, { "Retry-After": "5" })],
  ])("a write answered by %s may be repeated", (_label, verdict) => {
    expect(decide(post, verdict).safety.repeatable).toBe(true);
  });

  it.each([
    ["a plain 503", answer("https://api.example.test/orders", 503), "ambiguous", /503 is ambiguous/],
    ["a 503 'overloaded' with Retry-After", answer("https://api.example.test/orders", 503, { "Retry-After": "3" }), "ambiguous", /503 is ambiguous/],
    ["Anthropic's 529 overloaded_error", answer("https://api.anthropic.com/v1/messages", 529, { "retry-after": "3" }, { type: "error", error: { type: "overloaded_error" } }), "ambiguous", /529/],
    ["a 500", answer("https://api.example.test/orders", 500), "ambiguous", /500/],
    ["a Stripe 429 lock_timeout (contention, not a rate limiter)", answer("https://api.stripe.com/v1/charges", 429, {}, { error: { code: "lock_timeout" } }), "ambiguous", /not a throttle/],
  ])("a write answered by %s is not repeated without a key", (_label, verdict, basis, reason) => {
    const { safety, decision } = decide(post, verdict);
    expect(safety).toMatchObject({ repeatable: false, basis });
    expect(safety.reason).toMatch(reason);
    expect(decision?.decision).toBe("fail");
  });

  it("no response (timeout, dropped connection) is never repeated without a key", () => {
    expect(writeRetrySafety(post, null)).toMatchObject({ repeatable: false, basis: "no-response" });
    expect(writeRetrySafety({ method: "PATCH" }, null).reason).toMatch(/may have executed the PATCH/);
  });

  it("an idempotency key makes any answer repeatable; a blank one is not a key", () => {
    const failure = answer("https://api.example.test/orders", 503);
    expect(writeRetrySafety({ method: "POST", idempotencyKey: "order-42" }, failure)).toMatchObject({ repeatable: true, basis: "idempotency-key" });
    expect(writeRetrySafety({ method: "POST", headers: { "Idempotency-Key": "order-42" } }, null)).toMatchObject({ repeatable: true, basis: "idempotency-key" });
    expect(writeRetrySafety({ method: "POST", headers: { "Idempotency-Key": " " } }, failure)).toMatchObject({ repeatable: false });
    expect(writeRetrySafety({ method: "POST", idempotencyKey: "   " }, failure)).toMatchObject({ repeatable: false });
  });

  it("idempotent methods are always repeatable; unknown methods are treated as writes", () => {
    for (const method of ["GET", "head", "OPTIONS", "PUT", "DELETE", "TRACE"]) {
      expect(writeRetrySafety({ method }, null)).toMatchObject({ repeatable: true, basis: "idempotent-method" });
    }
    expect(writeRetrySafety({ method: "PURGE" }, null).repeatable).toBe(false);
  });

  it("a GraphQL query sent as POST is a read; a mutation is not", () => {
    const failure = answer("https://api.example.test/graphql", 503);
    expect(writeRetrySafety({ method: "POST", body: { query: "{ shop { name } }" } }, failure)).toMatchObject({ repeatable: true, basis: "graphql-query" });
    expect(writeRetrySafety({ method: "POST", body: { query: '{ a(x: "#") } mutation { b }' } }, failure).repeatable).toBe(false);
  });

  it("leaves decisions that send nothing again unchanged, and guards a deferral (a flow retry repeats the write)", () => {
    const unsafe = writeRetrySafety(post, answer("https://api.example.test/orders", 503));
    expect(applyWriteSafety({ decision: "done", reason: "ok" }, unsafe)).toEqual({ decision: "done", reason: "ok" });
    expect(applyWriteSafety({ decision: "defer", waitMs: 1, notBefore: "2026-11-30T12:00:00.001Z", reason: "later" }, unsafe)).toMatchObject({ decision: "fail", notBefore: "2026-11-30T12:00:00.001Z" });
  });
});
