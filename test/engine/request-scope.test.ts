import { describe, expect, it } from "vitest";
import { classify, requestScopeFor } from "../../src/engine";

const NOW_MS = Date.parse("2026-11-30T12:00:00Z");

describe("requestScopeFor: the scope parts known before a request is sent", () => {
  it.each([
    ["https://api.github.com/repos/o/r/issues", "core"],
    ["https://api.github.com/search/issues?q=x", "search"],
    ["https://api.github.com/search/code?q=x", "code_search"],
    ["https://api.github.com/graphql", "graphql"],
  ])("GitHub %s counts against %s", (url, resource) => {
    expect(requestScopeFor({ request: { method: "GET", url } })).toEqual({ resource });
  });

  it("agrees with the resource GitHub names in its answer", () => {
    // https://docs.github.com/en/rest/rate-limit/rate-limit: x-ratelimit-resource is the bucket the call counted against.
    const url = "https://api.github.com/search/code?q=x";
    const verdict = classify(
      { request: { method: "GET", url }, response: { status: 403, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW_MS / 1000 + 30), "x-ratelimit-resource": "code_search" }, body: { message: "API rate limit exceeded" } } },
      { nowMs: NOW_MS },
    );
    expect(verdict.scope).toEqual(requestScopeFor({ request: { method: "GET", url } }));
  });

  it("names Slack's method, whose tier is the limit", () => {
    expect(requestScopeFor({ request: { method: "POST", url: "https://slack.com/api/chat.postMessage" } })).toEqual({ method: "chat.postMessage" });
  });

  it.each([
    ["https://sentry.io/api/0/organizations/acme/issues/?query=is:unresolved", "/api/0/organizations/acme/issues"],
    ["https://us.sentry.io/api/0/issues/4711/events/", "/api/0/issues/:id/events"],
    ["https://sentry.io/api/0/projects/acme/web/events/0123456789abcdef0123456789abcdef/", "/api/0/projects/acme/web/events/:id"],
  ])("Sentry %s counts against the endpoint %s (its limits are per caller and endpoint)", (url, endpoint) => {
    // https://docs.sentry.io/api/ratelimits/: "The limit is applied to each unique combination of caller and endpoint."
    expect(requestScopeFor({ request: { method: "GET", url } })).toEqual({ endpoint });
    const verdict = classify(
      { request: { method: "GET", url }, response: { status: 429, headers: { "x-sentry-rate-limit-limit": "40", "x-sentry-rate-limit-remaining": "0", "x-sentry-rate-limit-reset": String(NOW_MS / 1000 + 1) }, body: {} } },
      { nowMs: NOW_MS },
    );
    expect(verdict.scope).toEqual({ endpoint });
  });

  it("is empty where the dialect cannot tell, and for garbage", () => {
    expect(requestScopeFor({ request: { method: "GET", url: "https://api.example.test/x" } })).toEqual({});
    expect(requestScopeFor({ request: { method: "GET", url: "::not a url::" } })).toEqual({});
    expect(requestScopeFor({ provider: "github", request: undefined })).toEqual({ resource: "core" });
  });
});
