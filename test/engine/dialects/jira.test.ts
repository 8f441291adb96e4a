import { describe, expect, it } from "vitest";
import { classify } from "../../../src/engine";

const nowMs = Date.parse("2026-11-30T12:00:00Z");
const url = "https://acme.atlassian.net/rest/api/3/search/jql";

describe("jira dialect edge cases", () => {
  it("ignores an X-RateLimit-Reset already past (minute precision) instead of reading it as a 0 ms wait", () => {
    const v = classify({ request: { url }, response: { status: 429, headers: { "X-RateLimit-Reset": "2026-11-30T12:00Z" } } }, { nowMs });
    expect(v).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: null });
    expect(v.ignored.map((i) => i.signal)).toContain("x-ratelimit-reset");
  });

  it("reads the beta quota headers seen during the 2026 rollout", () => {
    const v = classify(
      {
        request: { url },
        response: {
          status: 429,
          headers: {
            "Beta-RateLimit": '"tenant-app-quota";r=0;t=600',
            "Beta-RateLimit-Policy": '"tenant-app-quota";q=100100;w=3600',
            "X-Beta-RateLimit-Reason": "jira-quota-tenant-based",
          },
        },
      },
      { nowMs },
    );
    expect(v).toMatchObject({
      limitType: "cost",
      retryable: true,
      minWaitMs: 600_000,
      waitSource: "beta-ratelimit",
      scope: { reason: "jira-quota-tenant-based" },
      budget: { remaining: 0, limit: 100100, resetAt: "2026-11-30T12:10:00.000Z", source: "beta-ratelimit" },
    });
  });
});
