import { describe, expect, it } from "vitest";
import { classify } from "../../../src/engine";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const run = (status: number, headers: Record<string, string>, body: unknown = {}) =>
  classify(
    { request: { method: "POST", url: "https://discord.com/api/v10/guilds/42/members" }, response: { status, headers, body } },
    { nowMs: NOW },
  );

describe("discord dialect", () => {
  it("Reset-After longer than Retry-After on a user-scope 429 is the floor", () => {
    const v = run(429, { "Retry-After": "2", "X-RateLimit-Reset-After": "2.75", "X-RateLimit-Remaining": "0", "X-RateLimit-Scope": "user" }, { retry_after: 2.5 });
    expect(v).toMatchObject({ minWaitMs: 2750, waitSource: "x-ratelimit-reset-after", scope: { resource: "guilds/42", scope: "user" } });
  });

  it("a non-numeric body retry_after is ignored with a reason", () => {
    const v = run(429, { "Retry-After": "3" }, { retry_after: "soon", global: false });
    expect(v).toMatchObject({ minWaitMs: 3000, waitSource: "retry-after" });
    expect(v.ignored).toContainEqual({ signal: "body:retry_after", value: "soon", why: "not a non-negative number of seconds" });
  });

  it("a 403 is not a throttle", () => {
    expect(run(403, {}, { message: "Missing Permissions", code: 50013 })).toMatchObject({ throttled: false, limitType: "permission" });
  });
});
