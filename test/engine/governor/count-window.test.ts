/**
 * A count shown with no reset (Shopify REST's used/limit) is read as a bucket at the documented
 * rate for its size; where a throttle's told wait brings the count back in full, it is a fixed
 * window's reset, and the window's length is the distance to the next reset told
 * (count-window.ts). Shopify's own bucket gives back a unit or a few at its told wait, and stays a
 * bucket.
 */
import { describe, expect, it } from "vitest";
import { Scope, shown, T0, type Go } from "./helpers";

const LIMIT = 40;
/** Shopify REST's header as the dialect reads it: used/limit, the documented 2 per s for a bucket of 40, no reset. */
const count = (remaining: number) => ({ budget: shown({ limit: LIMIT, remaining, restorePerSecond: LIMIT / 20, restoreEstimated: true }) });

/** The probe at T0 and 39 more at T0 + 100, all answered 100 ms after their start: the count spent by T0 + 200. */
function spentFirstWindow(): Scope {
  const scope = Scope.afterReading(T0 + 100, count(LIMIT - 1).budget);
  const burst: Go[] = [];
  for (let i = 0; i < LIMIT - 1; i++) burst.push(scope.go(T0 + 100));
  let left = LIMIT - 1;
  for (const go of burst) scope.answer(go, go.atMs + 100, count(--left));
  expect(left).toBe(0);
  return scope;
}

/** A claim granted at or after nowMs, sent at its start and throttled 100 ms later with the server's wait. */
function throttledAt(scope: Scope, nowMs: number, waitMs: number): Go {
  const go = scope.go(nowMs);
  scope.throttle(go, go.atMs + 100, waitMs, count(0));
  return go;
}

describe("a count shown with no reset", () => {
  it("that comes back in full at a throttle's told wait is a fixed window: its length is the next told reset's distance, and its units go at each reset", () => {
    const scope = spentFirstWindow();
    // The estimated rate gives a unit back 500 ms on; the fixed window throttles it, 300 ms before its reset.
    const paced = throttledAt(scope, T0 + 200, 300);
    const toldResetMs = paced.atMs + 100 + 300;
    expect(scope.state).toMatchObject({ refill: "bucket", countResetAtMs: toldResetMs });
    // The next request goes at the told wait, alone (the estimate would wait 500 ms from the last
    // of its starts), and finds the count back in full.
    const first = scope.go(paced.atMs + 100);
    expect(first).toMatchObject({ atMs: toldResetMs, probe: true });
    const sentMs = first.atMs;
    scope.answer({ seq: first.seq, atMs: sentMs }, sentMs + 100, count(LIMIT - 1));
    expect(scope.state).toMatchObject({ refill: "fixed", windowMs: null, countResetAtMs: toldResetMs, reserveUnits: 0 });
    // Its units go at once, one by one as the count shows them.
    const window: Go[] = [];
    for (let i = 0; i < LIMIT - 1; i++) window.push(scope.go(sentMs + 100));
    expect(window.every((go) => go.atMs === sentMs + 100)).toBe(true);
    let left = LIMIT - 1;
    for (const go of window) scope.answer(go, go.atMs + 100, count(--left));
    // Spent, with no length known: one request, whose throttle tells the next reset, a second after the last.
    const lengthProbe = scope.go(sentMs + 200);
    expect(lengthProbe.probe).toBe(true);
    const nextResetMs = toldResetMs + 1000;
    scope.throttle(lengthProbe, lengthProbe.atMs + 100, nextResetMs - (lengthProbe.atMs + 100), count(0));
    expect(scope.state).toMatchObject({ refill: "fixed", windowMs: 1000, windowSource: "inferred", countResetAtMs: nextResetMs });
    // That throttle was expected: no reserve for others.
    expect(scope.state.reserveUnits).toBe(0);
    // The next window's units wait for its reset and go there (its last one held for an answer
    // that tells a window from a limit on requests in flight, as any fixed window's).
    const next = Array.from({ length: LIMIT }, () => scope.claim(lengthProbe.atMs + 100));
    const granted = next.filter((result): result is Go => result.kind === "go");
    expect(granted.length).toBeGreaterThanOrEqual(LIMIT - 1);
    expect(granted.every((go) => go.atMs === nextResetMs)).toBe(true);
  });

  it("sends one request at a throttle's told wait ahead of starts the estimated rate laid out later", () => {
    const scope = spentFirstWindow();
    // Two starts at the estimated rate (a unit per 500 ms): the second laid past the first's told wait.
    const paced = scope.go(T0 + 200);
    const later = scope.go(T0 + 200);
    expect(later.atMs).toBeGreaterThan(paced.atMs + 400);
    scope.throttle(paced, paced.atMs + 100, 300, count(0));
    const toldResetMs = paced.atMs + 400;
    expect(scope.go(paced.atMs + 100)).toMatchObject({ atMs: toldResetMs, probe: true });
  });

  it("that comes back by a unit or a few at the told wait (Shopify's own bucket, Retry-After: 2.0) stays a bucket", () => {
    const scope = spentFirstWindow();
    const paced = throttledAt(scope, T0 + 200, 2000);
    const toldResetMs = paced.atMs + 100 + 2000;
    const after = scope.go(toldResetMs);
    scope.answer(after, Math.max(after.atMs, toldResetMs) + 100, count(3));
    expect(scope.state).toMatchObject({ refill: "bucket", windowSource: "inferred" });
  });

  it("that comes back in full after the estimated rate could have refilled it (a long idle) stays a bucket", () => {
    const scope = spentFirstWindow();
    const paced = throttledAt(scope, T0 + 200, 300);
    // 30 s on: 40 per 20 s refills a bucket of 40 twice over.
    const later = scope.go(paced.atMs + 30_000);
    scope.answer(later, later.atMs + 100, count(LIMIT - 1));
    expect(scope.state).toMatchObject({ refill: "bucket", windowSource: "inferred" });
  });
});
