import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developer.box.com/guides/api-calls/permissions-and-errors/rate-limits/ (limits, 429, retry-after in seconds)
// https://developer.box.com/guides/api-calls/permissions-and-errors/common-errors/ (409 retry-later codes, 5xx)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const RATE_LIMITED = { type: "error", status: 429, code: "rate_limit_exceeded", help_url: "http://developers.box.com/docs/#errors", message: "Request rate limit exceeded, please try again later", request_id: "abcdef123456" };
const read = (method: string, url: string, status: number, headers: Record<string, string>, body: unknown) => classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW });

describe("Box's hosts and scopes", () => {
  it("api.box.com and upload.box.com are Box's; the web app's host is not", () => {
    expect(read("GET", "https://api.box.com/2.0/users/me", 429, { "retry-after": "5" }, RATE_LIMITED).provider).toBe("box");
    expect(read("POST", "https://upload.box.com/api/2.0/files/content", 429, { "retry-after": "5" }, RATE_LIMITED).provider).toBe("box");
    expect(read("GET", "https://app.box.com/folder/0", 429, {}, "").provider).toBe("generic");
  });

  it.each([
    ["GET", "https://api.box.com/2.0/search?query=invoice", "search"],
    ["POST", "https://api.box.com/2.0/sign_requests", "sign-requests"],
    ["POST", "https://api.box.com/2.0/sign_requests/33243242/resend", "sign-requests"],
    ["GET", "https://api.box.com/2.0/sign_requests/33243242", "api"],
    ["POST", "https://upload.box.com/api/2.0/files/content", "upload"],
    ["POST", "https://upload.box.com/api/2.0/files/upload_sessions", "upload"],
    ["GET", "https://api.box.com/2.0/folders/0/items", "api"],
    ["GET", "https://api.box.com/2.0/metadata_queries/search_folder", "api"],
  ])("%s %s counts against the %s limit", (method, url, endpoint) => {
    expect(requestScopeFor({ request: { method, url } })).toEqual({ endpoint });
  });
});

describe("Box's answers, read", () => {
  it("a 429 waits its retry-after in seconds; the general limit names no endpoint, so it spans the whole API", () => {
    const verdict = read("GET", "https://api.box.com/2.0/folders/0/items", 429, { "retry-after": "100" }, RATE_LIMITED);
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 100_000, waitSource: "retry-after", scope: { limit: "user" }, budget: null });
  });

  it("a 429 with no retry-after is still a throttle, backed off", () => {
    const verdict = read("GET", "https://api.box.com/2.0/search?query=x", 429, {}, RATE_LIMITED);
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: null, scope: { endpoint: "search" } });
  });

  it("rate_limit_exceeded in the body is read as the throttle on another 4xx too", () => {
    const verdict = read("POST", "https://api.box.com/2.0/sign_requests", 403, { "retry-after": "7" }, { ...RATE_LIMITED, status: 403 });
    expect(verdict).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 7000, scope: { endpoint: "sign-requests" } });
  });

  it("409 name_temporarily_reserved is contention, retried, the write not done; item_name_in_use is final", () => {
    const reserved = read("POST", "https://api.box.com/2.0/folders", 409, {}, { type: "error", status: 409, code: "name_temporarily_reserved" });
    expect(reserved).toMatchObject({ throttled: false, retryable: true, limitType: "contention", writeNotProcessed: true, scope: { lock: "item" } });
    const inUse = read("POST", "https://api.box.com/2.0/folders", 409, {}, { type: "error", status: 409, code: "item_name_in_use" });
    expect(inUse).toMatchObject({ throttled: false, retryable: false, limitType: "none" });
  });

  it("403 storage_limit_exceeded and 401 invalid_token are final", () => {
    expect(read("POST", "https://upload.box.com/api/2.0/files/content", 403, {}, { type: "error", status: 403, code: "storage_limit_exceeded" })).toMatchObject({ retryable: false, limitType: "permission" });
    expect(read("GET", "https://api.box.com/2.0/users/me", 401, {}, { type: "error", status: 401, code: "invalid_token" })).toMatchObject({ retryable: false, limitType: "permission" });
  });
});

describe("Box's 429, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("waits its retry-after once, then the folder listing goes through", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "4" }, body: RATE_LIMITED },
      { status: 200, body: { total_count: 0, entries: [] } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "box", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/2.0/folders/0/items" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("box");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(4000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(5000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(4000);
  });

  it("a spent search limit holds back searches, not the other calls", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "3600" }, body: RATE_LIMITED },
      { status: 200, body: { id: "12345", type: "file" } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "box", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    expect((await client.request({ method: "GET", url: "/2.0/search?query=invoice" })).outcome).toBe("deferred");
    expect(await client.request({ method: "GET", url: "/2.0/files/12345" })).toMatchObject({ outcome: "success", slotWaitMs: 0 });
    const again = await client.request({ method: "GET", url: "/2.0/search?query=receipt" });
    expect(again.outcome).toBe("deferred");
    expect(again.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(2);
  });

  it("a 403 access_denied_insufficient_permissions is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, body: { type: "error", status: 403, code: "access_denied_insufficient_permissions", message: "Access denied - insufficient permission" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "box", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: "/2.0/files/12345" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "box", limitType: "permission", retryable: false });
  });
});
