import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developer.constantcontact.com/api_guide/rate_limits.html (4 per second, 10,000 a day reset at 00:00 UTC, error_key)
// https://github.com/constantcontact/constant-contact-v3api-client-csharp/blob/main/api/openapi.yaml (1,000 queued activities)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const THROTTLED = { error_key: "throttled", error_message: "Too Many Requests" };
const QUOTA = { error_key: "quota_exceeded", error_message: "Limit Exceeded" };
const QUEUE_FULL = [{ error_message: "Too many requests. You exceeded 1,000 queued activities for this user account." }];
const read = (url: string, status: number, body?: unknown, headers: Record<string, string> = {}, method = "GET") =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW });

describe("a Constant Contact request's scope", () => {
  it("tells the bulk activity creations (their own queue limit) from the rest of the API", () => {
    for (const path of ["activities/contacts_json_import", "activities/contact_exports", "activities/add_list_memberships", "activities/custom_fields_delete"]) {
      expect(requestScopeFor({ request: { method: "POST", url: `https://api.cc.email/v3/${path}` } })).toEqual({ endpoint: "activities" });
    }
    for (const [method, path] of [["GET", "activities/b3ab3d0a-5a43-11ee-a5e2-fa163e5bc304"], ["GET", "activities?limit=500"], ["POST", "contacts"], ["GET", "contacts"], ["PUT", "contact_lists/07936f78-662a-11eb-af0a-fa163e56c9b0"]] as const) {
      expect(requestScopeFor({ request: { method, url: `https://api.cc.email/v3/${path}` } })).toEqual({ endpoint: "api" });
    }
  });
});

describe("Constant Contact's 429s, told apart by error_key", () => {
  it("throttled is the key's per-second limit: a second's wait, for the whole API", () => {
    expect(read("https://api.cc.email/v3/contacts", 429, THROTTLED)).toMatchObject({ provider: "constantcontact", throttled: true, retryable: true, limitType: "burst", minWaitMs: 1000, waitSource: "doc:fixed-1s", scope: { limit: "per-second" } });
  });

  it("quota_exceeded is the day's quota: not retried, deferred to 00:00 UTC on the server's clock, object or array form", () => {
    const object = read("https://api.cc.email/v3/contacts", 429, QUOTA, { date: "Mon, 30 Nov 2026 23:00:00 GMT" });
    expect(object).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: 3_600_000, waitSource: "doc:daily-reset-midnight-utc", scope: { limit: "daily" } });
    expect(object.budget).toMatchObject({ remaining: 0, limit: null, source: "body:error_key" });
    const array = read("https://api.cc.email/v3/emails", 429, [QUOTA]);
    expect(array).toMatchObject({ limitType: "quota", retryable: false, minWaitMs: 12 * 3_600_000, budget: { resetAt: "2026-12-01T00:00:00.000Z" } });
  });

  it("the error_key is read whatever its letter case, and a Retry-After longer than the second still wins", () => {
    expect(read("https://api.cc.email/v3/contacts", 429, { error_key: "THROTTLED" }, { "retry-after": "5" })).toMatchObject({ limitType: "burst", minWaitMs: 5000, waitSource: "retry-after" });
  });

  it("a full activity queue is a limit on work in flight, for activity creations only, with no wait named", () => {
    const verdict = read("https://api.cc.email/v3/activities/contacts_json_import", 429, QUEUE_FULL, {}, "POST");
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "concurrency", minWaitMs: null, scope: { endpoint: "activities" } });
  });

  it("a 429 naming no known key is a rate limit of the request's own part of the API, backed off", () => {
    const verdict = read("https://api.cc.email/v3/segments", 429, [{ error_key: "segments.too_many", error_message: "Too many requests. You exceeded the request rate limit." }]);
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: null, scope: { endpoint: "api" } });
  });

  it("401 and 403 are final, whatever the body; 500 is transient", () => {
    expect(read("https://api.cc.email/v3/contacts", 401, [{ error_key: "unauthorized", error_message: "The access token used is invalid." }])).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    expect(read("https://api.cc.email/v3/contacts", 403, [{ error_key: "forbidden", error_message: "Forbidden request." }])).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    expect(read("https://api.cc.email/v3/contacts", 500)).toMatchObject({ throttled: false, retryable: true, limitType: "server" });
  });
});

describe("Constant Contact's limits, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a throttled 429 waits the second, then the contact is created", async () => {
    const server = await servers.start([
      { status: 429, body: THROTTLED },
      { status: 201, body: { contact_id: "1618ae62-4752-11e9-9c8a-fa163e6b01c1", action: "created" } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "constantcontact", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/v3/contacts/sign_up_form", data: { email_address: "ann@example.com", list_memberships: ["07936f78-662a-11eb-af0a-fa163e56c9b0"] } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("constantcontact");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "doc:fixed-1s" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(1000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(1000);
  });

  it("quota_exceeded is deferred to midnight UTC after one call, and holds back activity creations too", async () => {
    const clock = virtualClock();
    const server = await servers.start([{ status: 429, headers: { date: "Thu, 01 Jan 2026 18:00:00 GMT" }, body: QUOTA }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "constantcontact", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const result = await client.request({ method: "GET", url: "/v3/contacts" });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    // The server's clock reads 18:00 UTC: midnight UTC is 6 h away, from the local clock's 2026-01-01T00:00Z.
    expect(result.notBefore).toBe("2026-01-01T06:00:00.000Z");
    const bulk = await client.request({ method: "POST", url: "/v3/activities/contacts_json_import", data: { import_data: [], list_ids: [] } });
    expect(bulk.outcome).toBe("deferred");
    expect(bulk.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(1);
  });

  it("a full activity queue holds back activity creations, not the other calls", async () => {
    const clock = virtualClock();
    const server = await servers.start([{ status: 429, body: QUEUE_FULL }, { status: 200, body: { contacts: [] } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "constantcontact", clock, store: createMemoryStore({ clock }), policy: { maxAttempts: 1 }, onLongWait: "defer" });
    const bulk = await client.request({ method: "POST", url: "/v3/activities/contact_exports", data: { contact_ids: [] } });
    expect(bulk.outcome).toBe("deferred");
    expect(bulk.verdict).toMatchObject({ limitType: "concurrency", scope: { endpoint: "activities" } });
    const contacts = await client.request({ method: "GET", url: "/v3/contacts" });
    expect(contacts).toMatchObject({ outcome: "success", slotWaitMs: 0 });
    expect(server.calls).toHaveLength(2);
  });

  it("a 401 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 401, body: [{ error_key: "unauthorized", error_message: "The access token used is invalid." }] }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "constantcontact", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v3/account/summary" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "constantcontact", limitType: "permission", retryable: false });
  });
});
