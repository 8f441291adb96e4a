import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { classify, dialects, parseHttpDate } from "../../src/engine";

const NOW_MS = Date.parse("2026-11-30T12:00:00Z");

const hosts = [
  "api.example.test",
  ...dialects.flatMap((d) => d.hosts).map((h) => (h.startsWith(".") ? `tenant${h}` : h)),
];

/** Header values that real servers send, malformed ones included. */
const headerValue = fc.oneof(
  fc.string(),
  fc.integer({ min: -1e6, max: 1e13 }).map(String),
  fc.double({ noNaN: false }).map(String),
  fc.constantFrom("0", "-5", "1e400", "", "2.0", "soon", "Infinity", "NaN", "6m0s", "20ms", "1.5s", '"default";r=0;t=30', "r=0;t=", "32/40", "api-usage=5000/5000"),
  fc.date({ min: new Date("1900-01-01"), max: new Date("2200-01-01"), noInvalidDate: true }).map((d) => d.toUTCString()),
  fc.date({ min: new Date("1900-01-01"), max: new Date("2200-01-01"), noInvalidDate: true }).map((d) => d.toISOString()),
);
const headerName = fc.constantFrom(
  "retry-after", "Retry-After", "retry-after-ms", "date", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-limit",
  "x-ratelimit-resource", "ratelimit", "ratelimit-policy", "ratelimit-remaining", "ratelimit-reset", "x-shopify-shop-api-call-limit",
  "sforce-limit-info", "stripe-should-retry", "stripe-rate-limited-reason", "x-should-retry", "x-ratelimit-reset-requests",
  "x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-reset", "x-ratelimit-reset-after", "x-ratelimit-scope",
  "x-rate-limit-problem", "x-ratelimit-type", "x-hubspot-ratelimit-remaining", "x-ratelimit-bucket", "x-daylimit-remaining",
);
const headers = fc.dictionary(fc.oneof(headerName, fc.string()), fc.oneof(headerValue, fc.array(headerValue, { maxLength: 3 })), { maxKeys: 8 });
const body = fc.oneof(
  fc.jsonValue(),
  fc.string(),
  fc.constant(undefined),
  fc.constant({ errors: [{ extensions: { code: "THROTTLED" } }], extensions: { cost: { requestedQueryCost: 50, throttleStatus: { currentlyAvailable: 0, restoreRate: 0, maximumAvailable: 1000 } } } }),
  fc.constant({ ok: false, error: "ratelimited" }),
  fc.constant([{ errorCode: "REQUEST_LIMIT_EXCEEDED", message: "TotalRequests Limit exceeded." }]),
  fc.constant({ error: { code: "insufficient_quota", errors: [{ reason: "dailyLimitExceeded" }] } }),
);
const status = fc.oneof(fc.constantFrom(200, 403, 429, 503, 529, 400), fc.integer({ min: 100, max: 599 }), fc.integer(), fc.double());
const input = fc.record({
  request: fc.record({ method: fc.constantFrom("GET", "POST", "PATCH"), url: fc.oneof(fc.constantFrom(...hosts).map((h) => `https://${h}/api/x`), fc.string()) }),
  response: fc.record({ status, headers, body }),
  provider: fc.option(fc.oneof(fc.constantFrom(...dialects.map((d) => d.id)), fc.string()), { nil: undefined }),
});

describe("classify, for any status, header map and body", () => {
  it("never throws, gives a null or finite non-negative integer wait, and is deterministic", () => {
    fc.assert(
      fc.property(input, fc.integer({ min: 0, max: 4_102_444_800_000 }), (value, nowMs) => {
        const verdict = classify(value, { nowMs });
        if (verdict.minWaitMs !== null) {
          expect(Number.isSafeInteger(verdict.minWaitMs)).toBe(true);
          expect(verdict.minWaitMs).toBeGreaterThanOrEqual(0);
        }
        expect(typeof verdict.reason).toBe("string");
        expect(classify(value, { nowMs })).toEqual(verdict);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("HTTP-date readings do not depend on the machine's time zone", () => {
  const originalTz = process.env.TZ;
  afterAll(() => {
    if (originalTz === undefined) delete process.env.TZ;
    else process.env.TZ = originalTz;
  });

  const samples = [
    "Sun, 06 Nov 1994 08:49:37 GMT",
    "Sunday, 06-Nov-94 08:49:37 GMT",
    "Sun Nov  6 08:49:37 1994",
    "Mon Nov 30 12:00:45 2026",
    "Mon, 30 Nov 2026 12:00:10 GMT",
    "Monday, 30-Nov-26 12:01:00 GMT",
  ];

  function readings() {
    return samples.map((value) => ({
      parsed: parseHttpDate(value, NOW_MS),
      verdict: classify({ request: { url: "http://api.example.test/" }, response: { status: 429, headers: { "retry-after": value, date: "Mon, 30 Nov 2026 12:00:00 GMT" } } }, { nowMs: NOW_MS }),
    }));
  }

  it("gives identical readings under TZ=UTC and TZ=America/New_York", () => {
    process.env.TZ = "UTC";
    const utcOffset = new Date(NOW_MS).getTimezoneOffset();
    const underUtc = readings();
    process.env.TZ = "America/New_York";
    const newYorkOffset = new Date(NOW_MS).getTimezoneOffset();
    const underNewYork = readings();
    // The zone change really took effect (otherwise this test could not fail).
    expect(utcOffset).toBe(0);
    expect(newYorkOffset).toBe(300);
    // A zone-naive parser would read asctime 5 hours apart under the two zones.
    expect(new Date("Sun Nov  6 08:49:37 1994").getTime()).not.toBe(Date.UTC(1994, 10, 6, 8, 49, 37));
    expect(underNewYork).toEqual(underUtc);
    expect(underUtc.every((r) => r.parsed !== null)).toBe(true);
  });
});
