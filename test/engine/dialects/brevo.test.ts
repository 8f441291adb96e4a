import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { createMemoryStore } from "../../../src/store";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://developers.brevo.com/docs/api-limits (RPS and RPH per endpoint row)
// https://developers.brevo.com/docs/limit-headers (x-sib-ratelimit-*, reset in seconds left)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const TOO_MANY = { message: "Too Many Requests" };
const window = (limit: number, remaining: number, resetInS: number) => ({
  "x-sib-ratelimit-limit": String(limit),
  "x-sib-ratelimit-remaining": String(remaining),
  "x-sib-ratelimit-reset": String(resetInS),
});
const read = (method: string, url: string, status: number, headers: Record<string, string> = {}, body: unknown = TOO_MANY) =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW });

describe("a Brevo request's scope: its row of the rate-limit table", () => {
  it.each([
    ["POST", "https://api.brevo.com/v3/smtp/email", "POST /v3/smtp/email"],
    ["GET", "https://api.brevo.com/v3/smtp/blockedContacts?limit=50", "GET /v3/smtp/blockedContacts"],
    ["GET", "https://api.brevo.com/v3/smtp/emails?email=a%40b.c", "GET /v3/smtp/emails"],
    ["GET", "https://api.brevo.com/v3/smtp/statistics/events", "/v3/smtp"],
    ["POST", "https://api.brevo.com/v3/transactionalSMS/sms", "POST /v3/transactionalSMS/sms"],
    ["POST", "https://api.brevo.com/v3/events", "POST /v3/events"],
    ["GET", "https://api.brevo.com/v3/contacts/42", "/v3/contacts"],
    ["POST", "https://api.sendinblue.com/v3/contacts/import", "/v3/contacts"],
    ["GET", "https://api.brevo.com/v3/loyalty/config/programs", "/v3/loyalty"],
    ["GET", "https://api.brevo.com/v3/emailCampaigns/7", "/v3/emailCampaigns"],
    ["GET", "https://api.brevo.com/v3/account", "/v3/account"],
  ])("%s %s counts against %s", (method, url, endpoint) => {
    expect(requestScopeFor({ request: { method, url } })).toEqual({ endpoint });
  });
});

describe("Brevo's x-sib-ratelimit-* headers, read by host", () => {
  it("both hosts are Brevo's; a success shows the window's budget, its reset in seconds left", () => {
    for (const url of ["https://api.brevo.com/v3/smtp/email", "https://api.sendinblue.com/v3/smtp/email"]) {
      const verdict = read("POST", url, 201, window(1000, 998, 1), { messageId: "<1@smtp-relay.mailin.fr>" });
      expect(verdict).toMatchObject({
        provider: "brevo",
        throttled: false,
        scope: { endpoint: "POST /v3/smtp/email" },
        budget: { remaining: 998, limit: 1000, resetAt: "2026-11-30T12:00:01.000Z", source: "x-sib-ratelimit-remaining" },
      });
    }
  });

  it("a row with no RPS limit shows the hour: its budget's window is an hour", () => {
    expect(read("GET", "https://api.brevo.com/v3/senders", 200, window(100, 60, 900), { senders: [] }).budget).toMatchObject({ remaining: 60, limit: 100, windowMs: 3_600_000 });
  });

  it("a 429 with the second spent is a burst, waited at least a second", () => {
    expect(read("GET", "https://api.brevo.com/v3/contacts", 429, window(10, 0, 1))).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 1000, waitSource: "x-sib-ratelimit-reset" });
    expect(read("GET", "https://api.brevo.com/v3/contacts", 429, window(10, 0, 0))).toMatchObject({ limitType: "burst", minWaitMs: 1000, waitSource: "doc:fixed-1s" });
  });

  it("a 429 with a spent window more than a second from its reset is the hour's: a quota, not retried, deferred to the reset", () => {
    expect(read("POST", "https://api.brevo.com/v3/smtp/email", 429, window(3_600_000, 0, 1200))).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: 1_200_000, waitSource: "x-sib-ratelimit-reset" });
  });

  it("a 429 of a row with only an RPH limit is a quota, an hour at the latest where no reset is shown", () => {
    expect(read("GET", "https://api.brevo.com/v3/emailCampaigns", 429, window(100, 0, 600))).toMatchObject({ limitType: "quota", retryable: false, minWaitMs: 600_000, scope: { endpoint: "/v3/emailCampaigns" } });
    expect(read("GET", "https://api.brevo.com/v3/account", 429)).toMatchObject({ limitType: "quota", retryable: false, minWaitMs: 3_600_000, waitSource: "doc:hourly-window-at-the-latest" });
  });

  it("a 429 of a per-second row that shows no spent window backs off", () => {
    expect(read("POST", "https://api.brevo.com/v3/events", 429)).toMatchObject({ limitType: "burst", retryable: true, minWaitMs: null });
    expect(read("POST", "https://api.brevo.com/v3/events", 429, window(36_000, 20_000, 1800))).toMatchObject({ limitType: "burst", minWaitMs: null });
  });

  it("a reset only an epoch time can be is read as one, and said so", () => {
    const verdict = read("GET", "https://api.brevo.com/v3/contacts", 429, { ...window(36_000, 0, NOW / 1000 + 1800), date: "Mon, 30 Nov 2026 12:00:00 GMT" });
    expect(verdict).toMatchObject({ limitType: "quota", minWaitMs: 1_800_000 });
    expect(verdict.deviations.join(" ")).toMatch(/epoch seconds/);
  });

  it("401 and 403 stay final even where the count shows 0", () => {
    expect(read("GET", "https://api.brevo.com/v3/senders", 401, window(100, 0, 3000), { code: "unauthorized", message: "Key not found" })).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    expect(read("GET", "https://api.brevo.com/v3/senders", 403, window(100, 0, 3000), { code: "permission_denied" })).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
  });
});

describe("Brevo, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("a 429 with the contacts API's second spent waits the reset, then the contact is created", async () => {
    const server = await servers.start([
      { status: 429, headers: window(10, 0, 1), body: TOO_MANY },
      { status: 201, headers: window(10, 9, 1), body: { id: 42 } },
    ]);
    const clock = virtualClock();
    const client = createThrottleClient({ baseUrl: server.url, provider: "brevo", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/v3/contacts", data: { email: "jane@example.com" } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("brevo");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "x-sib-ratelimit-reset" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(1000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(1000);
  });

  it("a spent hour of campaign calls is deferred to its reset after one call, and holds back campaigns, not sends", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 429, headers: window(100, 0, 1800), body: TOO_MANY },
      { status: 201, headers: window(1000, 999, 1), body: { messageId: "<1@smtp-relay.mailin.fr>" } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "brevo", clock, store: createMemoryStore({ clock }), onLongWait: "defer" });
    const start = clock.nowMs();
    const campaigns = await client.request({ method: "GET", url: "/v3/emailCampaigns" });
    expect(campaigns.outcome).toBe("deferred");
    expect(Date.parse(campaigns.notBefore!) - start).toBeGreaterThanOrEqual(1_800_000);
    expect(server.calls).toHaveLength(1);
    const send = await client.request({ method: "POST", url: "/v3/smtp/email", data: { to: [{ email: "jane@example.com" }], templateId: 7 } });
    expect(send).toMatchObject({ outcome: "success", slotWaitMs: 0 });
    const again = await client.request({ method: "GET", url: "/v3/emailCampaigns/7" });
    expect(again.outcome).toBe("deferred");
    expect(again.attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(2);
  });

  it("a 401 is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 401, headers: window(100, 99, 3000), body: { code: "unauthorized", message: "Key not found" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "brevo", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/v3/account" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "brevo", limitType: "permission", retryable: false });
  });
});
