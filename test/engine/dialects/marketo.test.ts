import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, writeRetrySafety } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

const url = "https://123-ABC-456.mktorest.com/rest/v1/leads.json";
const failure = (code: string | number, message: string) => ({ requestId: "e42b#14272d07d78", success: false, errors: [{ code, message }] });
const at = (iso: string) => ({ nowMs: Date.parse(iso) });

describe("marketo dialect edge cases", () => {
  it("is picked by the instance's host, and a plain 200 with success true is not throttled", () => {
    const v = classify({ request: { method: "GET", url }, response: { status: 200, body: { requestId: "x", result: [], success: true } } }, at("2026-11-30T12:00:00Z"));
    expect(v).toMatchObject({ provider: "marketo", throttled: false, limitType: "none" });
  });

  it("the daily reset is the next 06:00 UTC: at 06:00 exactly it is a day away, a minute before it a minute", () => {
    const quota = { request: { method: "GET", url }, response: { status: 200, body: failure("607", "Daily quota reached") } };
    expect(classify(quota, at("2026-12-01T06:00:00Z")).minWaitMs).toBe(86_400_000);
    expect(classify(quota, at("2026-12-01T05:59:00Z")).minWaitMs).toBe(60_000);
    expect(classify(quota, at("2026-07-01T00:00:00Z")).minWaitMs).toBe(6 * 3_600_000);
  });

  it("a POST answered 606 may be sent again without an idempotency key: the 6xx request was not executed", () => {
    const v = classify({ request: { method: "POST", url }, response: { status: 200, body: failure("606", "Max rate limit '100' exceeded with in '20' secs") } }, at("2026-11-30T12:00:00Z"));
    expect(writeRetrySafety({ method: "POST", body: { action: "createOnly", input: [{ email: "ada@example.com" }] } }, v)).toMatchObject({ repeatable: true, basis: "not-processed" });
  });

  it("a POST answered 1003 (an input error) is not read as a limit and not repeated", () => {
    const v = classify({ request: { method: "POST", url }, response: { status: 200, body: failure("1003", "Invalid filterType") } }, at("2026-11-30T12:00:00Z"));
    expect(v).toMatchObject({ throttled: false, retryable: false });
  });

  it("a 606 window other than the documented one is read from the message", () => {
    const v = classify({ request: { method: "GET", url }, response: { status: 200, body: failure("606", "Max rate limit '50' exceeded with in '10' secs") } }, at("2026-11-30T12:00:00Z"));
    expect(v).toMatchObject({ limitType: "burst", minWaitMs: 10_000, budget: { limit: 50, windowMs: 10_000 } });
  });

  it("success false with no errors array, or errors that are not objects, is no limit and does not throw", () => {
    for (const body of [{ success: false }, { success: false, errors: "606" }, { success: false, errors: [null, 606, { message: "no code" }] }]) {
      expect(classify({ request: { method: "GET", url }, response: { status: 200, body } }, at("2026-11-30T12:00:00Z"))).toMatchObject({ throttled: false });
    }
  });
});

describe("a Marketo throttle inside a 200, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 606 is retried after the window it names and the lead is written once; the flow sees the success, not the 200 failure", async () => {
    const server = await servers.start([
      { status: 200, body: failure("606", "Max rate limit '100' exceeded with in '20' secs") },
      { status: 200, body: { requestId: "y", success: true, result: [{ id: 50, status: "created" }] } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "marketo", clock });
    const result = await client.request({ method: "POST", url: "/rest/v1/leads.json", data: { action: "createOnly", input: [{ email: "ada@example.com" }] } });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 200, waitSource: "body:errors[].message" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(20_000);
  });

  it("a 607 is not retried in this run: the request is deferred to the daily reset, read on the server's clock", async () => {
    // The server's Date is an hour before 06:00 UTC; the local clock is elsewhere: the wait is the server's hour.
    const server = await servers.start([{ status: 200, headers: { date: "Tue, 01 Dec 2026 05:00:00 GMT" }, body: failure("607", "Daily quota reached") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "marketo", clock: virtualClock(), onLongWait: "defer" });
    const result = await client.request({ method: "GET", url: "/rest/v1/leads.json?filterType=id&filterValues=50" });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    expect(result.notBefore).toBe("2026-01-01T01:00:00.000Z");
  });
});
