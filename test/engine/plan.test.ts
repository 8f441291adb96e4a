import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { backoffMs, classify, DEFAULT_POLICY, exponentialCeilingMs, plan } from "../../src/engine";
import type { RetryPolicy, Verdict } from "../../src/engine";
import { seededRandom } from "../../src/lab/clock";

const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const first = { attempts: 1, firstAttemptAtMs: NOW_MS };

function verdictFor(status: number, headers: Record<string, string> = {}): Verdict {
  return classify({ request: { method: "GET", url: "http://api.example.test/x" }, response: { status, headers } }, { nowMs: NOW_MS });
}

function withWait(overrides: Partial<Verdict>): Verdict {
  return { ...verdictFor(429), ...overrides };
}

describe("plan: the server's wait is a floor", () => {
  it("retries after the server's wait plus a small jitter on top", () => {
    const decision = plan(verdictFor(429, { "Retry-After": "2" }), first, DEFAULT_POLICY, { nowMs: NOW_MS, random: () => 0.5 });
    expect(decision).toMatchObject({ decision: "retry", waitMs: 2100, waitSource: "retry-after", notBefore: "2026-11-30T12:00:02.100Z" });
  });

  it("never shortens the server's wait, whatever the jitter kind and random draw", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60_000 }),
        fc.constantFrom("full", "equal", "decorrelated", "none") as fc.Arbitrary<RetryPolicy["jitter"]>,
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (minWaitMs, jitter, draw) => {
          const decision = plan(withWait({ minWaitMs, waitSource: "retry-after" }), first, { ...DEFAULT_POLICY, jitter }, { nowMs: NOW_MS, random: () => draw });
          expect(decision.decision).toBe("retry");
          if (decision.decision !== "retry") return;
          expect(decision.waitMs).toBeGreaterThanOrEqual(minWaitMs);
          expect(decision.waitMs).toBeLessThanOrEqual(minWaitMs + DEFAULT_POLICY.serverWaitJitterMaxMs);
        },
      ),
    );
  });

  it("spreads workers throttled together: different draws give different waits above the floor", () => {
    const random = seededRandom(7);
    const waits = Array.from({ length: 20 }, () => {
      const decision = plan(withWait({ minWaitMs: 5000, waitSource: "retry-after" }), first, DEFAULT_POLICY, { nowMs: NOW_MS, random });
      return decision.decision === "retry" ? decision.waitMs : -1;
    });
    expect(new Set(waits).size).toBeGreaterThan(15);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(5000);
  });

  it("scales a per-attempt wait (HubSpot's rolling window) by the attempts made, and no other", () => {
    const perAttempt = withWait({ minWaitMs: 1000, waitSource: "x-hubspot-ratelimit-interval-milliseconds x attempt" });
    const none = { ...DEFAULT_POLICY, jitter: "none" as const };
    const waits = [1, 2, 3].map((attempts) => plan(perAttempt, { attempts, firstAttemptAtMs: NOW_MS }, none, { nowMs: NOW_MS, random: () => 0.5 }));
    expect(waits.map((d) => (d.decision === "retry" ? d.waitMs : -1))).toEqual([1000, 2000, 3000]);
    const fixed = plan(withWait({ minWaitMs: 1000, waitSource: "retry-after" }), { attempts: 3, firstAttemptAtMs: NOW_MS }, none, { nowMs: NOW_MS, random: () => 0.5 });
    expect(fixed).toMatchObject({ decision: "retry", waitMs: 1000 });
  });

  it.each([
    { throttledAttempts: undefined, spreadMs: 40 },
    { throttledAttempts: 1, spreadMs: 40 },
    { throttledAttempts: 2, spreadMs: 1000 },
    { throttledAttempts: 3, spreadMs: 2000 },
    { throttledAttempts: 4, spreadMs: 4000 },
  ])("spreads a request throttled again after the server's wait as a backoff does where others are unseen: throttled $throttledAttempts time(s), up to $spreadMs ms on top", ({ throttledAttempts, spreadMs }) => {
    const history = { attempts: throttledAttempts ?? 1, firstAttemptAtMs: NOW_MS, othersUnseen: true, ...(throttledAttempts === undefined ? {} : { throttledAttempts }) };
    const waitAt = (draw: number, seen = false): number => {
      const decision = plan(withWait({ minWaitMs: 400, waitSource: "retry-after" }), { ...history, othersUnseen: !seen }, DEFAULT_POLICY, { nowMs: NOW_MS, random: () => draw });
      return decision.decision === "retry" ? decision.waitMs : -1;
    };
    expect(waitAt(0)).toBe(400);
    expect(waitAt(0.999999)).toBe(400 + spreadMs);
    // Where the scope's state shows every execution's claims, the governor spaces them: a tenth of the wait.
    expect(waitAt(0.999999, true)).toBe(440);
  });

  it("adds no jitter with jitter kind none", () => {
    const decision = plan(withWait({ minWaitMs: 5000, waitSource: "retry-after" }), first, { ...DEFAULT_POLICY, jitter: "none" }, { nowMs: NOW_MS, random: () => 0.9 });
    expect(decision).toMatchObject({ decision: "retry", waitMs: 5000 });
  });
});

describe("plan: long waits defer, never retry early", () => {
  it("defers a wait longer than the inline limit, with notBefore at the server's time", () => {
    const decision = plan(verdictFor(429, { "Retry-After": "3600" }), first, DEFAULT_POLICY, { nowMs: NOW_MS, random: () => 0.5 });
    expect(decision).toMatchObject({ decision: "defer", waitMs: 3_600_000, notBefore: "2026-11-30T13:00:00.000Z" });
  });

  it("defers a wait that fits the inline limit but ends past the deadline", () => {
    const policy = { ...DEFAULT_POLICY, deadlineMs: NOW_MS + 10_000 };
    const decision = plan(verdictFor(429, { "Retry-After": "20" }), first, policy, { nowMs: NOW_MS, random: () => 0.5 });
    expect(decision).toMatchObject({ decision: "defer", waitMs: 20_000 });
  });

  it("defers when the wait passes maxTotalMs counted from the first attempt", () => {
    // 20 s of the default 10 minutes left: a 30 s wait would end past them.
    const history = { attempts: 2, firstAttemptAtMs: NOW_MS - (DEFAULT_POLICY.maxTotalMs - 20_000) };
    const decision = plan(verdictFor(429, { "Retry-After": "30" }), history, DEFAULT_POLICY, { nowMs: NOW_MS, random: () => 0.5 });
    expect(decision.decision).toBe("defer");
  });

  it("takes the floor without jitter when the jitter alone would cross the inline limit", () => {
    const policy = { ...DEFAULT_POLICY, maxInlineWaitMs: 10_000 };
    const decision = plan(withWait({ minWaitMs: 10_000, waitSource: "retry-after" }), first, policy, { nowMs: NOW_MS, random: () => 0.9 });
    expect(decision).toMatchObject({ decision: "retry", waitMs: 10_000 });
  });

  it("defers a quota with a known reset instead of retrying it", () => {
    const quota = withWait({ limitType: "quota", retryable: false, minWaitMs: 12 * 3_600_000, waitSource: "retry-after" });
    expect(plan(quota, first, DEFAULT_POLICY, { nowMs: NOW_MS, random: () => 0.5 })).toMatchObject({ decision: "defer", notBefore: "2026-12-01T00:00:00.000Z" });
  });

  it("fails a quota with no known reset", () => {
    const quota = withWait({ limitType: "quota", retryable: false, minWaitMs: null, waitSource: null });
    expect(plan(quota, first, DEFAULT_POLICY, { nowMs: NOW_MS, random: () => 0.5 })).toMatchObject({ decision: "fail", notBefore: null });
  });
});

describe("plan: what is never retried, and hard caps", () => {
  it.each([
    ["permission", 403],
    ["validation", 400],
  ])("fails a %s error at once", (limitType, status) => {
    const verdict = verdictFor(status);
    expect(verdict.limitType).toBe(limitType);
    expect(plan(verdict, first, DEFAULT_POLICY, { nowMs: NOW_MS, random: () => 0.5 }).decision).toBe("fail");
  });

  it("fails when the server says not to retry", () => {
    const verdict = withWait({ retryAllowed: false, minWaitMs: 1000 });
    expect(plan(verdict, first, DEFAULT_POLICY, { nowMs: NOW_MS, random: () => 0.5 }).decision).toBe("fail");
  });

  it("is done on a success or a final non-throttle answer", () => {
    expect(plan(verdictFor(200), first, DEFAULT_POLICY, { nowMs: NOW_MS, random: () => 0.5 }).decision).toBe("done");
    expect(plan(verdictFor(404), first, DEFAULT_POLICY, { nowMs: NOW_MS, random: () => 0.5 }).decision).toBe("done");
  });

  it("fails after maxAttempts, carrying the server's notBefore for whoever resumes", () => {
    const history = { attempts: DEFAULT_POLICY.maxAttempts, firstAttemptAtMs: NOW_MS };
    const decision = plan(verdictFor(429, { "Retry-After": "2" }), history, DEFAULT_POLICY, { nowMs: NOW_MS, random: () => 0.5 });
    expect(decision).toMatchObject({ decision: "fail", notBefore: "2026-11-30T12:00:02.000Z" });
  });

  it("fails rather than back off past the total-time limit when the server gave no wait", () => {
    const history = { attempts: 3, firstAttemptAtMs: NOW_MS - DEFAULT_POLICY.maxTotalMs + 100 };
    const decision = plan(verdictFor(429), history, { ...DEFAULT_POLICY, jitter: "none" }, { nowMs: NOW_MS, random: () => 0.5 });
    // A throttle is resumed after the backoff it would have waited (500 ms x 2^2); a 503 is given up.
    expect(decision).toMatchObject({ decision: "fail", notBefore: new Date(NOW_MS + 2000).toISOString() });
    expect(plan(verdictFor(503), history, { ...DEFAULT_POLICY, jitter: "none" }, { nowMs: NOW_MS, random: () => 0.5 })).toMatchObject({ decision: "fail", notBefore: null });
  });

  it("a throttle with no wait named that runs out of attempts carries the backoff's notBefore to resume from; a 503 does not", () => {
    const history = { attempts: 5, firstAttemptAtMs: NOW_MS };
    const policy = { ...DEFAULT_POLICY, maxAttempts: 5, jitter: "none" as const };
    const throttled = plan(verdictFor(429), history, policy, { nowMs: NOW_MS, random: () => 0.5 });
    expect(throttled).toMatchObject({ decision: "fail", notBefore: new Date(NOW_MS + 500 * 2 ** (5 - 1)).toISOString() });
    expect(throttled.reason).toMatch(/^No attempt left after 5 attempt\(s\) \(maxAttempts 5\); resume at /);
    const failed = plan(verdictFor(503), history, policy, { nowMs: NOW_MS, random: () => 0.5 });
    expect(failed).toMatchObject({ decision: "fail", notBefore: null });
    expect(failed.reason).toMatch(/^Gave up after 5 attempt/);
  });

  it("a 503 that ends attempts a rate limit took before it resumes as the throttle would; a 400 after them is given up", () => {
    const history = { attempts: 5, firstAttemptAtMs: NOW_MS, throttledAttempts: 4, method: "POST" };
    const policy = { ...DEFAULT_POLICY, maxAttempts: 5, jitter: "none" as const };
    const afterThrottles = plan(verdictFor(503), history, policy, { nowMs: NOW_MS, random: () => 0.5 });
    expect(afterThrottles).toMatchObject({ decision: "fail" });
    expect(afterThrottles.decision === "fail" && afterThrottles.notBefore !== null && Date.parse(afterThrottles.notBefore) > NOW_MS).toBe(true);
    expect(afterThrottles.reason).toMatch(/^No attempt left after 5 attempt\(s\)/);
    expect(plan(verdictFor(400), history, policy, { nowMs: NOW_MS, random: () => 0.5 })).toMatchObject({ decision: "fail", notBefore: null });
  });
});

describe("fallback backoff when the server says nothing", () => {
  const base = { baseMs: 500, capMs: 30_000 };

  it("grows exponentially and stops at the cap", () => {
    expect([1, 2, 3, 4, 10, 100].map((retry) => exponentialCeilingMs(retry, 500, 30_000))).toEqual([500, 1000, 2000, 4000, 30_000, 30_000]);
    expect(backoffMs("none", { ...base, retry: 3, random: () => 0.3 })).toBe(2000);
  });

  it("keeps each jitter kind inside its range", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), fc.integer({ min: 0, max: 60_000 }), (retry, draw, previousWaitMs) => {
        const ceiling = exponentialCeilingMs(retry, 500, 30_000);
        const random = () => draw;
        const full = backoffMs("full", { ...base, retry, random });
        const equal = backoffMs("equal", { ...base, retry, random });
        const decorrelated = backoffMs("decorrelated", { ...base, retry, previousWaitMs, random });
        expect(full).toBeGreaterThanOrEqual(0);
        expect(full).toBeLessThanOrEqual(ceiling);
        expect(equal).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
        expect(equal).toBeLessThanOrEqual(ceiling);
        expect(decorrelated).toBeGreaterThanOrEqual(Math.min(500, 30_000));
        expect(decorrelated).toBeLessThanOrEqual(30_000);
      }),
    );
  });

  it("uses the chosen jitter kind when the server gives no wait", () => {
    const decision = plan(verdictFor(429), { attempts: 3, firstAttemptAtMs: NOW_MS }, { ...DEFAULT_POLICY, jitter: "equal" }, { nowMs: NOW_MS, random: () => 0 });
    expect(decision).toMatchObject({ decision: "retry", waitMs: 1000, waitSource: "backoff:equal" });
  });

  it("backs off a 5xx that names no wait from a fifth of the base, a throttle and a dropped connection from the base", () => {
    const third = { attempts: 3, firstAttemptAtMs: NOW_MS };
    const options = { nowMs: NOW_MS, random: () => 0 };
    // The third attempt's ceiling is base * 4: 2,000 ms for a throttle, 400 ms for a fault; equal jitter waits at least half.
    expect(plan(verdictFor(429), third, DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 1000 });
    expect(plan(verdictFor(503), third, DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 200 });
    expect(plan(verdictFor(502), third, { ...DEFAULT_POLICY, backoffBaseMs: 2000 }, options)).toMatchObject({ decision: "retry", waitMs: 800 });
    const dropped = plan({ ...verdictFor(503), status: 0 }, third, DEFAULT_POLICY, options);
    expect(dropped).toMatchObject({ decision: "retry", waitMs: 1000 });
  });

  it("retries a fault once at once, then backs off: a 5xx naming no wait and a read that got no answer; a throttle and a dropped write wait from the first retry", () => {
    const options = { nowMs: NOW_MS, random: () => 0.5 };
    const first = (method: string) => ({ attempts: 1, firstAttemptAtMs: NOW_MS, method });
    const noAnswer = { ...verdictFor(503), status: 0 };
    const at503 = plan(verdictFor(503), first("GET"), DEFAULT_POLICY, options);
    expect(at503).toMatchObject({ decision: "retry", waitMs: 0 });
    expect(at503.reason).toContain("at once");
    expect(plan(verdictFor(502), first("POST"), DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 0 });
    expect(plan(noAnswer, first("GET"), DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 0 });
    // Equal jitter (the default) at a draw of 0.5: three quarters of the first ceiling, the 500 ms base.
    expect(plan(noAnswer, first("POST"), DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 375 });
    expect(plan(verdictFor(429), first("GET"), DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 375 });
    // The second retry backs off from a fifth of the base, doubled: three quarters of 200 ms.
    expect(plan(verdictFor(503), { attempts: 2, firstAttemptAtMs: NOW_MS, method: "GET" }, DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 150 });
  });

  it("grows a throttle's backoff with the request's throttles, not with the faults before them", () => {
    const options = { nowMs: NOW_MS, random: () => 0.5 };
    // A 503 retried at once, then throttled: the request's first throttle waits from the first ceiling (the base).
    const afterFault = { attempts: 2, throttledAttempts: 1, firstAttemptAtMs: NOW_MS, method: "GET" };
    expect(plan(verdictFor(429), afterFault, DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 375 });
    // Its second throttle from twice the base; without the count, every attempt counts, as before.
    expect(plan(verdictFor(429), { ...afterFault, attempts: 3, throttledAttempts: 2 }, DEFAULT_POLICY, options)).toMatchObject({ waitMs: 750 });
    expect(plan(verdictFor(429), { attempts: 2, firstAttemptAtMs: NOW_MS }, DEFAULT_POLICY, options)).toMatchObject({ waitMs: 750 });
  });

  it("backs off a dropped write from the base and a dropped read from a fifth of it", () => {
    const options = { nowMs: NOW_MS, random: () => 0 };
    const noAnswer = { ...verdictFor(503), status: 0 };
    const after = (method: string) => plan(noAnswer, { attempts: 3, firstAttemptAtMs: NOW_MS, method }, DEFAULT_POLICY, options);
    for (const method of ["POST", "PATCH", "PUT", "DELETE"]) expect(after(method)).toMatchObject({ decision: "retry", waitMs: 1000 });
    for (const method of ["GET", "HEAD", "OPTIONS"]) expect(after(method)).toMatchObject({ decision: "retry", waitMs: 200 });
    // A throttle keeps the base whatever the method.
    expect(plan(verdictFor(429), { attempts: 3, firstAttemptAtMs: NOW_MS, method: "GET" }, DEFAULT_POLICY, options)).toMatchObject({ waitMs: 1000 });
  });

  // Either hint from the store: a place frees when the answer comes (placesFreeOnAnswer), or the state sees every claim
  // on the budget (claimsAllSeen). Without one (or where the store cannot tell), the whole base, as for a throttle.
  it.each([
    { hint: "placesFreeOnAnswer", where: "the scope limits requests in flight" },
    { hint: "claimsAllSeen", where: "the state sees every claim on the budget" },
  ] as const)("backs off a dropped write from a fifth of the base where $where ($hint), and still not at once", ({ hint }) => {
    const options = { nowMs: NOW_MS, random: () => 0.5 };
    const noAnswer = { ...verdictFor(503), status: 0 };
    const post = (attempts: number, told?: boolean) => ({ attempts, firstAttemptAtMs: NOW_MS, method: "POST", [hint]: told });
    // Equal jitter at a draw of 0.5: three quarters of the ceiling, 100 ms (a fifth of the base) on the first retry, then 200 ms.
    expect(plan(noAnswer, post(1, true), DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 75 });
    expect(plan(noAnswer, post(2, true), DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 150 });
    expect(plan(noAnswer, post(1, false), DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 375 });
    expect(plan(noAnswer, post(1), DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 375 });
    // A throttle keeps the base; a read is retried at once either way.
    expect(plan(verdictFor(429), post(1, true), DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 375 });
    expect(plan(noAnswer, { attempts: 1, firstAttemptAtMs: NOW_MS, method: "GET", [hint]: true }, DEFAULT_POLICY, options)).toMatchObject({ decision: "retry", waitMs: 0 });
  });
});
