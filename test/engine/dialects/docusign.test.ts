import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developers.docusign.com/platform/resource-limits (X-RateLimit-*, X-BurstLimit-*, the top of the hour)
// https://developers.docusign.com/docs/esign-rest-api/esign101/rules-and-limits/ (the envelope limits)
// https://github.com/docusign/code-examples-node/blob/master/lib/eSignature/examples/envelopeInfo.js (reset in epoch seconds)
const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const NOW_S = NOW_MS / 1000;
const SERVER_DATE = "Mon, 30 Nov 2026 12:00:00 GMT";
const ACCOUNTS = "https://na3.docusign.net/restapi/v2.1/accounts";
const HOURLY = { errorCode: "HOURLY_APIINVOCATION_LIMIT_EXCEEDED", message: "The maximum number of hourly API invocations has been exceeded. The hourly limit is 3000." };
const BURST = { errorCode: "BURST_APIINVOCATION_LIMIT_EXCEEDED" };
const hour = (remaining: number, resetS: number, date = SERVER_DATE) => ({ date, "x-ratelimit-limit": "3000", "x-ratelimit-remaining": String(remaining), "x-ratelimit-reset": String(resetS) });
const burst = (remaining: number) => ({ "x-burstlimit-limit": "500", "x-burstlimit-remaining": String(remaining) });
const read = (url: string, status: number, headers: Record<string, string>, body?: unknown, method = "GET") => classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW_MS });

describe("Docusign's hosts and the account a request spends", () => {
  it.each(["demo.docusign.net", "na1.docusign.net", "na4.docusign.net", "eu.docusign.net", "au.docusign.net", "www.docusign.net"])("%s is Docusign's", (host) => {
    const verdict = read(`https://${host}/restapi/v2.1/accounts/1234567/envelopes`, 429, hour(0, NOW_S + 600), HOURLY);
    expect(verdict).toMatchObject({ provider: "docusign", throttled: true, retryable: false, limitType: "quota", minWaitMs: 600_000, waitSource: "x-ratelimit-reset" });
  });

  it("names the account from the path, so that two accounts' limits are two scopes, and agrees with its throttles", () => {
    const url = `${ACCOUNTS}/9C1B0B4A-5E6D-4F7A-8B9C-0D1E2F3A4B5C/envelopes/93be49ab/documents/1`;
    expect(requestScopeFor({ request: { method: "GET", url } })).toEqual({ account: "9c1b0b4a-5e6d-4f7a-8b9c-0d1e2f3a4b5c" });
    expect(read(url, 400, { ...hour(1200, NOW_S + 600), ...burst(0) }, BURST).scope).toEqual(requestScopeFor({ request: { method: "GET", url } }));
    expect(requestScopeFor({ request: { method: "GET", url: "https://demo.docusign.net/restapi/v2.1/" } })).toEqual({});
  });
});

describe("Docusign's hourly quota", () => {
  it("HOURLY_APIINVOCATION_LIMIT_EXCEEDED on a 400 is the quota too: the code decides, not the status", () => {
    const verdict = read(`${ACCOUNTS}/1234567/envelopes`, 400, hour(0, NOW_S + 1800), HOURLY, "POST");
    expect(verdict).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: 1_800_000, waitSource: "x-ratelimit-reset", scope: { account: "1234567" } });
    expect(verdict.budget).toMatchObject({ remaining: 0, limit: 3000, resetAt: "2026-11-30T12:30:00.000Z", windowMs: 3_600_000 });
  });

  it("X-RateLimit-Reset is epoch seconds, measured against the answer's Date", () => {
    const verdict = read(`${ACCOUNTS}/1234567/envelopes`, 429, hour(0, NOW_S + 900, "Mon, 30 Nov 2026 12:05:00 GMT"), HOURLY);
    expect(verdict).toMatchObject({ minWaitMs: 600_000, waitSource: "x-ratelimit-reset" });
  });

  it("a reset no epoch time can be (seconds left, as the blog words it) is read as seconds, and said so", () => {
    const verdict = read(`${ACCOUNTS}/1234567/envelopes`, 429, hour(0, 1500), HOURLY);
    expect(verdict).toMatchObject({ minWaitMs: 1_500_000, waitSource: "x-ratelimit-reset" });
    expect(verdict.deviations.join(" ")).toMatch(/seconds left/);
  });

  it("with no reset shown (or one already past), waits to the top of the next hour on the server's clock", () => {
    const bare = read(`${ACCOUNTS}/1234567/envelopes`, 429, { date: "Mon, 30 Nov 2026 12:45:30 GMT" }, HOURLY);
    expect(bare).toMatchObject({ limitType: "quota", retryable: false, minWaitMs: 870_000, waitSource: "doc:hourly-reset-top-of-hour" });
    const past = read(`${ACCOUNTS}/1234567/envelopes`, 400, hour(0, NOW_S - 5), HOURLY);
    expect(past).toMatchObject({ minWaitMs: 3_600_000, waitSource: "doc:hourly-reset-top-of-hour" });
  });

  it("the hourly message alone, or the code in an XML body, is read as the quota", () => {
    const byMessage = read(`${ACCOUNTS}/1234567/users`, 400, {}, { message: "The maximum number of hourly API invocations has been exceeded." });
    expect(byMessage).toMatchObject({ limitType: "quota", retryable: false });
    const xml = '<?xml version="1.0"?><errorDetails><errorCode>HOURLY_APIINVOCATION_LIMIT_EXCEEDED</errorCode><message>The maximum number of hourly API invocations has been exceeded.</message></errorDetails>';
    expect(read(`${ACCOUNTS}/1234567/users`, 400, {}, xml)).toMatchObject({ limitType: "quota", throttled: true });
  });

  it("a 429 with no code but X-RateLimit-Remaining 0 is the hour; with X-BurstLimit-Remaining 0 the burst; with neither, its Retry-After", () => {
    expect(read(`${ACCOUNTS}/1234567/users`, 429, hour(0, NOW_S + 60), {})).toMatchObject({ limitType: "quota", retryable: false, minWaitMs: 60_000 });
    expect(read(`${ACCOUNTS}/1234567/users`, 429, { ...hour(100, NOW_S + 60), ...burst(0) }, {})).toMatchObject({ limitType: "burst", retryable: true, minWaitMs: 30_000 });
    expect(read(`${ACCOUNTS}/1234567/users`, 429, { ...hour(100, NOW_S + 60), ...burst(40), "retry-after": "7" }, {})).toMatchObject({ limitType: "burst", minWaitMs: 7000, waitSource: "retry-after" });
  });
});

describe("Docusign's burst and envelope limits, and what stays final", () => {
  it("BURST_APIINVOCATION_LIMIT_EXCEEDED waits the 30-second window and shows the burst count", () => {
    const verdict = read(`${ACCOUNTS}/1234567/envelopes`, 400, { ...hour(2000, NOW_S + 600), ...burst(0) }, BURST);
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 30_000, waitSource: "doc:fixed-30s" });
    expect(verdict.budget).toMatchObject({ remaining: 0, limit: 500, source: "x-burstlimit-remaining", windowMs: 30_000 });
  });

  it("a success shows the hour as its budget, and the burst window while that is spent", () => {
    expect(read(`${ACCOUNTS}/1234567/envelopes`, 200, { ...hour(2995, NOW_S + 600), ...burst(480) }).budget).toMatchObject({ remaining: 2995, limit: 3000, source: "x-ratelimit-remaining" });
    expect(read(`${ACCOUNTS}/1234567/envelopes`, 200, { ...hour(2995, NOW_S + 600), ...burst(0) }).budget).toMatchObject({ remaining: 0, limit: 500, source: "x-burstlimit-remaining" });
  });

  it.each([
    ["Hourly_Envelope_Polling_Limit_Exceeded", "GET", "quota", 3_600_000],
    ["HOURLY_APIINVOCATION_ENVELOPE_LIMIT_EXCEEDED", "PUT", "quota", 3_600_000],
    ["Burst_Envelope_Polling_Limit_Exceeded", "GET", "burst", 30_000],
    ["Burst_APIInvocation_Envelope_Limit_Exceeded", "PUT", "burst", 30_000],
  ])("%s holds back that envelope only: retryable, not a throttle of the account", (errorCode, method, limitType, waitMs) => {
    const verdict = read(`${ACCOUNTS}/1234567/envelopes/AB12CD34-0000/recipients`, 400, {}, { errorCode }, method);
    expect(verdict).toMatchObject({ throttled: false, retryable: true, limitType, minWaitMs: waitMs, scope: { account: "1234567", envelope: "ab12cd34-0000" } });
  });

  it("a 403 while the hour shows 0 left is an access error; a 400 with another code is a bad request", () => {
    expect(read(`${ACCOUNTS}/1234567/users`, 403, hour(0, NOW_S + 600), { errorCode: "USER_LACKS_PERMISSIONS" })).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    expect(read(`${ACCOUNTS}/1234567/envelopes`, 400, hour(10, NOW_S + 600), { errorCode: "INVALID_REQUEST_PARAMETER" }, "POST")).toMatchObject({ throttled: false, retryable: false, limitType: "validation" });
  });
});

describe("Docusign's limits, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a BURST_APIINVOCATION_LIMIT_EXCEEDED 400 waits the 30-second window, then the envelope is created", async () => {
    const server = await servers.start([
      { status: 400, headers: { ...hour(2000, NOW_S + 600), ...burst(0) }, body: BURST },
      { status: 201, headers: { ...hour(1999, NOW_S + 600), ...burst(499) }, body: { envelopeId: "93be49ab", status: "sent" } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "docusign", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/restapi/v2.1/accounts/1234567/envelopes", data: { status: "sent" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("docusign");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 400, waitSource: "doc:fixed-30s" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(30_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(32_000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(30_000);
  });

  it("a spent hour is deferred to X-RateLimit-Reset after one call, holds back that account's next call, not another account's", async () => {
    const clock = virtualClock();
    const date = new Date(clock.nowMs()).toUTCString();
    const resetS = clock.nowMs() / 1000 + 1200;
    const server = await servers.start([
      (req) =>
        req.url.includes("/accounts/1234567/")
          ? { status: 429, headers: hour(0, resetS, date), body: HOURLY }
          : { status: 200, headers: hour(2500, resetS, date), body: { users: [] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "docusign", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const first = await client.request({ method: "GET", url: "/restapi/v2.1/accounts/1234567/envelopes?from_date=2026-01-01" });
    expect(first.outcome).toBe("deferred");
    expect(first.notBefore).toBe(new Date(resetS * 1000).toISOString());
    expect(server.calls).toHaveLength(1);
    const other = await client.request({ method: "GET", url: "/restapi/v2.1/accounts/7654321/users" });
    expect(other).toMatchObject({ outcome: "success", slotWaitMs: 0 });
    const again = await client.request({ method: "GET", url: "/restapi/v2.1/accounts/1234567/users" });
    expect(again.outcome).toBe("deferred");
    expect(again.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(2);
  });

  it("a 403 USER_LACKS_PERMISSIONS is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: hour(0, NOW_S + 600), body: { errorCode: "USER_LACKS_PERMISSIONS", message: "This user lacks sufficient permissions to access this resource." } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "docusign", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/restapi/v2.1/accounts/1234567/users" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "docusign", limitType: "permission", retryable: false });
  });
});
