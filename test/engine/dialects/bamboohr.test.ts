import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://documentation.bamboohr.com/docs/planned-changes-to-the-api (429 with Retry-After since 16 Sep 2026; 503 = unavailable)
// https://documentation.bamboohr.com/docs/api-details (503 when throttled; 429 "Limit Exceeded": the employee limit)
const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const GATEWAY = "https://api.bamboohr.com/api/gateway.php/acme/v1";
const read = (url: string, status: number, headers: Record<string, string> = {}, method = "GET") => classify({ request: { method, url }, response: { status, headers, body: "" } }, { nowMs: NOW_MS });

describe("BambooHR's hosts and its 429s", () => {
  it.each([`${GATEWAY}/employees/directory`, "https://acme.bamboohr.com/api/v1/employees/123"])("%s is BambooHR's; a 429 with Retry-After is the rate limit, waited for it", (url) => {
    expect(read(url, 429, { "retry-after": "30" })).toMatchObject({ provider: "bamboohr", throttled: true, retryable: true, limitType: "burst", minWaitMs: 30_000, waitSource: "retry-after" });
  });

  it("a 429 on adding an employee with no Retry-After is the company's employee limit: final, and no throttle of other calls", () => {
    expect(read(`${GATEWAY}/employees/`, 429, {}, "POST")).toMatchObject({ throttled: false, retryable: false, limitType: "quota", minWaitMs: null });
  });

  it("X-BambooHR-Error-Message naming employees tells the employee limit, under its misspelled name too", () => {
    const verdict = read(`${GATEWAY}/employees`, 429, { "x-bamboohr-error-messsage": "The company has reached its employee limit" }, "POST");
    expect(verdict).toMatchObject({ throttled: false, retryable: false, limitType: "quota" });
    expect(verdict.reason).toMatch(/employee limit/);
  });

  it("a 429 with no Retry-After on any other request is a rate limit that named no wait: backed off", () => {
    expect(read(`${GATEWAY}/employees/123`, 429)).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: null });
    expect(read(`${GATEWAY}/employees/123/time_off/request`, 429, {}, "PUT")).toMatchObject({ throttled: true, limitType: "burst" });
  });
});

describe("BambooHR's 503s and final answers", () => {
  it("a 503 with Retry-After (the old rate limit, or the API unavailable) holds for its wait", () => {
    expect(read(`${GATEWAY}/reports/custom`, 503, { "retry-after": "60" }, "POST")).toMatchObject({ throttled: true, retryable: true, limitType: "server", minWaitMs: 60_000, waitSource: "retry-after" });
  });

  it("a 503 with no Retry-After is retried with backoff, holding back no other call", () => {
    expect(read(`${GATEWAY}/employees/directory`, 503)).toMatchObject({ throttled: false, retryable: true, limitType: "server", minWaitMs: null });
  });

  it("401 and 403 are access errors, final", () => {
    expect(read(`${GATEWAY}/meta/fields`, 401)).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    expect(read(`${GATEWAY}/employees/123/tables/compensation`, 403, { "x-bamboohr-error-message": "You do not have access to this field" })).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
  });
});

describe("BambooHR, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 waits its Retry-After, then the employee is read", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "5" }, body: "" },
      { status: 200, body: { id: "123", firstName: "Ada", lastName: "Lovelace" } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "bamboohr", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/api/gateway.php/acme/v1/employees/123?fields=firstName,lastName" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("bamboohr");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(5000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(5000);
  });

  it("a 503 with Retry-After is waited out, then the report comes", async () => {
    const server = await servers.start([
      { status: 503, headers: { "retry-after": "20" }, body: "Service Unavailable" },
      { status: 200, body: { title: "Headcount", employees: [] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "bamboohr", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/api/gateway.php/acme/v1/reports/101?format=JSON" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 503, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(20_000);
  });

  it("the employee limit's 429 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 429, body: "" }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "bamboohr", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/api/gateway.php/acme/v1/employees/", data: { firstName: "Grace", lastName: "Hopper" } });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "bamboohr", limitType: "quota", throttled: false, retryable: false });
  });

  it("a 403 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: { "x-bamboohr-error-message": "You do not have access to this field" }, body: "" }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "bamboohr", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/api/gateway.php/acme/v1/employees/123/tables/compensation" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "bamboohr", limitType: "permission", retryable: false });
  });
});
