import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://www.dropbox.com/developers/reference/data-ingress-guide (the two 429 reasons)
// https://github.com/dropbox/dropbox-api-spec/blob/main/auth.stone (RateLimitError.retry_after, seconds)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const rateLimited = (reason: string, retryAfterS: number) => ({ error_summary: `${reason}/...`, error: { reason: { ".tag": reason }, retry_after: retryAfterS } });

describe("Dropbox's hosts", () => {
  it.each(["api.dropboxapi.com", "content.dropboxapi.com", "notify.dropboxapi.com"])("%s is Dropbox's", (host) => {
    const verdict = classify({ request: { method: "POST", url: `https://${host}/2/files/list_folder` }, response: { status: 429, body: rateLimited("too_many_requests", 4) } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ provider: "dropbox", throttled: true, limitType: "burst", minWaitMs: 4000, waitSource: "body:error.retry_after" });
  });

  it("a Retry-After longer than the body's retry_after wins: each is a floor", () => {
    const verdict = classify({ request: { method: "POST", url: "https://api.dropboxapi.com/2/files/list_folder" }, response: { status: 429, headers: { "retry-after": "9" }, body: rateLimited("too_many_requests", 4) } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ minWaitMs: 9000, waitSource: "retry-after" });
  });
});

describe("Dropbox 429s, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("too_many_requests with the wait only in the body's retry_after: waits those seconds, then the call goes through", async () => {
    const server = await servers.start([
      { status: 429, body: rateLimited("too_many_requests", 7) },
      { status: 200, body: { entries: [], cursor: "c1", has_more: false } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "dropbox", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/2/files/list_folder", data: { path: "" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("dropbox");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "body:error.retry_after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(7000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(9000);
  });

  it("too_many_write_operations on an upload: lock contention; the write was not done, so it is sent again after the wait (even with writes not repeated after throttles)", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "2" }, body: rateLimited("too_many_write_operations", 2) },
      { status: 200, body: { name: "report.pdf", id: "id:a4ayc_80_OEAAAAAAAAAXw" } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "dropbox", clock: virtualClock(), retryWritesAfterThrottle: false });
    const result = await client.request({ method: "POST", url: "/2/files/upload", headers: { "Dropbox-API-Arg": JSON.stringify({ path: "/report.pdf", mode: "add" }) }, data: "%PDF-1.4" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(2000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(4000);
  });

  it("too_many_requests on a write is a throttle like any other: with writes not repeated after throttles, the upload is not sent again", async () => {
    const server = await servers.start([{ status: 429, headers: { "retry-after": "2" }, body: rateLimited("too_many_requests", 2) }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "dropbox", clock: virtualClock(), retryWritesAfterThrottle: false });
    const result = await client.request({ method: "POST", url: "/2/files/upload", data: "%PDF-1.4" });
    expect(result.outcome).toBe("gave_up");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "dropbox", throttled: true, limitType: "burst" });
  });

  it("a 409 path/not_found is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 409, body: { error_summary: "path/not_found/..", error: { ".tag": "path", path: { ".tag": "not_found" } } } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "dropbox", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/2/files/get_metadata", data: { path: "/missing" } });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "dropbox", throttled: false, retryable: false });
  });
});
