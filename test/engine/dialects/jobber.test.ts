import { describe, expect, it } from "vitest";
import { classify } from "../../../src/engine";

const nowMs = Date.parse("2026-11-30T12:00:00Z");
const url = "https://api.getjobber.com/api/graphql";

describe("jobber dialect edge cases", () => {
  it("THROTTLED without cost extensions is a cost limit with no wait (backoff)", () => {
    const v = classify({ request: { method: "POST", url }, response: { status: 200, body: { errors: [{ message: "Throttled", extensions: { code: "THROTTLED" } }] } } }, { nowMs });
    expect(v).toMatchObject({ throttled: true, retryable: true, limitType: "cost", minWaitMs: null });
  });

  it("a fractional deficit is rounded up to whole milliseconds", () => {
    const body = {
      errors: [{ message: "Throttled", extensions: { code: "THROTTLED" } }],
      extensions: { cost: { requestedQueryCost: 142, throttleStatus: { maximumAvailable: 10000, currentlyAvailable: 100, restoreRate: 500 } } },
    };
    const v = classify({ request: { method: "POST", url }, response: { status: 200, body } }, { nowMs });
    expect(v).toMatchObject({ limitType: "cost", minWaitMs: 84 });
  });

  it("ordinary GraphQL errors on a 200 are not a throttle", () => {
    const v = classify({ request: { method: "POST", url }, response: { status: 200, body: { errors: [{ message: "Field 'x' doesn't exist" }] } } }, { nowMs });
    expect(v).toMatchObject({ throttled: false, limitType: "none" });
  });
});
