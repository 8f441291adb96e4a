/**
 * Claims that end without an answer: release (granted but never sent: the caller deferred or was
 * aborted) gives the slot back; a lost observation (sent, no answer: timeout, reset, abort) frees
 * its in-flight entry but keeps its unit, since the server may have counted it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { claim, type GovernorState } from "../../../src/engine/governor";
import { HOUR_MS, Scope, shown, T0 } from "./helpers";

/** A scope that knows 3 per second and has spent the probe: 2 left until T0 + 1000. */
function knownScope(): Scope {
  const scope = new Scope();
  scope.answer(scope.go(T0), T0 + 40, { budget: shown({ remaining: 2, limit: 3, resetAtMs: T0 + 1000, windowMs: 1000 }) });
  return scope;
}

const units = (state: GovernorState) => state.slots.reduce((sum, [, , u]) => sum + u, 0);

describe("release", () => {
  it.each(["the latest grant", "an earlier grant"])("of %s gives its unit back: the next claim starts at once instead of after the reset", (which) => {
    const scope = knownScope();
    const a = scope.go(T0 + 50);
    const b = scope.go(T0 + 50);
    expect(claim(scope.state, { nowMs: T0 + 50, latestStartMs: T0 + HOUR_MS }, scope.options).result).toMatchObject({ atMs: T0 + 1000 });
    scope.release(which === "the latest grant" ? b.seq : a.seq);
    expect(scope.go(T0 + 50).atMs).toBe(T0 + 50);
  });

  it("takes the slot, its in-flight entry and its probe out, and nothing else", () => {
    const scope = new Scope();
    const probe = scope.go(T0);
    const before = structuredClone(scope.state);
    scope.release(probe.seq);
    expect(scope.state).toEqual({ ...before, slots: [], inFlight: [], probe: null, lastGrantMs: 0 });
    // The probe's release frees the next one at once.
    expect(scope.claim(T0 + 1)).toMatchObject({ kind: "go", probe: true, atMs: T0 + 1 });
  });

  it("of a seq it does not know changes nothing that matters", () => {
    const scope = knownScope();
    scope.go(T0 + 50);
    const before = structuredClone(scope.state);
    scope.release(999);
    expect(scope.state).toEqual(before);
  });

  it("never makes the next start later (property: random claims, one released)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 100, max: 10_000 }),
        fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 30 }),
        fc.nat(),
        (limit, windowMs, gapsMs, pick) => {
          const scope = new Scope();
          scope.answer(scope.go(T0), T0 + 10, { budget: shown({ remaining: limit - 1, limit, resetAtMs: T0 + windowMs, windowMs }) });
          let nowMs = T0 + 10;
          const granted: number[] = [];
          for (const gapMs of gapsMs) {
            nowMs += gapMs;
            const result = scope.claim(nowMs);
            if (result.kind === "go") granted.push(result.seq);
          }
          if (granted.length === 0) return;
          const kept = claim(scope.state, { nowMs, latestStartMs: nowMs + HOUR_MS }, scope.options).result;
          scope.release(granted[pick % granted.length]!);
          const afterRelease = claim(scope.state, { nowMs, latestStartMs: nowMs + HOUR_MS }, scope.options).result;
          expect(kept.kind).toBe("go");
          expect(afterRelease.kind).toBe("go");
          if (kept.kind === "go" && afterRelease.kind === "go") expect(afterRelease.atMs).toBeLessThanOrEqual(kept.atMs);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("lost answers", () => {
  it("free their in-flight entry, so a scope at its in-flight cap lets the next one go", () => {
    const scope = new Scope();
    scope.answer(scope.go(T0), T0 + 20);
    // The slow start's four in flight.
    const [a] = [scope.go(T0 + 30), scope.go(T0 + 30), scope.go(T0 + 30), scope.go(T0 + 30)];
    expect(scope.claim(T0 + 30).kind).toBe("wait");
    scope.lost(a!, T0 + 5000);
    expect(scope.state.inFlight.map(([seq]) => seq)).not.toContain(a.seq);
    expect(scope.claim(T0 + 5000).kind).toBe("go");
  });

  it("keep the unit in the log (the server may have counted it) and teach no round trip", () => {
    const scope = knownScope();
    const a = scope.go(T0 + 50);
    const rttBefore = scope.state.rttMs;
    const unitsBefore = units(scope.state);
    scope.lost(a, T0 + 20_000);
    expect(units(scope.state)).toBe(unitsBefore);
    expect(scope.state.rttMs).toBe(rttBefore);
  });

  it("neither open nor close the breaker, nor count toward it", () => {
    const scope = new Scope(T0, { breakerThreshold: 2 });
    scope.answer(scope.go(T0), T0 + 40, { budget: shown({ remaining: 9, limit: 10, resetAtMs: T0 + 60_000, windowMs: 60_000 }) });
    const [a, b, c] = [scope.go(T0 + 50), scope.go(T0 + 50), scope.go(T0 + 50)];
    scope.throttle(a!, T0 + 60, 1000);
    scope.lost(b!, T0 + 70);
    expect(scope.state).toMatchObject({ throttleStreak: 1, breakerOpen: false });
    scope.throttle(c!, T0 + 80, 1000);
    expect(scope.state.breakerOpen).toBe(true);
    const probe = scope.go(T0 + 90);
    scope.lost(probe, T0 + 2000);
    expect(scope.state.breakerOpen).toBe(true);
  });

  it("leases end by themselves: claims out longer than leaseMs no longer count toward the in-flight cap", () => {
    const scope = new Scope(T0, { leaseMs: 5000 });
    scope.answer(scope.go(T0), T0 + 20);
    for (let i = 0; i < 4; i++) scope.go(T0 + 30);
    expect(scope.claim(T0 + 5029).kind).toBe("wait");
    expect(scope.claim(T0 + 5030).kind).toBe("go");
  });
});

describe("slots merged past MAX_SLOTS", () => {
  // Found while testing the bound: boundSlots merges two neighbouring slots into one under the
  // later seq, again at every claim past the bound, so a merged slot holds several claims under
  // one seq (when it merged the two oldest each time, the oldest slot gathered 45 after 300
  // claims; merging the closest neighbours, the smaller pair where gaps tie, keeps them to a few).
  // Giving back that seq (release) or taking it out (a throttle) removes all of their units. It
  // needs more than MAX_SLOTS slots in the log; not fixed here (a fix changes the slot tuple, which
  // the Redis port shares).
  it.fails("releasing one claim whose slot was merged with another gives back only its own unit", () => {
    const scope = new Scope(T0, { leaseMs: HOUR_MS });
    scope.state = { ...scope.state, limit: 1e6, windowMs: HOUR_MS };
    const granted = Array.from({ length: 300 }, (_, i) => scope.go(T0 + i));
    const merged = scope.state.slots.find(([, , u]) => u > 1)!;
    expect(merged).toBeDefined();
    const before = units(scope.state);
    scope.release(granted.find((g) => g.seq === merged[1])!.seq);
    expect(units(scope.state)).toBe(before - 1);
  });
});
