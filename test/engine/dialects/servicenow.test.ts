import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://www.servicenow.com/docs/r/xanadu/api-reference/rest-api-explorer/inbound-REST-API-rate-limiting.html (rule headers, 429 body)
// https://support.servicenow.com/kb?id=kb_article_view&sysparm_article=KB1297438 (429 of a full semaphore queue; 500 of a cancelled transaction)
const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const NOW_S = NOW_MS / 1000;
const SERVER_DATE = "Mon, 30 Nov 2026 12:00:00 GMT";
const RULE_ID = "b0a4d5e1db7c1010f9e2a8f3ca96191c";
const ruleHeaders = (limit: number, resetInS: number) => ({ date: SERVER_DATE, "x-ratelimit-limit": String(limit), "x-ratelimit-reset": String(NOW_S + resetInS), "x-ratelimit-rule": RULE_ID });
const RULE_SPENT = { error: { message: "Rate limit exceeded", detail: "Rate limit of 10 requests per hour for Table API exceeded" }, status: "failure" };
const read = (method: string, url: string, status: number, headers: Record<string, string>, body: unknown) => classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW_MS });

describe("ServiceNow's hosts and scopes", () => {
  it("any instance's subdomain of service-now.com is ServiceNow's", () => {
    expect(read("GET", "https://acme.service-now.com/api/now/table/incident", 429, {}, "").provider).toBe("servicenow");
    expect(read("GET", "https://dev12345.service-now.com/api/now/table/incident", 429, {}, "").provider).toBe("servicenow");
    expect(read("GET", "https://servicenow.example.com/api/now/table/incident", 429, {}, "").provider).toBe("generic");
  });

  it.each([
    ["https://acme.service-now.com/api/now/table/incident?sysparm_limit=1", "now/table"],
    ["https://acme.service-now.com/api/now/v2/table/incident/9d385017c611228701d22104cc95c371", "now/table"],
    ["https://acme.service-now.com/api/now/attachment/file?table_name=incident", "now/attachment"],
    ["https://acme.service-now.com/api/now/import/u_staging_users", "now/import"],
    ["https://acme.service-now.com/api/sn_sc/servicecatalog/items", "sn_sc/servicecatalog"],
    ["https://acme.service-now.com/api/x_acme_hr/v1/onboarding/start", "x_acme_hr/onboarding"],
    ["https://acme.service-now.com/oauth_token.do", "/oauth_token.do"],
  ])("%s calls the %s REST API", (url, api) => {
    expect(requestScopeFor({ request: { method: "GET", url } })).toEqual({ api });
  });
});

describe("ServiceNow's answers, read", () => {
  it("a rule's 429 is an hourly quota, not retried, waiting the later of Retry-After and the epoch reset", () => {
    const verdict = read("GET", "https://acme.service-now.com/api/now/table/incident", 429, { ...ruleHeaders(10, 1200), "retry-after": "1190" }, RULE_SPENT);
    expect(verdict).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: 1_200_000, waitSource: "x-ratelimit-reset", scope: { api: "now/table", rule: RULE_ID } });
    expect(verdict.budget).toMatchObject({ remaining: 0, limit: 10, resetAt: "2026-11-30T12:20:00.000Z" });
  });

  it("a rule's 429 known only by its message waits an hour at the latest", () => {
    const verdict = read("POST", "https://acme.service-now.com/api/now/table/incident", 429, {}, RULE_SPENT);
    expect(verdict).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: 3_600_000, waitSource: "doc:hourly-reset-within-1h", budget: null });
  });

  it("a 429 with none of a rule's signals is the full semaphore queue: requests in flight, the whole instance's", () => {
    const verdict = read("POST", "https://acme.service-now.com/api/now/table/incident", 429, {}, "Too Many Requests");
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "concurrency", minWaitMs: null, writeNotProcessed: true, scope: {} });
  });

  it("a success matched by a rule shows no budget (no remaining count is documented) and is quiet", () => {
    const verdict = read("GET", "https://acme.service-now.com/api/now/table/incident", 200, ruleHeaders(10, 1800), { result: [] });
    expect(verdict).toMatchObject({ throttled: false, retryable: false, limitType: "none", budget: null, ignored: [] });
  });

  it("a transaction quota rule's cancellation is no throttle: 200 is a success, 500 a server failure retried", () => {
    const cancelled = { error: { message: "Transaction cancelled: maximum execution time exceeded", detail: "Transaction cancelled: maximum execution time exceeded Check logs for error trace or enable glide.rest.debug property to verify REST request processing" }, status: "failure" };
    expect(read("GET", "https://acme.service-now.com/api/now/table/sys_audit", 500, {}, cancelled)).toMatchObject({ throttled: false, retryable: true, limitType: "server", writeNotProcessed: true });
    expect(read("GET", "https://acme.service-now.com/api/now/table/sys_audit", 200, {}, cancelled)).toMatchObject({ throttled: false, limitType: "none" });
  });

  it("403 beside a rule's headers is an access error, final", () => {
    const verdict = read("DELETE", "https://acme.service-now.com/api/now/table/incident/1", 403, ruleHeaders(10, 1800), { error: { message: "Operation Failed", detail: "ACL Exception Delete Failed due to security constraints" }, status: "failure" });
    expect(verdict).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
  });
});

describe("ServiceNow's 429s, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a full semaphore queue is backed off once, then the record is created", async () => {
    const server = await servers.start([
      { status: 429, body: "Too Many Requests" },
      { status: 201, body: { result: { sys_id: "9d385017c611228701d22104cc95c371" } } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "servicenow", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/api/now/table/incident", data: { short_description: "Printer on fire" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("servicenow");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]!.status).toBe(429);
    expect(result.attempts[0]!.waitMs).toBeGreaterThan(0);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(result.attempts[0]!.waitMs);
    expect(result.verdict).toMatchObject({ provider: "servicenow", throttled: false });
  });

  it("a rule's spent hour is deferred to X-RateLimit-Reset after one call, and holds back that REST API only", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 429, headers: { ...ruleHeaders(10, 1500), "retry-after": "1500" }, body: RULE_SPENT },
      { status: 200, headers: { date: SERVER_DATE }, body: { result: [] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "servicenow", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const start = clock.nowMs();
    const spent = await client.request({ method: "GET", url: "/api/now/table/incident" });
    expect(spent.outcome).toBe("deferred");
    expect(spent.attempts).toHaveLength(1);
    expect(Date.parse(spent.notBefore!) - start).toBeGreaterThanOrEqual(1_500_000);
    expect(spent.verdict).toMatchObject({ limitType: "quota", retryable: false });
    expect(await client.request({ method: "GET", url: "/api/now/attachment?table_name=incident" })).toMatchObject({ outcome: "success", slotWaitMs: 0 });
    const again = await client.request({ method: "GET", url: "/api/now/v2/table/problem" });
    expect(again.outcome).toBe("deferred");
    expect(again.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(2);
  });

  it("a 401 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 401, body: { error: { message: "User Not Authenticated", detail: "Required to provide Auth information" }, status: "failure" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "servicenow", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/api/now/table/incident" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "servicenow", limitType: "permission", retryable: false });
  });
});
