import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, writeRetrySafety } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/subsect_1559222360.html (REST web services: the account's concurrency limit)
// https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/bridgehead_1525252812.html (RESTlet 400 SSS_REQUEST_LIMIT_EXCEEDED, SOAP faults)
// https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_156570709583.html (o:errorDetails)
const NOW = { nowMs: Date.parse("2026-11-30T12:00:00Z") };
const restError = (status: number, title: string, code: string, detail: string) => ({ type: "https://www.rfc-editor.org/rfc/rfc9110.html", title, status, "o:errorDetails": [{ detail, "o:errorCode": code }] });
const restletLimit = { error: { code: "SSS_REQUEST_LIMIT_EXCEEDED", message: "Request limit exceeded." } };

describe("netsuite dialect edge cases", () => {
  it.each([
    "https://1234567.suitetalk.api.netsuite.com/services/rest/record/v1/customer",
    "https://1234567_SB1.suitetalk.api.netsuite.com/services/rest/query/v1/suiteql",
    "https://1234567.restlets.api.netsuite.com/app/site/hosting/restlet.nl?script=1&deploy=1",
  ])("a 429 from %s is the account's concurrency limit", (url) => {
    const v = classify({ request: { method: "POST", url }, response: { status: 429, body: "" } }, NOW);
    expect(v).toMatchObject({ provider: "netsuite", throttled: true, retryable: true, limitType: "concurrency", minWaitMs: null, scope: {} });
  });

  it("a REST web services 429 names its o:errorCode in the reason", () => {
    const v = classify({ request: { method: "GET", url: "https://1234567.suitetalk.api.netsuite.com/services/rest/record/v1/customer/107" }, response: { status: 429, body: restError(429, "Too Many Requests", "SOME_CODE", "Request blocked.") } }, NOW);
    expect(v).toMatchObject({ limitType: "concurrency" });
    expect(v.reason).toContain("SOME_CODE");
  });

  it("the concurrency codes are read from JSON, XML or text, and only on errors", () => {
    const url = "https://1234567.restlets.api.netsuite.com/app/site/hosting/restlet.nl?script=1&deploy=1";
    const read = (status: number, body: unknown) => classify({ request: { method: "POST", url }, response: { status, body } }, NOW);
    expect(read(400, restletLimit)).toMatchObject({ limitType: "concurrency", retryable: true });
    expect(read(400, "error code: SSS_REQUEST_LIMIT_EXCEEDED")).toMatchObject({ limitType: "concurrency" });
    expect(read(500, "<faultstring>x</faultstring><code>WS_CONCUR_SESSION_DISALLWD</code>")).toMatchObject({ limitType: "concurrency" });
    // A RESTlet that returns a value naming the code on a 200 is a success, not a throttle.
    expect(read(200, { note: "SSS_REQUEST_LIMIT_EXCEEDED" })).toMatchObject({ throttled: false, limitType: "none" });
    // Other SuiteScript errors stay final.
    expect(read(400, { error: { code: "SSS_MISSING_REQD_ARGUMENT", message: "Missing a required argument: id" } })).toMatchObject({ throttled: false, retryable: false, limitType: "validation" });
  });

  it("a POST refused by a RESTlet's 400 SSS_REQUEST_LIMIT_EXCEEDED may be sent again: a throttle refusal", () => {
    const v = classify({ request: { method: "POST", url: "https://1234567.restlets.api.netsuite.com/app/site/hosting/restlet.nl?script=1&deploy=1" }, response: { status: 400, body: restletLimit } }, NOW);
    expect(writeRetrySafety({ method: "POST", body: { id: 1 } }, v)).toMatchObject({ repeatable: true, basis: "throttle-refusal" });
  });
});

describe("NetSuite's concurrency governance, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a REST web services 429 is retried with backoff and the record is read", async () => {
    const server = await servers.start([
      { status: 429, body: "" },
      { status: 200, body: { id: "107", companyName: "Acme Ltd" } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "netsuite", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/services/rest/record/v1/customer/107" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("netsuite");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429 });
  });

  it("a RESTlet POST answered 400 SSS_REQUEST_LIMIT_EXCEEDED is sent again and goes through", async () => {
    const server = await servers.start([
      { status: 400, body: restletLimit },
      { status: 200, body: { ok: true } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "netsuite", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/app/site/hosting/restlet.nl?script=1341&deploy=1", data: { id: 1 } });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 400 });
  });

  it("a 400 USER_ERROR is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 400, body: restError(400, "Bad Request", "USER_ERROR", "Please enter value(s) for: Company Name.") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "netsuite", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/services/rest/record/v1/customer", data: {} });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "netsuite", limitType: "validation", retryable: false });
  });
});
