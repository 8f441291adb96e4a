import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

const nowMs = Date.parse("2026-11-30T12:00:00Z");
const url = "https://graph.facebook.com/v21.0/me/accounts";
const graphError = (code: number, message: string, extra: Record<string, unknown> = {}) => ({ error: { message, type: "OAuthException", code, fbtrace_id: "x", ...extra } });

describe("meta dialect edge cases", () => {
  it("an ordinary 400 (#100 invalid parameter) stays an invalid request, not a throttle", () => {
    const v = classify({ request: { method: "GET", url }, response: { status: 400, body: graphError(100, "(#100) Invalid parameter") } }, { nowMs });
    expect(v).toMatchObject({ provider: "meta", throttled: false, retryable: false });
  });

  it("usage headers that are JSON but not objects, or too long, are listed as unreadable and never throw", () => {
    for (const value of ["[1,2]", "null", "7", `{"a":"${"x".repeat(9000)}"}`]) {
      const v = classify({ request: { method: "GET", url }, response: { status: 400, headers: { "x-business-use-case-usage": value }, body: graphError(80001, "(#80001) There have been too many calls to this Page account.") } }, { nowMs });
      expect(v).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: null });
      expect(v.ignored.map((s) => s.signal)).toContain("x-business-use-case-usage");
    }
  });

  it("a zero estimated_time_to_regain_access gives no wait (back off), not a wait of zero", () => {
    const headers = { "x-business-use-case-usage": JSON.stringify({ 1: [{ type: "pages", call_count: 100, total_cputime: 5, total_time: 5, estimated_time_to_regain_access: 0 }] }) };
    const v = classify({ request: { method: "GET", url }, response: { status: 400, headers, body: graphError(80001, "(#80001) too many calls") } }, { nowMs });
    expect(v).toMatchObject({ throttled: true, minWaitMs: null, scope: { limit: "pages" } });
  });
});

describe("a Meta throttle in a 400, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("(#4) is retried, not given up as an invalid request, and the Page post is sent again without an idempotency key", async () => {
    const server = await servers.start([
      { status: 400, headers: { "x-app-usage": '{"call_count":100,"total_time":10,"total_cputime":10}' }, body: graphError(4, "(#4) Application request limit reached", { is_transient: true }) },
      { status: 200, body: { id: "1234567890_987654321" } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "meta", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/v21.0/1234567890/feed", data: { message: "hello" } });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 400 });
  });

  it("an ads_insights limit with 7 minutes to regain access is deferred past the inline limit, with its not_before", async () => {
    const headers = { "x-business-use-case-usage": JSON.stringify({ 123: [{ type: "ads_insights", call_count: 100, total_cputime: 20, total_time: 30, estimated_time_to_regain_access: 7 }] }) };
    const server = await servers.start([{ status: 400, headers, body: graphError(80000, "(#80000) There have been too many calls from this ad-account.") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "meta", clock: virtualClock(), onLongWait: "defer" });
    const result = await client.request({ method: "GET", url: "/v21.0/act_123/insights" });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    expect(result.notBefore).toBe("2026-01-01T00:07:00.000Z");
  });
});
