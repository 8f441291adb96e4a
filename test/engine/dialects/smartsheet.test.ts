import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developers.smartsheet.com/blog/smartsheet-api-best-practices (300 requests per minute per token)
// https://github.com/smartsheet/smartsheet-python-sdk/blob/mainline/smartsheet/smartsheet.py (the retried errorCodes)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const RATE_LIMIT = { errorCode: 4003, message: "Rate limit exceeded.", refId: "exlxshtxlpl8" };

describe("Smartsheet's hosts", () => {
  it.each(["api.smartsheet.com", "api.smartsheet.eu", "api.smartsheetgov.com"])("%s is Smartsheet's, and a 4003 waits the documented minute", (host) => {
    const verdict = classify({ request: { method: "GET", url: `https://${host}/2.0/sheets` }, response: { status: 429, body: RATE_LIMIT } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ provider: "smartsheet", throttled: true, retryable: true, limitType: "burst", minWaitMs: 60_000, waitSource: "doc:fixed-60s" });
  });
});

describe("Smartsheet errors, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 4003 waits the documented minute once, not a backoff from half a second inside it, then the rows are added", async () => {
    const server = await servers.start([
      { status: 429, body: RATE_LIMIT },
      { status: 200, body: { message: "SUCCESS", resultCode: 0, result: [{ id: 7670198317672324 }] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "smartsheet", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/2.0/sheets/4583173393803140/rows", data: [{ toBottom: true, cells: [{ columnId: 7960873114331012, value: true }] }] });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("smartsheet");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "doc:fixed-60s" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(60_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(62_000);
  });

  it("a 403 1004 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, body: { errorCode: 1004, message: "You are not authorized to perform this action.", refId: "exlxshtxlpl8" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "smartsheet", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/2.0/sheets/4583173393803140" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "smartsheet", limitType: "permission", retryable: false });
  });

  it("a 500 4000 is final, unlike the 500 4004 that Smartsheet asks to retry", async () => {
    const server = await servers.start([
      { status: 500, body: { errorCode: 4004, message: "An unexpected error has occurred. Please retry your request. If you encounter this error repeatedly, please contact api@smartsheet.com for assistance." } },
      { status: 500, body: { errorCode: 4000, message: "An unexpected error has occurred. Please contact api@smartsheet.com for assistance." } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "smartsheet", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/2.0/workspaces" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(2);
    expect(result.verdict).toMatchObject({ provider: "smartsheet", retryable: false });
  });
});
