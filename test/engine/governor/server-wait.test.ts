/**
 * The server's wait is a floor under every start in the scope (Retry-After, RFC 9110 §10.2.3:
 * https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3): no claim is granted before it, a claim
 * that cannot start by its latest start is deferred to it, and holdUntil only ever raises it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_EPOCH_MS } from "../../../src/engine/time";
import { HOUR_MS, Scope, shown, T0 } from "./helpers";

/** Scopes in the states a throttle can find them in; each returns the throttled claim's scope. */
const beforeThrottle: Record<string, () => { scope: Scope; seq: number; atMs: number }> = {
  cold: () => {
    const scope = new Scope();
    return { scope, ...scope.go(T0) };
  },
  "budget shown": () => {
    const scope = Scope.afterReading(T0 + 30, shown({ remaining: 5, limit: 10, resetAtMs: T0 + 60_000, windowMs: 60_000 }));
    scope.go(T0 + 40);
    return { scope, ...scope.go(T0 + 40) };
  },
  "no budget, slow start": () => {
    const scope = new Scope();
    scope.answer(scope.go(T0), T0 + 30);
    scope.go(T0 + 40);
    return { scope, ...scope.go(T0 + 40) };
  },
  "breaker about to open": () => {
    const scope = new Scope(T0, { breakerThreshold: 1 });
    return { scope, ...scope.go(T0) };
  },
};

describe("the server's wait is a floor", () => {
  it("no claim after a throttle is granted before now + the server's wait, whatever the scope knew (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(beforeThrottle)),
        fc.integer({ min: 0, max: 40 * 86_400_000 }),
        fc.array(fc.record({ afterMs: fc.integer({ min: 0, max: 2 * HOUR_MS }), latestAfterMs: fc.integer({ min: 0, max: 4 * HOUR_MS }), draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }) }), { minLength: 1, maxLength: 20 }),
        (name, waitMs, claims) => {
          const { scope, seq, atMs } = beforeThrottle[name]!();
          const answeredMs = atMs + 50;
          scope.throttle({ seq, atMs }, answeredMs, waitMs);
          const floorMs = answeredMs + waitMs;
          expect(scope.state.notBeforeMs).toBe(floorMs);
          let nowMs = answeredMs;
          for (const c of claims) {
            nowMs += c.afterMs;
            const latestStartMs = nowMs + c.latestAfterMs;
            const result = scope.claim(nowMs, latestStartMs, c.draw);
            if (result.kind === "go") {
              expect(result.atMs).toBeGreaterThanOrEqual(floorMs);
              expect(result.atMs).toBeGreaterThanOrEqual(nowMs);
              expect(result.atMs).toBeLessThanOrEqual(latestStartMs);
            } else if (result.kind === "defer") {
              expect(result.notBeforeMs).toBeGreaterThan(latestStartMs);
              expect(result.notBeforeMs).toBeGreaterThanOrEqual(floorMs);
            } else {
              expect(result.untilMs).toBeGreaterThanOrEqual(nowMs);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it.each([
    { case: "latest start just before the floor", latestAfterMs: 29_999, kind: "defer" },
    { case: "latest start at the floor", latestAfterMs: 30_000, kind: "go" },
    { case: "latest start now (the inline limit is 0)", latestAfterMs: 0, kind: "defer" },
  ])("after Retry-After 30 s, a claim with its $case is $kind", ({ latestAfterMs, kind }) => {
    const scope = new Scope();
    const probe = scope.go(T0);
    scope.throttle(probe, T0 + 100, 30_000, { reason: "429: Retry-After 30", limitType: "quota" });
    const result = scope.claim(T0 + 100, T0 + 100 + latestAfterMs);
    expect(result.kind).toBe(kind);
    if (result.kind === "defer") {
      // Nothing reserved; resume at the server's floor, with its reason and limit type.
      expect(result).toEqual({ kind: "defer", notBeforeMs: T0 + 30_100, why: "429: Retry-After 30", limitType: "quota" });
      expect(scope.state.seq).toBe(1);
    } else if (result.kind === "go") {
      expect(result.atMs).toBe(T0 + 30_100);
    }
  });

  it("defers to the budget's next start (not the floor) when the budget holds the claim longer than the server's wait", () => {
    const scope = Scope.afterReading(T0 + 50, shown({ remaining: 0, limit: 10, resetAtMs: T0 + 60_000, windowMs: 60_000 }));
    const result = scope.claim(T0 + 60, T0 + 10_000);
    expect(result).toMatchObject({ kind: "defer", limitType: "burst" });
    if (result.kind === "defer") expect(result.notBeforeMs).toBeGreaterThanOrEqual(T0 + 60_000);
    expect(scope.state.seq).toBe(1);
  });

  it("a later throttle with a shorter wait does not lower the floor", () => {
    const scope = new Scope();
    scope.answer(scope.go(T0), T0 + 50, { budget: shown({ remaining: 5, limit: 10, resetAtMs: T0 + 60_000, windowMs: 60_000 }) });
    const a = scope.go(T0 + 60);
    const b = scope.go(T0 + 60);
    scope.throttle(a, T0 + 100, 60_000);
    scope.throttle(b, T0 + 110, 1000, { reason: "a shorter wait" });
    expect(scope.state.notBeforeMs).toBe(T0 + 60_100);
    expect(scope.state.notBeforeReason).toBe("429 Too Many Requests");
  });

  it.each([
    { waitMs: Number.POSITIVE_INFINITY, floorMs: MAX_EPOCH_MS },
    { waitMs: 1e300, floorMs: MAX_EPOCH_MS },
    { waitMs: Number.NaN, floorMs: 0 },
    { waitMs: -5, floorMs: 0 },
  ])("a wait of $waitMs ms keeps the floor a valid instant ($floorMs)", ({ waitMs, floorMs }) => {
    const scope = new Scope();
    const probe = scope.go(T0);
    scope.throttle(probe, T0 + 10, waitMs);
    expect(scope.state.notBeforeMs).toBe(floorMs);
    expect(() => new Date(scope.state.notBeforeMs).toISOString()).not.toThrow();
  });
});

describe("holdUntil is set-if-later", () => {
  it.each([
    { case: "later", firstMs: T0 + 1000, secondMs: T0 + 5000, expectedMs: T0 + 5000, reason: "second" },
    { case: "earlier", firstMs: T0 + 5000, secondMs: T0 + 1000, expectedMs: T0 + 5000, reason: "first" },
    { case: "equal", firstMs: T0 + 5000, secondMs: T0 + 5000, expectedMs: T0 + 5000, reason: "first" },
    { case: "zero", firstMs: T0 + 5000, secondMs: 0, expectedMs: T0 + 5000, reason: "first" },
    { case: "NaN", firstMs: T0 + 5000, secondMs: Number.NaN, expectedMs: T0 + 5000, reason: "first" },
    { case: "beyond the Date range", firstMs: T0, secondMs: 1e300, expectedMs: MAX_EPOCH_MS, reason: "second" },
  ])("a second hold that is $case keeps the later one", ({ firstMs, secondMs, expectedMs, reason }) => {
    const scope = new Scope();
    scope.holdUntil(firstMs, "first", "quota");
    scope.holdUntil(secondMs, "second", "burst");
    expect(scope.state.notBeforeMs).toBe(expectedMs);
    expect(scope.state.notBeforeReason).toBe(reason);
    expect(scope.state.notBeforeType).toBe(reason === "first" ? "quota" : "burst");
  });

  it("never lowers the floor a throttle set (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 86_400_000 }), fc.array(fc.double({ noNaN: false }), { maxLength: 10 }), (waitMs, holds) => {
        const scope = new Scope();
        scope.throttle(scope.go(T0), T0, waitMs);
        let floorMs = scope.state.notBeforeMs;
        for (const untilMs of holds) {
          scope.holdUntil(untilMs);
          expect(scope.state.notBeforeMs).toBeGreaterThanOrEqual(floorMs);
          floorMs = scope.state.notBeforeMs;
        }
      }),
    );
  });

  it("holds claims: the next go is at the hold at the earliest, a claim that cannot wait that long is deferred", () => {
    const scope = new Scope();
    scope.holdUntil(T0 + 120_000, "Record Backoff: quota spent", "quota");
    expect(scope.claim(T0, T0 + 60_000)).toEqual({ kind: "defer", notBeforeMs: T0 + 120_000, why: "Record Backoff: quota spent", limitType: "quota" });
    expect(scope.go(T0, T0 + 120_000).atMs).toBe(T0 + 120_000);
  });

  it("does not change the state it is given (a store may still hold it)", () => {
    const scope = new Scope();
    const before = scope.state;
    const copy = structuredClone(before);
    scope.holdUntil(T0 + 1000);
    expect(before).toEqual(copy);
  });
});

describe("a broken random source", () => {
  it("a NaN or out-of-range draw is no draw: the start is what it is without one, never earlier", () => {
    const start = Scope.afterReading(T0 + 50, shown({ remaining: 5, limit: 20, resetAtMs: null, windowMs: 10_000 }));
    const next = start.go(T0 + 100);
    start.answer(next, T0 + 400, { budget: shown({ remaining: 2, limit: 20, resetAtMs: null, windowMs: 10_000 }) });
    const undrawn = new Scope(T0, {}, start.state).claim(T0 + 500);
    for (const random of [Number.NaN, -1, 1, 7, Number.POSITIVE_INFINITY]) {
      expect(new Scope(T0, {}, start.state).claim(T0 + 500, T0 + HOUR_MS, random)).toEqual(undrawn);
    }
  });
});
