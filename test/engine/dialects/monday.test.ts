import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

const nowMs = Date.parse("2026-11-30T12:00:00Z");
const url = "https://api.monday.com/v2";

describe("monday dialect edge cases", () => {
  it("of a Retry-After and retry_in_seconds, the longer is the wait", () => {
    const body = { errors: [{ message: "Rate Limit Exceeded", extensions: { code: "RATE_LIMIT_EXCEEDED", retry_in_seconds: 45 } }] };
    const v = classify({ request: { method: "POST", url }, response: { status: 429, headers: { "retry-after": "30" }, body } }, { nowMs });
    expect(v).toMatchObject({ minWaitMs: 45_000, waitSource: "body:retry_in_seconds" });
  });

  it("errors that are strings, nulls or codes of no limit are no throttle and never throw", () => {
    for (const body of [{ errors: [null, 7, "boom"] }, { errors: "COMPLEXITY_BUDGET_EXHAUSTED" }, { error_code: "InvalidArgumentException", error_message: "bad" }]) {
      expect(classify({ request: { method: "POST", url }, response: { status: 200, body } }, { nowMs })).toMatchObject({ throttled: false });
    }
  });
});

describe("a monday.com complexity limit inside a 200, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a mutation is sent again after retry_in_seconds, and the item the flow gets is the created one", async () => {
    const server = await servers.start([
      { status: 200, body: { errors: [{ message: "Complexity budget exhausted", extensions: { code: "COMPLEXITY_BUDGET_EXHAUSTED", retry_in_seconds: 7 } }], account_id: 1 } },
      { status: 200, body: { data: { create_item: { id: "42" } }, account_id: 1 } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "monday", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/v2", data: { query: 'mutation { create_item (board_id: 1, item_name: "x") { id } }' } });
    expect(result.outcome).toBe("success");
    expect(result.data).toMatchObject({ data: { create_item: { id: "42" } } });
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(7000);
  });
});
