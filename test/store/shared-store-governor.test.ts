/**
 * A finding about the TypeScript governor that a shared store brings out (reported to the lead,
 * not fixed here: the governor's semantics are the lead's). When executions share one state
 * (Redis, several processes), their requests reach the API in a different order than their slots
 * were granted: a later claim can be counted before an earlier one. learnOthers then reads the
 * difference as spending by others, and over two readings a few ms apart one unit becomes a huge
 * rate, so the governor keeps most of the window for "others" that do not exist (in the lab's
 * fan-out over 5 processes: windows half used, makespan about 1.5 x ideal, no throttle).
 *
 * `it.fails`: this passes while the behaviour is as described; once the governor tells reordering
 * from others, it fails: then drop `.fails` (and the Lua port follows, see redis-differential).
 */
import { describe, expect, it } from "vitest";
import { claim, DEFAULT_GOVERNOR_OPTIONS, emptyState, observe, type ClaimResult, type GovernorState, type Observation } from "../../src/engine";

const T = Date.parse("2027-01-04T09:00:00.000Z");
const budget = (remaining: number) => ({ remaining, limit: 100, resetAtMs: T + 10_000, windowMs: null, restorePerSecond: null, unitsPerRequest: null });
const ok = (seq: number, sentAtMs: number, nowMs: number, remaining: number): Observation => ({ seq, sentAtMs, nowMs, kind: "ok", limitType: "none", waitMs: null, waitFromServer: false, budget: budget(remaining), reason: "" });

describe("the governor with requests that reach the API out of their slots' order (several executions sharing one state)", () => {
  it("one request counted before an earlier one, 2 ms apart, does not keep the window's last 95 units from 90 claims", () => {
    let state: GovernorState = emptyState(T);
    const take = (nowMs: number): ClaimResult => {
      const next = claim(state, { nowMs, latestStartMs: nowMs + 120_000 }, DEFAULT_GOVERNOR_OPTIONS);
      state = next.state;
      return next.result;
    };
    take(T); // seq 1: the cold scope's probe
    state = observe(state, ok(1, T, T + 50, 99), DEFAULT_GOVERNOR_OPTIONS);
    take(T + 60); // seq 2, 3 and 4, from three executions
    take(T + 60);
    take(T + 60);
    state = observe(state, ok(2, T + 60, T + 110, 98), DEFAULT_GOVERNOR_OPTIONS);
    // seq 4 (sent at T+61) reached the API before seq 3 (sent at T+62): seq 3's answer counts both.
    state = observe(state, ok(3, T + 62, T + 112, 96), DEFAULT_GOVERNOR_OPTIONS);
    const results = Array.from({ length: 90 }, () => take(T + 113));
    const afterReset = results.filter((r) => r.kind !== "go" || r.atMs >= T + 10_000);
    // Today: othersPerMs 0.5 (one unit over 2 ms), and 20 of the 90 claims go to the next window.
    expect(state.othersPerMs).toBeLessThan(0.01);
    expect(afterReset).toEqual([]);
  });
});
