import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://www.typeform.com/developers/get-started/ (2 requests per second per account, 429 over it)
// https://github.com/singer-io/tap-typeform/blob/master/tap_typeform/client.py (Retry-After read on a 429)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const read = (url: string, status: number, headers: Record<string, string> = {}, body?: unknown, method = "GET") =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW });

describe("Typeform's 429, read by host", () => {
  it.each(["https://api.typeform.com/forms/u6nXL7/responses", "https://api.eu.typeform.com/forms/u6nXL7/responses", "https://api.typeform.eu/forms/u6nXL7/responses"])(
    "%s is Typeform's, and a bare 429 waits the second the account's 2 requests are counted in",
    (url) => {
      expect(read(url, 429)).toMatchObject({ provider: "typeform", throttled: true, retryable: true, limitType: "burst", minWaitMs: 1000, waitSource: "doc:fixed-1s", scope: {}, budget: null });
    },
  );

  it("a Retry-After longer than the second wins; a shorter one does not shorten it", () => {
    expect(read("https://api.typeform.com/forms", 429, { "retry-after": "4" }, undefined, "POST")).toMatchObject({ minWaitMs: 4000, waitSource: "retry-after" });
    expect(read("https://api.typeform.com/forms", 429, { "retry-after": "0" })).toMatchObject({ minWaitMs: 1000, waitSource: "doc:fixed-1s" });
  });

  it("401 and 403 are access errors, final; 500 is transient", () => {
    expect(read("https://api.typeform.com/forms", 401, {}, { code: "AUTHENTICATION_FAILED", description: "Authentication credentials not found on the Request Headers" })).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    expect(read("https://api.typeform.com/workspaces", 403)).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    expect(read("https://api.typeform.com/forms", 500)).toMatchObject({ throttled: false, retryable: true, limitType: "server" });
  });

  it("a published form's host (form.typeform.com, {account}.typeform.com) is no API host: the generic rules read it", () => {
    expect(read("https://acme.typeform.com/to/u6nXL7", 429).provider).toBe("generic");
    expect(read("https://form.typeform.com/to/u6nXL7", 429).provider).toBe("generic");
  });
});

describe("a Typeform 429, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("waits at least the second, then the responses are read", async () => {
    const server = await servers.start([
      { status: 429, headers: {} },
      { status: 200, body: { total_items: 1, page_count: 1, items: [{ response_id: "r1" }] } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "typeform", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: "/forms/u6nXL7/responses?page_size=1000" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("typeform");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "doc:fixed-1s" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(1000);
    expect(result.attempts[0]!.waitMs).toBeLessThan(2000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(1000);
  });

  it("waits a Retry-After of 3 s when one is sent, then the form is created", async () => {
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "3" } },
      { status: 201, body: { id: "newForm", title: "Feedback" } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "typeform", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/forms", data: { title: "Feedback" } });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(3000);
  });

  it("a 403 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, body: { code: "FORBIDDEN", description: "User doesn't have permission to access the resource." } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "typeform", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/forms/u6nXL7" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "typeform", limitType: "permission", retryable: false });
  });
});
