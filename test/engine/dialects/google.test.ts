import { describe, expect, it } from "vitest";
import { classify } from "../../../src/engine";

const nowMs = Date.parse("2026-11-30T12:00:00Z");

describe("google dialect edge cases", () => {
  it("a per-day QuotaFailure is a quota (not retryable) and still reports the RetryInfo wait", () => {
    const v = classify(
      {
        request: { method: "POST", url: "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent" },
        response: {
          status: 429,
          body: {
            error: {
              code: 429,
              status: "RESOURCE_EXHAUSTED",
              details: [
                { "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [{ quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier" }] },
                { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3600s" },
              ],
            },
          },
        },
      },
      { nowMs },
    );
    expect(v).toMatchObject({ throttled: true, retryable: false, limitType: "quota", minWaitMs: 3_600_000, waitSource: "retryinfo" });
  });

  it("Compute Engine quotaExceeded (allocation) is a quota", () => {
    const v = classify(
      {
        request: { method: "POST", url: "https://compute.googleapis.com/compute/v1/projects/p/zones/us-central1-a/instances" },
        response: {
          status: 403,
          body: { error: { code: 403, message: "Quota 'CPUS' exceeded.  Limit: 24.0 in region us-central1.", errors: [{ domain: "usageLimits", reason: "quotaExceeded" }] } },
        },
      },
      { nowMs },
    );
    expect(v).toMatchObject({ throttled: true, retryable: false, limitType: "quota" });
  });

  it("PERMISSION_DENIED status without a reason is a permission error", () => {
    const v = classify(
      { request: { url: "https://storage.googleapis.com/storage/v1/b/x/o" }, response: { status: 403, body: { error: { code: 403, status: "PERMISSION_DENIED" } } } },
      { nowMs },
    );
    expect(v).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
  });
});
