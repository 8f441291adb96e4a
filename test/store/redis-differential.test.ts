/**
 * The differential property: the Lua port of the governor (src/store/redis/) against the
 * TypeScript governor, on a real redis-server. Random sequences of claims, observations,
 * releases, holds and clears (fast-check, seeded) go to the memory store (the reference) and to
 * the Redis store with the same "now" (the Redis store's test-only nowForTest replaces TIME); after
 * every operation the answers must be equal and the stored states identical, floats included
 * (both sides are IEEE doubles and the states cross as round-trip text: see governor-lua.ts).
 * When the TypeScript governor changes, this test fails until the Lua follows: that is intended.
 */
import fc from "fast-check";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GovernorState, LimitType, Observation, ObservedBudget } from "../../src/engine";
import { startRedisServer, type RedisServer } from "../../src/lab/redis-server";
import { createMemoryStore } from "../../src/store";
import { createRedisStore } from "../../src/store/redis/store";
import { REDIS_AVAILABLE } from "../helpers/redis";

const SCOPES = [
  { governor: "api|part", holds: ["api"] },
  { governor: "api", holds: [] as string[] },
] as const;
const LIMIT_TYPES: LimitType[] = ["burst", "quota", "concurrency", "cost", "contention", "server", "none"];
const REASONS = ["429 with Retry-After: 30.", "", "quota spent … until 10:00 (ü)", "x".repeat(320), "é".repeat(299) + "…ab"];

/** Which claim an answer belongs to: the oldest unanswered one, the latest, an older one, or a seq never granted. */
type SeqPick = "next" | "latest" | "older" | "unknown";

type Op =
  | { op: "advance"; ms: number }
  | { op: "claim"; scope: 0 | 1; latestMs: number | null; units: number | null; random: number | null }
  | { op: "observe"; scope: 0 | 1; pick: SeqPick; sentBackMs: number; kind: Observation["kind"]; limitType: LimitType; waitMs: number | null; waitFromServer: boolean; budget: ObservedBudgetDraft | null; reason: string }
  | { op: "release"; scope: 0 | 1; pick: SeqPick }
  | { op: "hold"; scope: 0 | 1; untilMs: number; reason: string; limitType: LimitType }
  | { op: "clear"; scope: 0 | 1 };

interface ObservedBudgetDraft {
  remainingShare: number;
  limit: number | null;
  resetInMs: number | null;
  windowMs: number | null;
  restorePerSecond: number | null;
  unitsPerRequest: number | null;
}

const scopeArb = fc.constantFrom<0 | 1>(0, 0, 1);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 15, arbitrary: fc.record({ op: fc.constant("advance" as const), ms: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 100, max: 3000 }), fc.integer({ min: 5000, max: 70_000 })) }) },
  {
    weight: 25,
    arbitrary: fc.record({
      op: fc.constant("claim" as const),
      scope: scopeArb,
      latestMs: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 130_000 })),
      units: fc.oneof(fc.constant(null), fc.constant(null), fc.integer({ min: 1, max: 5 })),
      random: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })),
    }),
  },
  {
    weight: 25,
    arbitrary: fc.record({
      op: fc.constant("observe" as const),
      scope: scopeArb,
      pick: fc.constantFrom<SeqPick>("next", "next", "next", "next", "latest", "older", "unknown"),
      sentBackMs: fc.oneof(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 5000 })),
      kind: fc.constantFrom<Observation["kind"]>("ok", "ok", "ok", "throttled", "throttled", "lost"),
      limitType: fc.constantFrom(...LIMIT_TYPES),
      waitMs: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 200_000 })),
      waitFromServer: fc.boolean(),
      budget: fc.oneof(
        fc.constant(null),
        fc.record({
          remainingShare: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 0.3, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })),
          limit: fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 120 }), fc.double({ min: 0.5, max: 500, noNaN: true })),
          resetInMs: fc.oneof(fc.constant(null), fc.integer({ min: -2000, max: 65_000 })),
          windowMs: fc.oneof(fc.constant(null), fc.constant(null), fc.integer({ min: 200, max: 60_000 }), fc.double({ min: 1, max: 10_000, noNaN: true })),
          restorePerSecond: fc.oneof(fc.constant(null), fc.constant(null), fc.constant(null), fc.double({ min: 0.1, max: 100, noNaN: true })),
          unitsPerRequest: fc.oneof(fc.constant(null), fc.constant(null), fc.integer({ min: 1, max: 10 })),
        }),
      ),
      reason: fc.constantFrom(...REASONS),
    }),
  },
  { weight: 5, arbitrary: fc.record({ op: fc.constant("release" as const), scope: scopeArb, pick: fc.constantFrom<SeqPick>("next", "latest", "unknown") }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant("hold" as const), scope: scopeArb, untilMs: fc.integer({ min: -5000, max: 300_000 }), reason: fc.constantFrom(...REASONS), limitType: fc.constantFrom(...LIMIT_TYPES) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("clear" as const), scope: scopeArb }) },
);

const runArb = fc.record({
  breakerThreshold: fc.integer({ min: 1, max: 4 }),
  leaseMs: fc.constantFrom(500, 5000, 30_000),
  ops: fc.array(opArb, { minLength: 20, maxLength: 80 }),
});

const NUM_RUNS = 400;

/** What a state shows of the paths that made it. */
function marksOf(state: GovernorState): string[] {
  const marks = [`refill ${state.refill}`];
  if (state.othersPerMs > 0) marks.push("others learned");
  if (state.breakerOpen) marks.push("breaker open");
  if (state.inFlightCap !== null) marks.push(state.inFlightCapGrows ? "slow start" : "learned concurrency");
  if (state.windowSource) marks.push(`window ${state.windowSource}`);
  if (state.slots.some((s) => s[2] > 1)) marks.push("merged or multi-unit slots");
  return marks;
}

const EXPECTED_MARKS = [
  "go",
  "go: probe",
  "wait: one request is probing the scope; the others wait for its answer",
  "defer: own log",
  "defer: the server's count",
  "refill window",
  "refill fixed",
  "refill bucket",
  "others learned",
  "breaker open",
  "slow start",
  "learned concurrency",
  "window shown",
  "window inferred",
];
const T0 = Date.parse("2026-06-01T00:00:00.000Z");
const roundTrip = (state: GovernorState | undefined): unknown => (state === undefined ? null : JSON.parse(JSON.stringify(state)));

function budgetOf(draft: ObservedBudgetDraft, nowMs: number): ObservedBudget {
  const limit = draft.limit ?? 60;
  return {
    // Whole units mostly (request counts); a share of fractional ones (point budgets).
    remaining: draft.remainingShare < 0.15 ? Math.floor(draft.remainingShare * limit * 100) / 100 : Math.floor(draft.remainingShare * limit),
    limit: draft.limit,
    resetAtMs: draft.resetInMs === null ? null : nowMs + draft.resetInMs,
    windowMs: draft.windowMs,
    restorePerSecond: draft.restorePerSecond,
    unitsPerRequest: draft.unitsPerRequest,
  };
}

describe.skipIf(!REDIS_AVAILABLE)("the Lua governor against the TypeScript governor (differential, real redis-server)", () => {
  let server: RedisServer;
  let raw: ReturnType<typeof createClient>;
  beforeAll(async () => {
    server = await startRedisServer();
    raw = createClient({ url: server.url });
    await raw.connect();
  });
  afterAll(async () => {
    await raw?.close();
    await server?.stop();
  });

  it(`gives the same answers and the same states on ${NUM_RUNS} random sequences of 20 to 80 operations`, async () => {
    let run = 0;
    let operations = 0;
    const reached = new Set<string>();
    await fc.assert(
      fc.asyncProperty(runArb, async ({ breakerThreshold, leaseMs, ops }) => {
        run += 1;
        let nowMs = T0 + run * 10_000_000;
        const clock = { nowMs: () => nowMs, sleep: async () => undefined };
        const governor = { breakerThreshold, leaseMs };
        const memory = createMemoryStore({ clock, governor });
        const keyPrefix = `diff${run}:`;
        const redis = createRedisStore({ url: server.url, keyPrefix, governor, nowForTest: () => nowMs });
        const granted: Record<string, number[]> = { api: [], "api|part": [] };
        const outstanding: Record<string, number[]> = { api: [], "api|part": [] };
        const pickSeq = (scope: string, pick: SeqPick): number => {
          const all = granted[scope]!;
          const open = outstanding[scope]!;
          if (pick === "unknown" || all.length === 0) return all.length + 7;
          if (pick === "older") return all[Math.floor(all.length / 2)]!;
          const seq = pick === "next" ? (open[0] ?? all[all.length - 1]!) : (open[open.length - 1] ?? all[all.length - 1]!);
          outstanding[scope] = open.filter((s) => s !== seq);
          return seq;
        };
        try {
          for (const [index, op] of ops.entries()) {
            operations += 1;
            const where = `run ${run}, operation ${index} (${op.op})`;
            if (op.op === "advance") {
              nowMs += op.ms;
              continue;
            }
            const scopes = SCOPES[op.scope];
            const scope = scopes.governor;
            if (op.op === "claim") {
              const request = { nowMs, latestStartMs: op.latestMs === null ? Number.POSITIVE_INFINITY : nowMs + op.latestMs, ...(op.units === null ? {} : { units: op.units }), ...(op.random === null ? {} : { random: op.random }) };
              const expected = await memory.claim(scopes, request);
              const actual = await redis.claim(scopes, request);
              expect(actual, where).toEqual(expected);
              if (expected.result.kind === "go") {
                granted[scope]!.push(expected.result.seq);
                outstanding[scope]!.push(expected.result.seq);
              }
              reached.add(expected.result.kind === "go" ? (expected.result.probe ? "go: probe" : "go") : `${expected.result.kind}: ${expected.result.why.split(":")[0]}`);
            } else if (op.op === "observe") {
              const observation: Observation = {
                seq: pickSeq(scope, op.pick),
                sentAtMs: nowMs - op.sentBackMs,
                nowMs,
                kind: op.kind,
                limitType: op.limitType,
                waitMs: op.waitMs,
                waitFromServer: op.waitFromServer,
                budget: op.budget === null ? null : budgetOf(op.budget, nowMs),
                reason: op.reason,
              };
              await memory.observe(scope, observation);
              await redis.observe(scope, observation);
            } else if (op.op === "release") {
              const seq = pickSeq(scope, op.pick);
              await memory.release(scope, seq);
              await redis.release(scope, seq);
            } else if (op.op === "hold") {
              const expected = await memory.holdUntil(scope, nowMs + op.untilMs, op.reason, op.limitType);
              const actual = await redis.holdUntil(scope, nowMs + op.untilMs, op.reason, op.limitType);
              expect(roundTrip(actual), where).toEqual(roundTrip(expected));
            } else {
              expect(await redis.clear(scope), where).toBe(await memory.clear(scope));
            }
            for (const name of ["api", "api|part"]) {
              const stored = await raw.get(`${keyPrefix}s:${name}`);
              expect(stored === null ? null : JSON.parse(stored), `${where}: the state of ${name}`).toEqual(roundTrip(memory.snapshot().get(name)));
              const state = memory.snapshot().get(name);
              if (state) for (const mark of marksOf(state)) reached.add(mark);
            }
          }
        } finally {
          await redis.close();
        }
      }),
      { seed: 20_260_601, numRuns: NUM_RUNS, endOnFailure: true },
    );
    // The property ran: every run applied its operations to both sides.
    expect(run).toBeGreaterThanOrEqual(NUM_RUNS);
    expect(operations).toBeGreaterThanOrEqual(NUM_RUNS * 20);
    // ... and reached every part of the governor: a path no run takes is a path this test does not check.
    expect([...reached].sort()).toEqual(expect.arrayContaining(EXPECTED_MARKS));
  }, 240_000);

  it("agrees where others share the budget unseen and the last units are contended (a path random runs seldom reach)", async () => {
    let nowMs = T0;
    const clock = { nowMs: () => nowMs, sleep: async () => undefined };
    const memory = createMemoryStore({ clock });
    const redis = createRedisStore({ url: server.url, keyPrefix: "contended:", nowForTest: () => nowMs });
    const kinds: string[] = [];
    try {
      // One scope per remaining count: a reading, then a later one that shows others spent units
      // between them, then claims with draws near 1 (a request that did not draw a contended unit).
      for (let remaining = 1; remaining <= 12; remaining++) {
        const scopes = { governor: `api|r${remaining}`, holds: [] };
        const budget = (left: number): ObservedBudget => ({ remaining: left, limit: 100, resetAtMs: nowMs + 60_000, windowMs: null, restorePerSecond: null, unitsPerRequest: null });
        const both = async <T>(act: (store: typeof memory | typeof redis) => Promise<T>): Promise<[T, T]> => [await act(memory), await act(redis)];
        const ok = (seq: number, sentAtMs: number, left: number): Observation => ({ seq, sentAtMs, nowMs, kind: "ok", limitType: "none", waitMs: null, waitFromServer: false, budget: budget(left), reason: "" });
        const [first] = await both((store) => store.claim(scopes, { nowMs, latestStartMs: nowMs + 120_000 }));
        nowMs += 400;
        await both((store) => store.observe(scopes.governor, ok((first.result as { seq: number }).seq, nowMs - 400, remaining + 3)));
        const [second] = await both((store) => store.claim(scopes, { nowMs, latestStartMs: nowMs + 120_000, random: 0.5 }));
        nowMs += 400;
        await both((store) => store.observe(scopes.governor, ok((second.result as { seq: number }).seq, nowMs - 400, remaining)));
        let lastSeq = (second.result as { seq: number }).seq;
        for (const draw of [0.999, 0.9, 0.2]) {
          const [expected, actual] = await both((store) => store.claim(scopes, { nowMs, latestStartMs: nowMs + 120_000, random: draw }));
          expect(actual).toEqual(expected);
          kinds.push(expected.result.kind === "wait" ? expected.result.why.split(":")[0]! : expected.result.kind);
          if (expected.result.kind === "go") lastSeq = expected.result.seq;
        }
        // A third reading, others still spending: the estimate of their rate is smoothed.
        nowMs += 300;
        await both((store) => store.observe(scopes.governor, ok(lastSeq, nowMs - 250, Math.max(0, remaining - 3))));
        expect(JSON.parse((await redis.scopesUnder(scopes.governor)).length ? JSON.stringify((await redis.scopesUnder(scopes.governor))[0]![1]) : "null")).toEqual(roundTrip(memory.snapshot().get(scopes.governor)));
      }
    } finally {
      await redis.close();
    }
    expect(kinds).toContain("the last units are contended by others sharing the budget");
    expect(kinds).toContain("go");
  });
});
