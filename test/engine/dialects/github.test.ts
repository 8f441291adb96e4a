import { describe, expect, it } from "vitest";
import { classify } from "../../../src/engine";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const NOW_S = NOW / 1000;
const gh = (status: number, headers: Record<string, string>, body: unknown, url = "https://api.github.com/repos/o/r") =>
  classify({ request: { method: "GET", url }, response: { status, headers, body } }, { nowMs: NOW });

describe("github dialect", () => {
  it("a 403 with no limit headers and no wording is a permission error", () => {
    const v = gh(403, {}, { message: "Must have admin rights to Repository." });
    expect(v).toMatchObject({ throttled: false, retryable: false, limitType: "permission", minWaitMs: null });
  });

  it("the older 'abuse detection' wording is a secondary limit", () => {
    const v = gh(403, { "x-ratelimit-remaining": "10" }, { message: "You have triggered an abuse detection mechanism. Please wait a few minutes before you try again." });
    expect(v).toMatchObject({ throttled: true, retryable: true, minWaitMs: 60_000, waitSource: "doc:fixed-60s" });
  });

  it("a REST secondary limit names no resource (it spans them all), while a primary limit names its own", () => {
    const secondary = gh(403, { "retry-after": "30", "x-ratelimit-remaining": "10", "x-ratelimit-resource": "core" }, { message: "You have exceeded a secondary rate limit." });
    expect(secondary.scope).toEqual({});
    const primary = gh(403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW_S + 30), "x-ratelimit-resource": "search" }, { message: "API rate limit exceeded" });
    expect(primary.scope).toEqual({ resource: "search" });
  });

  it("a 429 without wording still follows the documented order (60 s when nothing else is given)", () => {
    const v = gh(429, { "x-ratelimit-remaining": "10", "x-ratelimit-reset": String(NOW_S + 900) }, {});
    expect(v).toMatchObject({ throttled: true, minWaitMs: 60_000, waitSource: "doc:fixed-60s" });
  });

  it("a 403 with remaining 0 but no wording is the primary limit (octokit)", () => {
    const v = gh(403, { "x-ratelimit-remaining": "0", "x-ratelimit-limit": "60", "x-ratelimit-reset": String(NOW_S + 300) }, { message: "" });
    expect(v).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 300_000, waitSource: "x-ratelimit-reset" });
  });

  it("a GraphQL secondary limit on 200 is read from errors[].message", () => {
    const v = gh(200, {}, { errors: [{ message: "You have exceeded a secondary rate limit. Please wait a few minutes." }] }, "https://api.github.com/graphql");
    expect(v).toMatchObject({ throttled: true, minWaitMs: 60_000 });
    // A secondary limit spans every resource of the account, so it names none.
    expect(v.scope).toEqual({});
  });

  it("other GraphQL errors on a 200 are not throttles", () => {
    const v = gh(200, { "x-ratelimit-remaining": "4000" }, { errors: [{ type: "NOT_FOUND", message: "Could not resolve to a Repository" }] }, "https://api.github.com/graphql");
    expect(v).toMatchObject({ throttled: false, limitType: "none" });
  });

  it("a reset already passed is a zero wait, not a negative one", () => {
    const v = gh(403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW_S - 10) }, { message: "API rate limit exceeded for 1.2.3.4." });
    expect(v).toMatchObject({ throttled: true, minWaitMs: 0 });
  });
});

// Robustness of all twelve dialects written together with this one (github, shopify, stripe,
// salesforce, slack, hubspot, msgraph, dataverse, openai, anthropic, discord, zendesk): malformed
// headers and bodies are ignored with reasons and never make a dialect throw.
const URLS: Record<string, string> = {
  github: "https://api.github.com/graphql",
  shopify: "https://s.myshopify.com/admin/api/2024-10/graphql.json",
  stripe: "https://api.stripe.com/v1/charges",
  salesforce: "https://x.my.salesforce.com/services/data/v62.0/query",
  slack: "https://slack.com/api/chat.postMessage",
  hubspot: "https://api.hubapi.com/crm/v3/objects/contacts",
  msgraph: "https://graph.microsoft.com/v1.0/me",
  dataverse: "https://org.crm.dynamics.com/api/data/v9.2/accounts",
  openai: "https://api.openai.com/v1/chat/completions",
  anthropic: "https://api.anthropic.com/v1/messages",
  discord: "https://discord.com/api/v10/channels/1/messages",
  zendesk: "https://acme.zendesk.com/api/v2/tickets.json",
};
const BODIES: unknown[] = [
  null,
  "",
  "<html>busy</html>",
  [],
  [null, 1, "x"],
  { errors: "text" },
  { errors: [null, { extensions: null }, { extensions: { code: "THROTTLED" } }], extensions: { cost: "x" } },
  { error: "text" },
  { error: { code: 5, type: null, details: [] } },
  { ok: false },
  { policyName: 7, retry_after: "soon", global: "yes" },
  [{ errorCode: "REQUEST_LIMIT_EXCEEDED", message: null }],
];
const HEADERS: Record<string, string>[] = [
  {},
  { "retry-after": "-1", "x-ratelimit-remaining": "x", "x-ratelimit-reset": "1e400", "stripe-should-retry": "maybe" },
  { "retry-after-ms": "NaN", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "soon" },
  { "anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": "yesterday", "x-ratelimit-scope": "shared" },
  { "sforce-limit-info": "api-usage=5/0", "x-shopify-shop-api-call-limit": "1/0", "x-hubspot-ratelimit-remaining": "-3" },
];

describe("the twelve dialects never fall back on a dialect failure", () => {
  for (const [provider, url] of Object.entries(URLS)) {
    it(provider, () => {
      for (const status of [200, 400, 403, 423, 429, 503, 529]) {
        for (const body of BODIES) {
          for (const headers of HEADERS) {
            const v = classify({ request: { method: "POST", url }, response: { status, headers, body } }, { nowMs: NOW });
            expect(v.provider).toBe(provider);
            expect(v.ignored.find((i) => i.signal === "dialect")).toBeUndefined();
            if (v.minWaitMs !== null) expect(Number.isSafeInteger(v.minWaitMs) && v.minWaitMs >= 0).toBe(true);
            expect(typeof v.reason).toBe("string");
          }
        }
      }
    });
  }
});

describe("github dialect: retry-after and a spent budget together", () => {
  it("the later of retry-after and x-ratelimit-reset is the floor", () => {
    const v = gh(403, { "retry-after": "5", "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW_S + 600) }, { message: "API rate limit exceeded for user ID 1." });
    expect(v).toMatchObject({ throttled: true, minWaitMs: 600_000, waitSource: "x-ratelimit-reset" });
  });
});
