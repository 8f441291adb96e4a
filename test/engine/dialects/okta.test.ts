import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developer.okta.com/docs/reference/rl-best-practices/ (headers, concurrent values)
// https://developer.okta.com/docs/reference/rl-global-mgmt/ (the buckets per endpoint)
const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const NOW_S = NOW_MS / 1000;
const SERVER_DATE = "Mon, 30 Nov 2026 12:00:00 GMT";
const E0000047 = { errorCode: "E0000047", errorSummary: "API call exceeded rate limit due to too many requests.", errorLink: "E0000047", errorId: "oaeJacBsJ0pQES61B_uegmlzA", errorCauses: [] };
const bucket = (limit: number, remaining: number, resetInS: number) => ({
  date: SERVER_DATE,
  "x-rate-limit-limit": String(limit),
  "x-rate-limit-remaining": String(remaining),
  "x-rate-limit-reset": String(NOW_S + resetInS),
});
const scopeOf = (method: string, url: string) => requestScopeFor({ request: { method, url } });

describe("an Okta request's scope: its documented endpoint bucket, known before it is sent", () => {
  it.each([
    ["GET", "https://acme.okta.com/api/v1/users?limit=200", "/api/v1/users"],
    ["POST", "https://acme.okta.com/api/v1/users?activate=true", "/api/v1/users"],
    ["GET", "https://acme.okta.com/api/v1/users/00ub0oNGTSWTBKOLGLNR", "/api/v1/users/{idOrLogin}"],
    ["GET", "https://acme.okta.com/api/v1/users/isaac.brock@example.com", "/api/v1/users/{idOrLogin}"],
    ["POST", "https://acme.okta.com/api/v1/users/00ub0oNGTSWTBKOLGLNR", "/api/v1/users/{id}"],
    ["DELETE", "https://acme.okta.com/api/v1/users/00ub0oNGTSWTBKOLGLNR/", "/api/v1/users/{id}"],
    ["POST", "https://acme.okta.com/api/v1/users/00ub0oNGTSWTBKOLGLNR/lifecycle/activate", "/api/v1"],
    ["GET", "https://acme.okta.com/api/v1/apps", "/api/v1/apps"],
    ["GET", "https://acme.okta.com/api/v1/apps/0oa1gjh63g214q0Hq0g4", "/api/v1/apps/{id}"],
    ["GET", "https://acme.okta.com/api/v1/apps/0oa1gjh63g214q0Hq0g4/users", "/api/v1/apps"],
    ["GET", "https://acme.okta.com/api/v1/groups", "/api/v1/groups"],
    ["PUT", "https://acme.okta.com/api/v1/groups/00g1emaKYZTWRYYRRTSK", "/api/v1/groups/{id}"],
    ["GET", "https://acme.okta.com/api/v1/logs?since=2026-11-30T00:00:00Z", "/api/v1/logs"],
    ["POST", "https://acme.okta.com/api/v1/authn", "/api/v1/authn"],
    ["POST", "https://acme.okta.com/api/v1/authn/factors/sms/verify", "/api/v1/authn/factors/{factorIdOrFactorType}/verify"],
    ["GET", "https://acme.okta.com/api/v1/zones", "/api/v1"],
    ["POST", "https://acme.okta.com/oauth2/v1/token", "/oauth2/v1"],
    ["GET", "https://acme.okta.com/oauth2/v1/clients/0oabskvc6442nkvQO0h7", "/oauth2/v1/clients"],
    ["POST", "https://acme.okta.com/oauth2/default/v1/token", "/oauth2/{authorizationServerId}/v1"],
  ])("%s %s counts against %s", (method, url, endpoint) => {
    expect(scopeOf(method, url)).toEqual({ endpoint });
  });

  it("agrees with the scope of the 429 its bucket answers with", () => {
    const url = "https://acme.okta.com/api/v1/groups";
    const verdict = classify({ request: { method: "GET", url }, response: { status: 429, headers: bucket(500, 0, 40), body: E0000047 } }, { nowMs: NOW_MS });
    expect(verdict).toMatchObject({ provider: "okta", throttled: true, limitType: "burst", minWaitMs: 40_000, waitSource: "x-rate-limit-reset" });
    expect(verdict.scope).toEqual(scopeOf("GET", url));
  });

  it("a concurrency 429 (limit and remaining 0) names no endpoint: the limit is the org's, whatever the endpoint", () => {
    const verdict = classify({ request: { method: "GET", url: "https://acme.okta.com/api/v1/groups" }, response: { status: 429, headers: bucket(0, 0, 5), body: E0000047 } }, { nowMs: NOW_MS });
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "concurrency", minWaitMs: 5000 });
    expect(verdict.scope).toEqual({});
    expect(verdict.budget).toMatchObject({ remaining: 0, limit: null, concurrent: true });
  });
});

describe("Okta's X-Rate-Limit-* headers, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 E0000047 waits until X-Rate-Limit-Reset (epoch seconds against the answer's Date), then the call goes through", async () => {
    const server = await servers.start([
      { status: 429, headers: bucket(600, 0, 30), body: E0000047 },
      { status: 200, headers: bucket(600, 599, 60), body: [] },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "okta", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/api/v1/users?limit=200" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("okta");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-rate-limit-reset" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(30_000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(40_000);
  });

  it("a spent /api/v1/users bucket holds back the next users call, not a groups call (a bucket of its own)", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 200, headers: bucket(600, 0, 20), body: [] },
      { status: 200, headers: bucket(500, 499, 60), body: [] },
      { status: 200, headers: { "x-rate-limit-limit": "600", "x-rate-limit-remaining": "599", "x-rate-limit-reset": String(NOW_S + 80) }, body: [] },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "okta", clock });
    expect((await client.request({ method: "GET", url: "/api/v1/users" })).outcome).toBe("success");
    const beforeGroups = clock.nowMs();
    expect((await client.request({ method: "GET", url: "/api/v1/groups" })).outcome).toBe("success");
    expect(clock.nowMs() - beforeGroups).toBeLessThan(1000);
    const beforeUsers = clock.nowMs();
    expect((await client.request({ method: "GET", url: "/api/v1/users" })).outcome).toBe("success");
    expect(clock.nowMs() - beforeUsers).toBeGreaterThanOrEqual(19_000);
    expect(server.calls.map((c) => c.url)).toEqual(["/api/v1/users", "/api/v1/groups", "/api/v1/users"]);
  });

  it("a 403 E0000006 with budget left is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: bucket(600, 599, 60), body: { errorCode: "E0000006", errorSummary: "You do not have permission to perform the requested action" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "okta", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/api/v1/users/00ub0oNGTSWTBKOLGLNR" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "okta", limitType: "permission", retryable: false });
  });
});
