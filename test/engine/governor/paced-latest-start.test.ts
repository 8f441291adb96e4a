/**
 * Two latest starts (ClaimRequest): the inline limit bounds a wait the API holds the scope for (a
 * Retry-After, a backoff after its throttles); the request's own time budget bounds a start the
 * scope's pacing sets (its window's units, the claims ahead of it). A minute's window three
 * windows deep is its budget spent in full, not the API closed.
 */
import { describe, expect, it } from "vitest";
import { claim } from "../../../src/engine/governor";
import { Scope, shown, T0 } from "./helpers";

const INLINE_MS = 120_000;
const BUDGET_MS = 300_000;

/** A fixed window of 20 per 60 s, shown by the probe's answer: 19 left until T0 + 60 s. */
function minuteWindow(): Scope {
  return Scope.afterReading(T0 + 50, shown({ remaining: 19, limit: 20, resetAtMs: T0 + 60_000, windowMs: 60_000 }));
}

/** Claims at nowMs (with latestPacedStartMs where given) until an answer is no go; returns the goes and that answer. */
function claimUntilNoGo(scope: Scope, nowMs: number, latestPacedStartMs?: number): { goes: number[]; last: ReturnType<Scope["claim"]> } {
  const goes: number[] = [];
  for (;;) {
    const request = { nowMs, latestStartMs: nowMs + INLINE_MS, ...(latestPacedStartMs === undefined ? {} : { latestPacedStartMs }) };
    const next = claim(scope.state, request, scope.options);
    scope.state = next.state;
    if (next.result.kind !== "go") return { goes, last: next.result };
    goes.push(next.result.atMs);
  }
}

describe("a start the scope's pacing sets waits as long as the request's time budget; the API's hold only as long as the inline limit", () => {
  it("a minute's window paced three windows ahead: granted within the budget, deferred past it", () => {
    const { goes, last } = claimUntilNoGo(minuteWindow(), T0 + 100, T0 + 100 + BUDGET_MS);
    // 19 in this window, 20 in each of the next four (from T0 + 60 s, 120 s, 180 s, 240 s), and the
    // first of the one from T0 + 300 s (still within 5 minutes of T0 + 100 ms); its next start is not.
    expect(goes.length).toBe(19 + 4 * 20 + 1);
    expect(Math.max(...goes)).toBeGreaterThan(T0 + 100 + INLINE_MS);
    expect(Math.max(...goes)).toBeLessThanOrEqual(T0 + 100 + BUDGET_MS);
    expect(last).toMatchObject({ kind: "defer" });
    expect(last.kind === "defer" && last.notBeforeMs).toBeGreaterThan(T0 + 100 + BUDGET_MS);
  });

  it("without a paced latest start, the inline limit bounds the pacing too (as before)", () => {
    const { goes, last } = claimUntilNoGo(minuteWindow(), T0 + 100);
    expect(goes.length).toBe(19 + 20 + 1);
    expect(Math.max(...goes)).toBeLessThanOrEqual(T0 + 100 + INLINE_MS);
    expect(last).toMatchObject({ kind: "defer" });
  });

  it("a wait the server told, past the inline limit, is deferred however far the paced latest start reaches", () => {
    const scope = minuteWindow();
    const throttled = scope.go(T0 + 100);
    scope.throttle(throttled, T0 + 150, 180_000);
    const request = { nowMs: T0 + 200, latestStartMs: T0 + 200 + INLINE_MS, latestPacedStartMs: T0 + 200 + BUDGET_MS };
    const { result } = claim(scope.state, request, scope.options);
    expect(result).toMatchObject({ kind: "defer", notBeforeMs: T0 + 150 + 180_000 });
  });

  it("a paced latest start earlier than the inline one, or no time (NaN), is the inline one", () => {
    for (const latestPacedStartMs of [T0 + 1000, Number.NaN]) {
      expect(claimUntilNoGo(minuteWindow(), T0 + 100, latestPacedStartMs).goes.length).toBe(19 + 20 + 1);
    }
  });
});
