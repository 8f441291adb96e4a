import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { mailgunDomainOf } from "../../../src/engine/dialects/mailgun";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://documentation.mailgun.com/docs/mailgun/quickstart-guide/responses (429: retry as the response defines)
// https://github.com/mailgun/documentation/blob/master/source/api-webhooks.rst ({"retry-seconds": 60})
// https://github.com/mailgun/mailgun-java/issues/50 (420, "try again after <date> UTC")
const NOW = Date.parse("2026-11-30T12:00:00Z");
const notAllowed = (why: string, domain = "mg.example.com") => ({ message: `Domain ${domain} is not allowed to send: ${why}` });

describe("Mailgun's hosts and scopes", () => {
  it("the US and EU hosts are Mailgun's; a send's scope is its domain", () => {
    expect(classify({ request: { url: "https://api.mailgun.net/v3/domains" }, response: { status: 200, body: { items: [] } } }, { nowMs: NOW }).provider).toBe("mailgun");
    expect(classify({ request: { url: "https://api.eu.mailgun.net/v3/mg.example.eu/events" }, response: { status: 200, body: { items: [] } } }, { nowMs: NOW }).provider).toBe("mailgun");
    expect(requestScopeFor({ request: { url: "https://api.mailgun.net/v3/MG.Example.com/messages" } })).toEqual({ domain: "mg.example.com" });
    expect(requestScopeFor({ request: { url: "https://api.mailgun.net/v3/mg.example.com/messages.mime" } })).toEqual({ domain: "mg.example.com" });
    expect(mailgunDomainOf("/v3/domains/mg.example.com/webhooks")).toBe("mg.example.com");
    expect(mailgunDomainOf("/v3/domains")).toBeNull();
    expect(mailgunDomainOf("/v4/address/validate")).toBeNull();
  });
});

describe("Mailgun's limits, read by host", () => {
  it("a 429 waits the body's retry-seconds, or a longer Retry-After", () => {
    const body = classify({ request: { method: "PUT", url: "https://api.mailgun.net/v3/domains/mg.example.com/webhooks/clicked" }, response: { status: 429, body: { "retry-seconds": 60 } } }, { nowMs: NOW });
    expect(body).toMatchObject({ provider: "mailgun", throttled: true, retryable: true, limitType: "burst", minWaitMs: 60_000, waitSource: "body:retry-seconds" });
    const header = classify({ request: { url: "https://api.mailgun.net/v3/mg.example.com/events" }, response: { status: 429, headers: { "retry-after": "90" }, body: { "retry-seconds": 60 } } }, { nowMs: NOW });
    expect(header).toMatchObject({ minWaitMs: 90_000, waitSource: "retry-after" });
  });

  it("420 with a try-again date is the domain's sending window, waited to that date; without a date, a spent allowance", () => {
    const windowed = classify(
      { request: { method: "POST", url: "https://api.mailgun.net/v3/mg.example.com/messages" }, response: { status: 420, body: notAllowed("recipient limit exceeded, try again after Mon, 30 Nov 2026 12:10:00 UTC") } },
      { nowMs: NOW },
    );
    expect(windowed).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 600_000, scope: { domain: "mg.example.com" }, writeNotProcessed: true });
    const spent = classify({ request: { method: "POST", url: "https://api.mailgun.net/v3/mg.example.com/messages" }, response: { status: 420, body: notAllowed("message limit reached") } }, { nowMs: NOW });
    expect(spent).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: null });
  });

  it("an unreadable try-again date is recorded, not turned into a wait", () => {
    const verdict = classify({ request: { method: "POST", url: "https://api.mailgun.net/v3/mg.example.com/messages" }, response: { status: 420, body: notAllowed("recipient limit exceeded, try again after soon") } }, { nowMs: NOW });
    expect(verdict.ignored).toEqual([expect.objectContaining({ signal: "body:message try again after", value: "soon" })]);
    expect(verdict).toMatchObject({ limitType: "quota", retryable: false, minWaitMs: null });
  });

  it("not allowed to send for want of activation is an access error, final", () => {
    const verdict = classify({ request: { method: "POST", url: "https://api.mailgun.net/v3/mg.example.com/messages" }, response: { status: 420, body: notAllowed("Please activate your Mailgun account.") } }, { nowMs: NOW });
    expect(verdict).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
  });
});

describe("Mailgun's limits, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 waits the body's retry-seconds once, then the webhook is created", async () => {
    const server = await servers.start([
      { status: 429, body: { "retry-seconds": 60 } },
      { status: 200, body: { message: "Webhook has been created", webhook: { urls: ["https://example.com/hook"] } } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "mailgun", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/v3/domains/mg.example.com/webhooks", data: { id: "clicked", url: "https://example.com/hook" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("mailgun");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "body:retry-seconds" });
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(60_000);
  });

  it("a 420 recipient limit waits to its date on the server's clock, then the message is queued", async () => {
    const server = await servers.start([
      { status: 420, headers: { date: "Thu, 01 Jan 2026 00:00:00 GMT" }, body: notAllowed("recipient limit exceeded, try again after Thu, 01 Jan 2026 00:00:20 UTC") },
      { status: 200, body: { id: "<20260101000020.1@mg.example.com>", message: "Queued. Thank you." } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "mailgun", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/v3/mg.example.com/messages", data: { from: "a@mg.example.com", to: "b@example.org", subject: "Hi", text: "Hello" } });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 420, waitSource: "body:message try again after" });
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(20_000);
  });

  it("a 401 with a wrong key is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 401, body: "Forbidden" }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "mailgun", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v3/domains" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "mailgun", limitType: "permission", retryable: false });
  });
});
