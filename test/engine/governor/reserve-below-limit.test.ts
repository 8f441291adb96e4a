/**
 * Others' share of a bucket (the reserve collisions taught, their spending seen) never takes so
 * much that a full bucket leaves less than a request: a reserve learned while the limit read higher
 * outlives a later lesson that lowers the limit, and every claim then laid its start beyond its own
 * time, asked again and again until its deadline (model.ts fromBucket). Found in a cross-flow run
 * (lab:random seed 1121 #0): a bucket of 1 per 1,567 ms with 2.7 units reserved for others, two
 * jobs deferred after waiting out their 10 minutes.
 */
import { describe, expect, it } from "vitest";
import { emptyState, type GovernorState } from "../../../src/engine/governor";
import { Scope, T0 } from "./helpers";

const WINDOW_MS = 1567;

/** A bucket of `limit` per WINDOW_MS, read empty at T0, whose reserve for others is `reserveUnits`. */
function bucketWithReserve(limit: number, reserveUnits: number, othersPerMs = 0): Scope {
  const state: GovernorState = {
    ...emptyState(T0),
    refill: "bucket",
    limit,
    windowMs: WINDOW_MS,
    windowSource: "inferred",
    concurrency: "ruled-out",
    reserveUnits,
    othersPerMs,
    seq: 10,
    learnedAtSeq: 10,
    anchor: { remaining: 0, seq: 10, atMs: T0, resetAtMs: 0, lateUnits: 0, answeredAtMs: T0 + 100, ownOutAtSend: 1 },
  };
  return new Scope(T0, {}, state);
}

describe("others' share of a bucket", () => {
  it("leaves a full bucket a request's unit however large the reserve grew: the claim goes, not waits for ever", () => {
    const scope = bucketWithReserve(1, 2.7, 0.0117);
    // Ten windows on, the bucket is full: the one unit is ours to take.
    const result = scope.claim(T0 + 10 * WINDOW_MS);
    expect(result).toMatchObject({ kind: "go", atMs: T0 + 10 * WINDOW_MS });
  });

  it("still keeps the reserve where the bucket holds more than it: a start waits for the units others keep", () => {
    const scope = bucketWithReserve(10, 4);
    // Refilled 5 units of 10 by T0 + half a window: 4 are others', 1 is ours.
    const first = scope.claim(T0 + WINDOW_MS / 2);
    expect(first).toMatchObject({ kind: "go" });
    // A second needs one more unit's refill beyond the reserve.
    const second = scope.claim(T0 + WINDOW_MS / 2);
    expect(second.kind === "go" ? second.atMs : second.kind === "wait" ? second.untilMs : second.notBeforeMs).toBeGreaterThan(T0 + WINDOW_MS / 2);
  });
});
