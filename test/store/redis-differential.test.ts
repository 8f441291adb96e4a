/**
 * The differential property: the Lua port of the governor (src/store/redis/) against the
 * TypeScript governor, on a real redis-server. Random sequences of claims, observations,
 * releases, holds and clears (fast-check, seeded) go to the memory store (the reference) and to
 * the Redis store with the same "now" (the Redis store's test-only nowForTest replaces TIME); after
 * every operation the answers must be equal and the stored states identical, floats included
 * (both sides are IEEE doubles and the states cross as round-trip text: see governor-lua.ts).
 * When the TypeScript governor changes, this test fails until the Lua follows: that is intended.
 * Runs come in flavours (random readings or a server that counts our sends, a window shown or not,
 * throttles or none) so that each path of the governor is taken many times; the paths random runs
 * seldom take have scripted cases, and states written elsewhere are read by both sides alike.
 */
import fc from "fast-check";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PACED_PAST_LATEST_WHY } from "../../src/engine/governor/claim";
import { clampTime, claim, emptyState, holdUntil, observe, type ClaimRequest, type ClaimResult, type GovernorOptions, type GovernorState, type LimitType, type Observation, type ObservedBudget } from "../../src/engine";
import { startRedisServer, type RedisServer } from "../../src/lab/redis-server";
import { createMemoryStore, type MemoryStore, type StoreClaim } from "../../src/store";
import { MAX_IN_FLIGHT, MAX_SLOTS } from "../../src/engine/governor/state";
import { WINDOW_TRIAL_WHY } from "../../src/engine/governor/model";
import { createRedisStore, type RedisStore } from "../../src/store/redis/store";
import { shown } from "../engine/governor/helpers";
import { concurrencyLimit } from "../engine/governor/sim";
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
  | { op: "claim"; scope: 0 | 1; latestMs: number | null; pacedMs: number | null; units: number | null; random: number | null; holding: boolean }
  | { op: "observe"; scope: 0 | 1; pick: SeqPick; sentBackMs: number; kind: Observation["kind"]; limitType: LimitType; waitMs: number | null; waitFromServer: boolean; waitResolutionMs: number | null; budget: ObservedBudgetDraft | null; reason: string; counted: boolean | null }
  | { op: "release"; scope: 0 | 1; pick: SeqPick }
  | { op: "hold"; scope: 0 | 1; untilMs: number; reason: string; limitType: LimitType }
  | { op: "clear"; scope: 0 | 1 };

interface ObservedBudgetDraft {
  remainingShare: number;
  limit: number | null;
  resetInMs: number | null;
  windowMs: number | null;
  /** The IETF policy's w= beside a reset (observe.ts holdPolicyWindow). */
  policyWindowMs?: number | null;
  restorePerSecond: number | null;
  restoreEstimated?: boolean;
  /** The provider's slowest documented rate (Shopify REST: 2 per s), beside an estimated one. */
  restoreFloorPerSecond?: number | null;
  unitsPerRequest: number | null;
  /** The budget counts requests in flight (IETF qu="concurrent-requests"): set per run. */
  concurrent?: boolean;
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
      // The latest start the scope's pacing may set (absent, no limit, or a time before or after latestMs's).
      pacedMs: fc.oneof(fc.constant(null), fc.constant(Number.POSITIVE_INFINITY), fc.integer({ min: 0, max: 300_000 })),
      // 0, -1: not an estimate (the scope's own is used); 2.5: a fractional cost.
      units: fc.oneof(fc.constant(null), fc.constant(null), fc.integer({ min: 1, max: 5 }), fc.constantFrom(0, -1, 2.5)),
      random: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })),
      // The latest grant still out, claimed again by its holder.
      holding: fc.boolean(),
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
      // Absent mostly; 1000: a Retry-After in whole seconds; 7: an odd unit.
      waitResolutionMs: fc.constantFrom<number | null>(null, null, 1000, 7),
      budget: fc.oneof(
        fc.constant(null),
        fc.record({
          remainingShare: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 0.3, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })),
          limit: fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 120 }), fc.double({ min: 0.5, max: 500, noNaN: true })),
          resetInMs: fc.oneof(fc.constant(null), fc.integer({ min: -2000, max: 65_000 })),
          windowMs: fc.oneof(fc.constant(null), fc.constant(null), fc.integer({ min: 200, max: 60_000 }), fc.double({ min: 1, max: 10_000, noNaN: true })),
          policyWindowMs: fc.oneof(fc.constant(null), fc.constant(null), fc.integer({ min: 1, max: 60 }).map((seconds) => seconds * 1000)),
          restorePerSecond: fc.oneof(fc.constant(null), fc.constant(null), fc.constant(null), fc.double({ min: 0.1, max: 100, noNaN: true })),
          restoreEstimated: fc.boolean(),
          restoreFloorPerSecond: fc.oneof(fc.constant(null), fc.constant(2), fc.double({ min: 0.1, max: 20, noNaN: true })),
          unitsPerRequest: fc.oneof(fc.constant(null), fc.constant(null), fc.integer({ min: 1, max: 10 })),
        }),
      ),
      reason: fc.constantFrom(...REASONS),
      // Absent mostly; false: a replayed answer the server did not count (Stripe's Idempotent-Replayed).
      counted: fc.constantFrom<boolean | null>(null, null, null, true, false),
    }),
  },
  { weight: 5, arbitrary: fc.record({ op: fc.constant("release" as const), scope: scopeArb, pick: fc.constantFrom<SeqPick>("next", "latest", "unknown") }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant("hold" as const), scope: scopeArb, untilMs: fc.integer({ min: -5000, max: 300_000 }), reason: fc.constantFrom(...REASONS), limitType: fc.constantFrom(...LIMIT_TYPES) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("clear" as const), scope: scopeArb }) },
);

const runArb = fc.record({
  // A calm run answers every throttle drawn as a success: each throttle on a shown budget raises
  // the reserve (up to half the limit), so where throttles are frequent the budgets' own readings
  // (the server's count) seldom decide a start.
  calm: fc.constantFrom(false, false, true),
  // Most APIs never show their window's length (X-RateLimit-Limit/Remaining/Reset): only then is a
  // fixed window read from one full budget after a reset (a shown length needs more evidence).
  showsWindow: fc.boolean(),
  // null: each answer shows a random reading; else a server that counts our claims in a sliding
  // window, so that readings agree with what the governor granted (others are then seldom seen).
  server: fc.option(fc.record({ limit: fc.integer({ min: 2, max: 30 }), windowMs: fc.constantFrom(1000, 10_000, 60_000) }), { nil: null }),
  breakerThreshold: fc.integer({ min: 1, max: 4 }),
  leaseMs: fc.constantFrom(500, 5000, 30_000),
  ops: fc.array(opArb, { minLength: 20, maxLength: 80 }),
  // A run in eight whose budgets say they count requests in flight (IETF qu="concurrent-requests"):
  // a scope told so keeps no window, so most runs must never be. (Drawn last: the draws before it,
  // and so the paths the other runs reach, stay as they were.)
  showsConcurrency: fc.constantFrom(false, false, false, false, false, false, false, true),
  // A run in four without the upward probe of a silent rate (estimate.ts probeSilentRate); drawn last, as above.
  probeSilentRate: fc.constantFrom(true, true, true, false),
});

const NUM_RUNS = 400;

/** What a state shows of the paths that made it. */
function marksOf(state: GovernorState): string[] {
  const marks = [`refill ${state.refill}`];
  if (state.othersPerMs > 0) marks.push("others learned");
  if (state.breakerOpen) marks.push("breaker open");
  if (state.inFlightCap !== null) marks.push(state.inFlightCapGrows ? "slow start" : "learned concurrency");
  if (state.windowSource) marks.push(`window ${state.windowSource}`);
  if (state.concurrency !== "unknown") marks.push(`concurrency ${state.concurrency}`);
  if (state.slots.some((s) => s[2] > 1)) marks.push("merged or multi-unit slots");
  return marks;
}

/** The seq observe() reads an answer under (checked in observe.ts): one the state granted, else 0. */
const seqAsRead = (state: GovernorState, seq: number): number => (Number.isSafeInteger(seq) && seq >= 0 && seq <= state.seq ? seq : 0);

/**
 * Whether learnOthers ran with claims granted after the answered one that had started before its
 * answer came (maybeOurs > 0): the conditions observe.ts checks, read from the states around it.
 */
function reorderedClaims(before: GovernorState, observation: Observation, after: GovernorState): boolean {
  const previous = before.anchor;
  const seq = seqAsRead(before, observation.seq);
  if (!previous || !observation.budget || !Number.isFinite(observation.budget.remaining) || seq <= previous.seq) return false;
  const nowMs = clampTime(observation.nowMs);
  const sentAtMs = Math.min(clampTime(observation.sentAtMs), nowMs);
  if (sentAtMs <= previous.atMs) return false;
  // Only applyShape makes a refill "bucket", and nothing after learnOthers changes it back.
  if (after.refill !== "bucket" && previous.resetAtMs > 0 && sentAtMs >= previous.resetAtMs) return false;
  return before.slots.some(([atMs, later]) => later > seq && atMs <= nowMs);
}

/** What one answer exercised: read from the states before and after it, and against the same answer counted. */
function observationMarks(before: GovernorState, observation: Observation, after: GovernorState, governor: GovernorOptions): string[] {
  const marks: string[] = [];
  const raised = after.reserveUnits > before.reserveUnits;
  // learnReserve raises the reserve only on a throttle: any other rise is learnOthers'.
  if (raised && observation.kind !== "throttled") marks.push("reserve learned from others' spending");
  if (raised && observation.kind === "throttled") marks.push("reserve raised on a throttle");
  if (observation.kind === "ok" && after.reserveUnits < before.reserveUnits) marks.push("reserve given back by a clean answer");
  if (observation.counted === false && JSON.stringify(observe(before, { ...observation, counted: undefined }, governor)) !== JSON.stringify(after)) {
    marks.push("a replayed answer (counted=false) changed the state");
  }
  if (reorderedClaims(before, observation, after)) marks.push("others' spending read past reordered claims (maybeOurs)");
  const seq = seqAsRead(before, observation.seq);
  if (observation.kind === "throttled" && observation.budget === null && before.limit === null && after.limit !== null && after.slots.some(([, s]) => s === seq)) {
    marks.push("the first lesson put answered units back in the log");
  }
  return marks;
}

/** What one claim exercised: against the same claim without its draw, and the reserve kept out of the next window. */
function claimMarks(start: GovernorState, request: ClaimRequest, result: StoreClaim["result"], governor: GovernorOptions): string[] {
  const marks: string[] = [];
  if (request.random !== undefined) {
    const undrawn = claim(start, { ...request, random: undefined }, governor).result;
    if (JSON.stringify(undrawn) !== JSON.stringify(result)) marks.push("a start spread by the draw among contenders");
  }
  if (result.kind !== "wait" && start.anchor !== null && start.reserveUnits > 0 && /^(own log|fixed window)/.test(result.why)) {
    marks.push("the next window less the reserve");
  }
  return marks;
}

/**
 * Paths every run of the seeded property reaches many times. Rarer ones (a probe deferred past the
 * latest start, the server's count deferring a start to a unit's leaving, the draw spreading a
 * start) have their own scripted cases below.
 */
/** A reason's mark: its first clause, the rule a paced turn past the latest start names (after PACED_PAST_LATEST_WHY). */
function markOf(why: string): string {
  return why.replace(`${PACED_PAST_LATEST_WHY} (`, "").split(":")[0]!;
}

const EXPECTED_MARKS = [
  "go",
  "go: probe",
  "go: held grant kept",
  "wait: one request is probing the scope; the others wait for its answer",
  "defer: own log",
  // (a fixed window's defer: seldom drawn since two resets further apart than the window bound no
  // longer make a fixed window; the resets case below takes that path on purpose)
  "defer: bucket",
  "defer: after the server's reset",
  "refill window",
  "refill fixed",
  "refill bucket",
  "others learned",
  "breaker open",
  "slow start",
  "learned concurrency",
  "window shown",
  "window inferred",
  "concurrency shown",
  "reserve learned from others' spending",
  "reserve raised on a throttle",
  "reserve given back by a clean answer",
  "a replayed answer (counted=false) changed the state",
  "others' spending read past reordered claims (maybeOurs)",
  "the first lesson put answered units back in the log",
  "the next window less the reserve",
];
/** A copy of a state the memory store will change in place. */
const copyOf = (state: GovernorState | undefined): GovernorState | undefined => (state === undefined ? undefined : (JSON.parse(JSON.stringify(state)) as GovernorState));

/** The state a memory-store claim starts from: the scope's own (a copy), with the waits of the scopes it is held by (as memory.ts does). */
function startOfClaim(states: ReadonlyMap<string, GovernorState>, scopes: { governor: string; holds: readonly string[] }, nowMs: number): GovernorState {
  let start = copyOf(states.get(scopes.governor)) ?? emptyState(nowMs);
  for (const hold of scopes.holds) {
    const held = states.get(hold);
    if (held && held.notBeforeMs > start.notBeforeMs) start = holdUntil(start, held.notBeforeMs, held.notBeforeReason, held.notBeforeType);
  }
  return start;
}

const T0 = Date.parse("2026-06-01T00:00:00.000Z");
const roundTrip = (state: GovernorState | undefined): unknown => (state === undefined ? null : JSON.parse(JSON.stringify(state)));

interface CountingServer {
  limit: number;
  windowMs: number;
}

/** A counting server's units left at sentAtMs: its limit less our sends in its sliding window; and when its oldest counted one leaves. */
function serverCount(server: CountingServer, sends: ReadonlyArray<[number, number, number]>, sentAtMs: number): { remaining: number; resetAtMs: number } {
  const counted = sends.filter(([atMs]) => atMs <= sentAtMs && atMs > sentAtMs - server.windowMs);
  const used = counted.reduce((sum, [, units]) => sum + units, 0);
  const oldestMs = counted.reduce((oldest, [atMs]) => Math.min(oldest, atMs), sentAtMs);
  return { remaining: Math.max(0, server.limit - used), resetAtMs: oldestMs + server.windowMs };
}

/**
 * The budget an answer shows: a random reading, or (with a counting server) the server's count of
 * our sends; the draft says which figures are shown.
 */
function budgetOf(draft: ObservedBudgetDraft, sentAtMs: number, nowMs: number, server: CountingServer | null, sends: ReadonlyArray<[number, number, number]>): ObservedBudget {
  if (server !== null) {
    const count = serverCount(server, sends, sentAtMs);
    return {
      remaining: count.remaining,
      limit: draft.limit === null ? null : server.limit,
      resetAtMs: draft.resetInMs === null ? null : count.resetAtMs,
      windowMs: draft.windowMs === null ? null : server.windowMs,
      policyWindowMs: draft.policyWindowMs === null || draft.policyWindowMs === undefined ? null : server.windowMs,
      restorePerSecond: null,
      unitsPerRequest: draft.unitsPerRequest,
      concurrent: draft.concurrent === true,
    };
  }
  const limit = draft.limit ?? 60;
  return {
    // Whole units mostly (request counts); a share of fractional ones (point budgets).
    remaining: draft.remainingShare < 0.15 ? Math.floor(draft.remainingShare * limit * 100) / 100 : Math.floor(draft.remainingShare * limit),
    limit: draft.limit,
    resetAtMs: draft.resetInMs === null ? null : nowMs + draft.resetInMs,
    windowMs: draft.windowMs,
    policyWindowMs: draft.policyWindowMs ?? null,
    restorePerSecond: draft.restorePerSecond,
    restoreEstimated: draft.restoreEstimated === true,
    restoreFloorPerSecond: draft.restoreFloorPerSecond ?? null,
    unitsPerRequest: draft.unitsPerRequest,
    concurrent: draft.concurrent === true,
  };
}

type RawClient = ReturnType<typeof createClient>;

/** The memory store and the Redis store side by side on one "now": every answer and every state they keep compared. */
class SideBySide {
  readonly memory: MemoryStore;
  readonly redis: RedisStore;

  constructor(
    private readonly raw: RawClient,
    url: string,
    keyPrefix: string,
    public nowMs: number,
    governor: Partial<GovernorOptions> = {},
  ) {
    const clock = { nowMs: () => this.nowMs, sleep: async () => undefined };
    this.memory = createMemoryStore({ clock, governor });
    this.redis = createRedisStore({ url, keyPrefix, governor, nowForTest: () => this.nowMs });
  }

  async claim(scope: string, request: Omit<ClaimRequest, "nowMs">, where = scope): Promise<ClaimResult> {
    const scopes = { governor: scope, holds: [] };
    const expected = await this.memory.claim(scopes, { nowMs: this.nowMs, ...request });
    expect(await this.redis.claim(scopes, { nowMs: this.nowMs, ...request }), where).toEqual(expected);
    await this.sameState(scope, where);
    return expected.result;
  }

  async observe(scope: string, observation: Omit<Observation, "nowMs">): Promise<void> {
    await this.memory.observe(scope, { ...observation, nowMs: this.nowMs });
    await this.redis.observe(scope, { ...observation, nowMs: this.nowMs });
    await this.sameState(scope, scope);
  }

  /** A claim at nowMs that must be granted, answered latencyMs after its start with `reading` (left out when null). */
  async sendAndAnswer(scope: string, nowMs: number, reading: ObservedBudget | null, latencyMs: number): Promise<Extract<ClaimResult, { kind: "go" }>> {
    this.nowMs = nowMs;
    const go = await this.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
    if (go.kind !== "go") expect.fail(`${scope}: expected go at ${nowMs - T0} ms, got ${JSON.stringify(go)}`);
    if (reading !== null) {
      this.nowMs = go.atMs + latencyMs;
      await this.observe(scope, answer(go.seq, go.atMs, "ok", reading));
    }
    return go;
  }

  /** A claim at nowMs that must be granted, sent at its start, answered latencyMs later with what answerOf makes of it; returns the send. */
  async sendAnswered(scope: string, latencyMs: number, answerOf: (seq: number, sentAtMs: number) => Omit<Observation, "nowMs">): Promise<number> {
    const go = await this.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
    const sentAtMs = Math.max(this.nowMs, go.kind === "go" ? go.atMs : this.nowMs);
    this.nowMs = sentAtMs + latencyMs;
    await this.observe(scope, answerOf(seqOf(go), sentAtMs));
    return sentAtMs;
  }

  private async sameState(scope: string, where: string): Promise<void> {
    const stored = await this.raw.get(this.redis.keyOf(scope));
    expect(stored === null ? null : JSON.parse(stored), `${where}: the state`).toEqual(roundTrip(this.memory.snapshot().get(scope)));
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}

/** An answer to the claim `seq` (nowMs is the side-by-side's). */
const answer = (seq: number, sentAtMs: number, kind: Observation["kind"], budget: ObservedBudget | null): Omit<Observation, "nowMs"> => ({
  seq,
  sentAtMs,
  kind,
  limitType: kind === "throttled" ? "burst" : "none",
  waitMs: null,
  waitFromServer: false,
  budget,
  reason: kind === "throttled" ? "429" : "",
});

function seqOf(result: ClaimResult): number {
  if (result.kind !== "go") throw new Error(`expected a go, got ${result.kind}: ${result.why}`);
  return result.seq;
}

/**
 * Claims on both stores, asking again when a start far ahead is near, sends at the start granted
 * and answers 50 ms later with `kind` (a 429 showing `throttleBudget`). Returns the window after.
 */
async function sendWhenNear(both: SideBySide, scope: string, kind: "ok" | "throttled", throttleBudget: ObservedBudget): Promise<number | null | undefined> {
  let result = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
  while (result.kind === "wait") {
    both.nowMs = result.untilMs;
    result = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
  }
  const go = seqOf(result);
  const sentAtMs = Math.max(both.nowMs, result.kind === "go" ? result.atMs : both.nowMs);
  both.nowMs = sentAtMs + 50;
  await both.observe(scope, answer(go, sentAtMs, kind, kind === "ok" ? null : throttleBudget));
  return both.memory.snapshot().get(scope)?.windowMs;
}

/** Claims on both stores at nowMs (the side-by-side's clock set to it), with no latest start. */
function claimerAt(both: SideBySide, scope: string): (nowMs: number) => Promise<ClaimResult> {
  return async (nowMs) => {
    both.nowMs = nowMs;
    return both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
  };
}

/** A 429 that told no wait, the client backing off 50 ms on its own. */
const throttledNoWait = (seq: number, sentAtMs: number): Omit<Observation, "nowMs"> => ({ ...answer(seq, sentAtMs, "throttled", null), waitMs: 50, waitFromServer: false });

/** Claims that must be granted on both stores at the clock's now, each one's why kept; the clock moves to each start. */
function starterOf(both: SideBySide, scope: string, whys: string[]): () => Promise<{ seq: number; atMs: number }> {
  return async () => {
    const result = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
    if (result.kind !== "go") throw new Error(`expected a go, got ${result.kind}: ${result.why}`);
    whys.push(result.why);
    both.nowMs = Math.max(both.nowMs, result.atMs);
    return { seq: result.seq, atMs: result.atMs };
  };
}

/**
 * A slow start on both stores with answers taking answerMs: the cold probe, then rounds of four and
 * eight claimed at once, each answered before the next. Returns when the next round goes.
 */
async function slowStartToEight(both: SideBySide, scope: string, answerMs: number): Promise<number> {
  const claimAt = claimerAt(both, scope);
  let atMs = T0;
  for (const count of [1, 4, 8]) {
    const round: ClaimResult[] = [];
    for (let i = 0; i < count; i++) round.push(await claimAt(atMs));
    both.nowMs = atMs + answerMs;
    for (const sent of round) await both.observe(scope, answer(seqOf(sent), atMs, "ok", null));
    atMs += answerMs;
  }
  return atMs;
}

/**
 * The concurrency tests' slow start, on both stores: one claim answered 100 ms after T0, two
 * claimed then and answered at T0 + 200, and four claimed at T0 + 200 (left out for the test).
 */
async function slowStartToFour(both: SideBySide, scope: string): Promise<{ claimAt: (nowMs: number) => Promise<ClaimResult>; four: ClaimResult[] }> {
  const claimAt = claimerAt(both, scope);
  const probe = await claimAt(T0);
  both.nowMs = T0 + 100;
  await both.observe(scope, answer(seqOf(probe), T0, "ok", null));
  const pair = [await claimAt(T0 + 100), await claimAt(T0 + 100)];
  both.nowMs = T0 + 200;
  for (const sent of pair) await both.observe(scope, answer(seqOf(sent), T0 + 100, "ok", null));
  const four: ClaimResult[] = [];
  for (let i = 0; i < 4; i++) four.push(await claimAt(T0 + 200));
  return { claimAt, four };
}

/** A fixed window of 100 per 10 s, learned on both sides: a probe at T0, and the first answer after the reset at reset1. */
const reset1 = T0 + 10_000;
const fixedBudget = (left: number, resetAtMs: number): ObservedBudget => shown({ remaining: left, limit: 100, resetAtMs });

async function learnFixedWindow(both: SideBySide, scope: string): Promise<void> {
  const probe = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
  both.nowMs += 50;
  await both.observe(scope, answer(seqOf(probe), T0, "ok", fixedBudget(99, reset1)));
  both.nowMs = reset1;
  const first = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
  both.nowMs += 50;
  await both.observe(scope, answer(seqOf(first), reset1, "ok", fixedBudget(99, reset1 + 10_000)));
}

/** A state written on both sides alike (as another process would write it). */
async function writeBoth(raw: RawClient, both: SideBySide, scope: string, value: unknown): Promise<void> {
  expect(both.memory.load({ [scope]: value })).toEqual([]);
  await raw.set(both.redis.keyOf(scope), JSON.stringify(value));
}

/**
 * A sender of one request on `scope`, 300 ms after the last was answered (a later send, not one
 * counted with the reading before), answered in 20 ms with a count of `remaining` of `limit` and
 * the reset `resetOffsetMs` after T0.
 */
function sendingLater(both: SideBySide, scope: string, limit: number): (remaining: number, resetOffsetMs: number) => Promise<number> {
  return (remaining, resetOffsetMs) => {
    both.nowMs += 300;
    return both.sendAnswered(scope, 20, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", shown({ remaining, limit, resetAtMs: T0 + resetOffsetMs })));
  };
}

/**
 * A probe at T0 answered rttMs later showing all but its own unit left, then `burst` claims at once,
 * answered a round trip later with the count falling by one each. Returns the count left.
 */
async function probeThenBurst(both: SideBySide, scope: string, reading: (left: number) => ObservedBudget, limit: number, burst: number, rttMs: number): Promise<number> {
  const go = async (): Promise<ClaimResult> => both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
  both.nowMs = T0;
  const probe = await go();
  both.nowMs = T0 + rttMs;
  let left = limit - 1;
  await both.observe(scope, answer(seqOf(probe), T0, "ok", reading(left)));
  const sent: ClaimResult[] = [];
  for (let i = 0; i < burst; i++) sent.push(await go());
  both.nowMs = T0 + 2 * rttMs;
  for (const claimed of sent) await both.observe(scope, answer(seqOf(claimed), T0 + rttMs, "ok", reading(--left)));
  return left;
}

function omit(value: Record<string, unknown>, key: string): Record<string, unknown> {
  const copy = { ...value };
  delete copy[key];
  return copy;
}

type RunFlavour = typeof runArb extends fc.Arbitrary<infer T> ? T : never;

/** One random run: the memory store (the reference) and the Redis store given the same operations at the same "now". */
class DifferentialRun {
  private nowMs: number;
  private readonly memory: MemoryStore;
  private readonly redis: RedisStore;
  private readonly governor: GovernorOptions;
  private readonly granted: Record<string, number[]> = { api: [], "api|part": [] };
  private readonly outstanding: Record<string, number[]> = { api: [], "api|part": [] };
  /** Our sends as a counting server sees them: [atMs, units, seq]. */
  private readonly sends: Record<string, Array<[number, number, number]>> = { api: [], "api|part": [] };

  constructor(
    private readonly raw: RawClient,
    url: string,
    private readonly keyPrefix: string,
    startMs: number,
    private readonly flavour: RunFlavour,
    private readonly reached: (mark: string) => void,
  ) {
    this.nowMs = startMs;
    const clock = { nowMs: () => this.nowMs, sleep: async () => undefined };
    this.governor = { breakerThreshold: flavour.breakerThreshold, leaseMs: flavour.leaseMs, probeSilentRate: flavour.probeSilentRate };
    this.memory = createMemoryStore({ clock, governor: this.governor });
    this.redis = createRedisStore({ url, keyPrefix, governor: this.governor, nowForTest: () => this.nowMs });
  }

  /** Which claim an answer or a release names (an answered one leaves the outstanding list). */
  private pickSeq(scope: string, pick: SeqPick): number {
    const all = this.granted[scope]!;
    const open = this.outstanding[scope]!;
    if (pick === "unknown" || all.length === 0) return all.length + 7;
    if (pick === "older") return all[Math.floor(all.length / 2)]!;
    const seq = pick === "next" ? (open[0] ?? all[all.length - 1]!) : (open[open.length - 1] ?? all[all.length - 1]!);
    this.outstanding[scope] = open.filter((s) => s !== seq);
    return seq;
  }

  async apply(op: Op, where: string): Promise<void> {
    if (op.op === "advance") {
      this.nowMs += op.ms;
      return;
    }
    const scopes = SCOPES[op.scope];
    const scope = scopes.governor;
    if (op.op === "claim") await this.claim(scopes, op, where);
    else if (op.op === "observe") await this.observe(scope, op);
    else if (op.op === "release") {
      const seq = this.pickSeq(scope, op.pick);
      await this.memory.release(scope, seq);
      await this.redis.release(scope, seq);
    } else if (op.op === "hold") {
      const expected = await this.memory.holdUntil(scope, this.nowMs + op.untilMs, op.reason, op.limitType);
      const actual = await this.redis.holdUntil(scope, this.nowMs + op.untilMs, op.reason, op.limitType);
      expect(roundTrip(actual), where).toEqual(roundTrip(expected));
    } else {
      expect(await this.redis.clear(scope), where).toBe(await this.memory.clear(scope));
    }
    for (const name of ["api", "api|part"]) {
      const stored = await this.raw.get(`${this.keyPrefix}s:${name}`);
      expect(stored === null ? null : JSON.parse(stored), `${where}: the state of ${name}`).toEqual(roundTrip(this.memory.snapshot().get(name)));
      const state = this.memory.snapshot().get(name);
      if (state) for (const mark of marksOf(state)) this.reached(mark);
    }
  }

  private async claim(scopes: (typeof SCOPES)[number], op: Extract<Op, { op: "claim" }>, where: string): Promise<void> {
    const nowMs = this.nowMs;
    const open = this.outstanding[scopes.governor]!;
    const heldSeq = op.holding ? open[open.length - 1] : undefined;
    const heldSend = heldSeq === undefined ? undefined : this.sends[scopes.governor]!.find(([, , seq]) => seq === heldSeq);
    const holding = heldSend ? { seq: heldSend[2], atMs: heldSend[0] } : undefined;
    const paced = op.pacedMs === null ? {} : { latestPacedStartMs: nowMs + op.pacedMs };
    const request: ClaimRequest = { nowMs, latestStartMs: op.latestMs === null ? Number.POSITIVE_INFINITY : nowMs + op.latestMs, ...paced, ...(op.units === null ? {} : { units: op.units }), ...(op.random === null ? {} : { random: op.random }), ...(holding ? { holding } : {}) };
    const start = startOfClaim(this.memory.snapshot(), scopes, nowMs);
    const expected = await this.memory.claim(scopes, request);
    for (const mark of claimMarks(start, request, expected.result, this.governor)) this.reached(mark);
    expect(await this.redis.claim(scopes, request), where).toEqual(expected);
    const result = expected.result;
    if (holding && !(result.kind === "go" && result.seq === holding.seq)) this.outstanding[scopes.governor] = open.filter((seq) => seq !== holding.seq);
    if (holding && result.kind === "go" && result.seq === holding.seq) this.reached("go: held grant kept");
    else if (result.kind === "go") {
      const scope = scopes.governor;
      this.granted[scope]!.push(result.seq);
      this.outstanding[scope]!.push(result.seq);
      this.sends[scope]!.push([result.atMs, this.memory.snapshot().get(scope)?.slots.find((slot) => slot[1] === result.seq)?.[2] ?? 1, result.seq]);
    }
    this.reached(result.kind === "go" ? (result.probe ? "go: probe" : "go") : `${result.kind}: ${markOf(result.why)}`);
  }

  private async observe(scope: string, op: Extract<Op, { op: "observe" }>): Promise<void> {
    const { calm, showsWindow, showsConcurrency, server } = this.flavour;
    const nowMs = this.nowMs;
    const sends = this.sends[scope]!;
    const seq = this.pickSeq(scope, op.pick);
    // Sent at its slot when that has come (as a client does); else at a random earlier instant.
    const slotAtMs = sends.find(([, , granted]) => granted === seq)?.[0];
    const sentAtMs = slotAtMs !== undefined && slotAtMs <= nowMs && slotAtMs >= nowMs - op.sentBackMs ? slotAtMs : nowMs - op.sentBackMs;
    // A calm run is never throttled; a counting server throttles only once its count is spent.
    const throttled = op.kind === "throttled" && !calm && (server === null || serverCount(server, sends, sentAtMs).remaining === 0);
    const observation: Observation = {
      seq,
      sentAtMs,
      nowMs,
      kind: op.kind === "throttled" && !throttled ? "ok" : op.kind,
      limitType: op.limitType,
      waitMs: op.waitMs,
      waitFromServer: op.waitFromServer,
      budget: op.budget === null ? null : budgetOf({ ...op.budget, windowMs: showsWindow ? op.budget.windowMs : null, concurrent: showsConcurrency }, sentAtMs, nowMs, server, sends),
      reason: op.reason,
      ...(op.counted === null ? {} : { counted: op.counted }),
      ...(op.waitResolutionMs === null ? {} : { waitResolutionMs: op.waitResolutionMs }),
    };
    const before = copyOf(this.memory.snapshot().get(scope)) ?? emptyState(nowMs);
    await this.memory.observe(scope, observation);
    await this.redis.observe(scope, observation);
    for (const mark of observationMarks(before, observation, this.memory.snapshot().get(scope)!, this.governor)) this.reached(mark);
  }

  close(): Promise<void> {
    return this.redis.close();
  }
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

  /** Each scope's reading (its probe answered latencyMs after T0), then four claims on each: their kinds, both stores agreeing. */
  async function claimKindsAfter(keyPrefix: string, readings: Record<string, ObservedBudget>, latencyMs: number): Promise<Record<string, string[]>> {
    const both = new SideBySide(raw, server.url, keyPrefix, T0);
    const kinds: Record<string, string[]> = {};
    try {
      for (const [scope, reading] of Object.entries(readings)) await both.sendAndAnswer(scope, T0, reading, latencyMs);
      for (const scope of Object.keys(readings)) {
        kinds[scope] = [];
        for (let i = 0; i < 4; i++) kinds[scope].push((await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })).kind);
      }
    } finally {
      await both.close();
    }
    return kinds;
  }

  it(`gives the same answers and the same states on ${NUM_RUNS} random sequences of 20 to 80 operations`, async () => {
    let run = 0;
    let operations = 0;
    const hits = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(runArb, async (flavour) => {
        run += 1;
        const driver = new DifferentialRun(raw, server.url, `diff${run}:`, T0 + run * 10_000_000, flavour, (mark) => hits.set(mark, (hits.get(mark) ?? 0) + 1));
        try {
          for (const [index, op] of flavour.ops.entries()) {
            operations += 1;
            await driver.apply(op, `run ${run}, operation ${index} (${op.op})`);
          }
        } finally {
          await driver.close();
        }
      }),
      { seed: 20_260_601, numRuns: NUM_RUNS, endOnFailure: true },
    );
    // The property ran: every run applied its operations to both sides.
    expect(run).toBeGreaterThanOrEqual(NUM_RUNS);
    expect(operations).toBeGreaterThanOrEqual(NUM_RUNS * 20);
    // ... and reached every part of the governor: a path no run takes is a path this test does not check.
    console.info(`${run} runs, ${operations} operations; paths hit: ${[...hits].sort(([a], [b]) => a.localeCompare(b)).map(([mark, count]) => `${mark} ×${count}`).join("; ")}`);
    expect([...hits.keys()].sort()).toEqual(expect.arrayContaining(EXPECTED_MARKS));
  }, 240_000);

  it("agrees where others spend the budget unseen: the reserve they teach and the starts the draw spreads (window and bucket)", async () => {
    const both = new SideBySide(raw, server.url, "spread:", T0);
    const spread: Record<string, number> = { window: 0, bucket: 0 };
    try {
      for (let remaining = 0; remaining <= 8; remaining++) {
        for (const refill of ["window", "bucket"] as const) {
          // Two scopes with one history; only the last claim's draw differs.
          const scopes = [`api|${refill}${remaining}a`, `api|${refill}${remaining}b`];
          const budget = (left: number): ObservedBudget => ({ remaining: left, limit: 20, resetAtMs: null, windowMs: refill === "window" ? 10_000 : null, restorePerSecond: refill === "bucket" ? 2 : null, unitsPerRequest: null });
          const firstSeqs = await Promise.all(scopes.map((scope) => both.claim(scope, { latestStartMs: both.nowMs + 120_000 })));
          both.nowMs += 400;
          for (const [i, scope] of scopes.entries()) await both.observe(scope, answer(seqOf(firstSeqs[i]!), both.nowMs - 400, "ok", budget(remaining + 3)));
          const secondSeqs = [];
          for (const scope of scopes) secondSeqs.push(await both.claim(scope, { latestStartMs: both.nowMs + 120_000, random: 0.5 }));
          both.nowMs += 400;
          // The count fell by 3 while we spent 1: others spent 2 between the readings.
          for (const [i, scope] of scopes.entries()) await both.observe(scope, answer(seqOf(secondSeqs[i]!), both.nowMs - 400, "ok", budget(remaining)));
          const learned = both.memory.snapshot().get(scopes[0]!)!;
          expect(learned.reserveUnits, `${refill}, ${remaining} left`).toBeGreaterThan(0);
          expect(learned.othersPerMs).toBeGreaterThan(0);
          const low = await both.claim(scopes[0]!, { latestStartMs: both.nowMs + 120_000, random: 0 });
          const high = await both.claim(scopes[1]!, { latestStartMs: both.nowMs + 120_000, random: 0.999 });
          if (low.kind === "go" && high.kind === "go" && high.atMs > low.atMs) spread[refill]! += 1;
        }
      }
    } finally {
      await both.close();
    }
    // Where the units left are contended, a high draw starts later than a low one, on both sides alike.
    expect(spread.window).toBeGreaterThan(0);
    expect(spread.bucket).toBeGreaterThan(0);
  });

  it("agrees where a throttle in a window of unknown length is our own grant too many (no reserve) or someone else's (a reserve)", async () => {
    const both = new SideBySide(raw, server.url, "ownfill:", T0);
    try {
      for (const ownStarts of [99, 50]) {
        const scope = `api|ownfill${ownStarts}`;
        // 100 per window, its length not shown, the reset 10 s on: a probe, then our starts at once.
        const resetAtMs = both.nowMs + 10_000;
        const limitOf = (left: number): ObservedBudget => shown({ remaining: left, limit: 100, resetAtMs });
        const probe = await both.claim(scope, { latestStartMs: both.nowMs + 120_000 });
        both.nowMs += 50;
        await both.observe(scope, answer(seqOf(probe), both.nowMs - 50, "ok", limitOf(99)));
        for (let i = 0; i < ownStarts; i++) seqOf(await both.claim(scope, { latestStartMs: both.nowMs + 120_000 }));
        // One grant more, written on both sides alike (another process's grant from an older reading).
        const state = roundTrip(both.memory.snapshot().get(scope)) as Record<string, unknown> & { seq: number; slots: number[][]; inFlight: number[][] };
        const extraSeq = state.seq + 1;
        await writeBoth(raw, both, scope, { ...state, seq: extraSeq, slots: [...state.slots, [both.nowMs, extraSeq, 1]], inFlight: [...state.inFlight, [extraSeq, both.nowMs + 30_000]] });
        both.nowMs += 60;
        await both.observe(scope, { ...answer(extraSeq, both.nowMs - 60, "throttled", limitOf(0)), waitMs: resetAtMs - both.nowMs, waitFromServer: true });
        const learned = both.memory.snapshot().get(scope)!;
        expect(learned).toMatchObject({ refill: "window", windowMs: null });
        // With the probe and 99 of ours in the window, the throttle is ours; with 50, someone else's.
        if (ownStarts === 99) expect(learned.reserveUnits).toBe(0);
        else expect(learned.reserveUnits).toBeGreaterThan(0);
      }
    } finally {
      await both.close();
    }
  });

  it("agrees where a count that came back is tested as a concurrency limit and a success rules it out: a bucket bounded by that reading's reset", async () => {
    const both = new SideBySide(raw, server.url, "refill:", T0);
    const scope = "api|refill";
    const reading = (left: number, resetAfterMs: number): ObservedBudget => shown({ remaining: left, limit: 20, resetAtMs: T0 + resetAfterMs });
    try {
      await both.sendAndAnswer(scope, T0, reading(19, 1050), 50);
      const burst: number[] = [];
      for (let i = 0; i < 19; i++) burst.push(seqOf(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })));
      both.nowMs = T0 + 100;
      for (const [i, seq] of burst.entries()) await both.observe(scope, answer(seq, T0 + 50, "ok", reading(19 - i, 1100)));
      expect(both.memory.snapshot().get(scope)?.concurrency).toBe("testing");
      await both.sendAndAnswer(scope, T0 + 100, reading(1, 2100), 50);
      expect(both.memory.snapshot().get(scope)).toMatchObject({ concurrency: "ruled-out", refill: "bucket", windowMs: 2223, windowSource: "inferred" });
      const next = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      expect(next.kind === "go" && next.atMs < T0 + 1000).toBe(true);
    } finally {
      await both.close();
    }
  });

  it("agrees where the server's count waits for units to leave the window, and where a probe is deferred past latestStartMs", async () => {
    const both = new SideBySide(raw, server.url, "paths:", T0, { breakerThreshold: 1 });
    const whys: string[] = [];
    try {
      // A sliding window of 3 per 10 s, shown without a reset: the fourth start waits for the first to leave.
      const counted = (left: number): ObservedBudget => shown({ remaining: left, limit: 3, windowMs: 10_000 });
      for (let i = 0; i < 3; i++) {
        const go = await both.claim("api|count", { latestStartMs: Number.POSITIVE_INFINITY });
        both.nowMs += 100;
        await both.observe("api|count", answer(seqOf(go), both.nowMs - 100, "ok", counted(2 - i)));
      }
      const deferred = await both.claim("api|count", { latestStartMs: both.nowMs + 1000 });
      const waited = await both.claim("api|count", { latestStartMs: Number.POSITIVE_INFINITY });
      whys.push(`${deferred.kind}: ${deferred.why}`, `${waited.kind}: ${waited.why}`);
      expect(waited).toMatchObject({ kind: "go", atMs: T0 + 10_000 });

      // The breaker opens (threshold 1) on a claim granted a window ahead: the probe that follows
      // would start past the caller's latest start, so it is deferred, not granted.
      const probe = await both.claim("api|breaker", { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 100;
      await both.observe("api|breaker", answer(seqOf(probe), both.nowMs - 100, "ok", { remaining: 0, limit: 2, resetAtMs: null, windowMs: 60_000, restorePerSecond: null, unitsPerRequest: null }));
      const ahead = await both.claim("api|breaker", { latestStartMs: Number.POSITIVE_INFINITY });
      await both.observe("api|breaker", answer(seqOf(ahead), both.nowMs, "throttled", null));
      const held = await both.claim("api|breaker", { latestStartMs: both.nowMs + 1000 });
      whys.push(`${held.kind}: ${held.why}`);
    } finally {
      await both.close();
    }
    expect(whys).toEqual([
      `defer: ${PACED_PAST_LATEST_WHY} (the server's count: waits for units to leave the window)`,
      "go: the server's count: waits for units to leave the window",
      "defer: the slots already granted in this scope reach past the latest start",
    ]);
  });

  it("agrees on a rate relearned without budget headers (a bucket paced one unit at a time) and on a late claim replayed or counted first", async () => {
    const both = new SideBySide(raw, server.url, "relearn:", T0, { probeSilentRate: false });
    const whys: string[] = [];
    try {
      const throttled = (seq: number, sentAtMs: number, waitMs: number) => ({ ...answer(seq, sentAtMs, "throttled", null), waitMs, waitFromServer: true });
      // Nothing shown: three successes, then a 429 saying 1 s (the first lesson: 3 per window).
      for (let i = 0; i < 3; i++) await both.sendAnswered("api|learn", 20, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      await both.sendAnswered("api|learn", 20, (seq, sentAtMs) => throttled(seq, sentAtMs, 1000));
      // From the reset: one admitted, then a 429 saying 600 ms: the episode measured 1 per ~0.6 s.
      both.nowMs = both.memory.snapshot().get("api|learn")!.notBeforeMs;
      const a = await both.claim("api|learn", { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 20;
      await both.observe("api|learn", answer(seqOf(a), both.nowMs - 20, "ok", null));
      await both.sendAnswered("api|learn", 20, (seq, sentAtMs) => throttled(seq, sentAtMs, 600));
      expect(both.memory.snapshot().get("api|learn")).toMatchObject({ refill: "bucket", limit: 1 });
      const paced = await both.claim("api|learn", { latestStartMs: Number.POSITIVE_INFINITY });
      whys.push(`${paced.kind}: ${paced.why}`);
      // A third episode admits 3 at that pace, then a 429 whose wait ends 3 s after it began: 1 per s,
      // more units than the limit of 1 (its window keeps the rate: 1 per about 1,000 ms, not 1 per 3 s).
      const thirdStartMs = Math.max(both.memory.snapshot().get("api|learn")!.notBeforeMs, paced.kind === "go" ? paced.atMs : 0);
      both.nowMs = thirdStartMs + 20;
      await both.observe("api|learn", answer(seqOf(paced), thirdStartMs, "ok", null));
      for (let i = 0; i < 2; i++) await both.sendAnswered("api|learn", 20, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      await both.sendAnswered("api|learn", 20, (seq, sentAtMs) => throttled(seq, sentAtMs, thirdStartMs + 3000 - (sentAtMs + 20)));
      // (The episode began at its reset, where the first of the three went: 3,000 ms for 3.)
      expect(both.memory.snapshot().get("api|learn")).toMatchObject({ refill: "bucket", limit: 1, windowMs: 1000 });

      // A shown budget: 2 left; the later of two claims is answered first (1 left), the earlier
      // one then comes back as a replay (never counted): its unit is free again.
      const fiveLeft = (left: number): ObservedBudget => shown({ remaining: left, limit: 5, resetAtMs: both.nowMs + 60_000 });
      // A probe's reading shows `left`; two claims go together and the later is answered first (1 left); returns the earlier claim.
      const laterAnsweredFirst = async (scope: string, left: number): Promise<ClaimResult> => {
        const probe = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        both.nowMs += 20;
        await both.observe(scope, answer(seqOf(probe), both.nowMs - 20, "ok", fiveLeft(left)));
        const early = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        const later = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        both.nowMs += 20;
        await both.observe(scope, answer(seqOf(later), both.nowMs - 20, "ok", fiveLeft(1)));
        return early;
      };
      const early = await laterAnsweredFirst("api|late", 2);
      await both.observe("api|late", { ...answer(seqOf(early), both.nowMs - 20, "ok", null), counted: false });
      const freed = await both.claim("api|late", { latestStartMs: Number.POSITIVE_INFINITY });
      whys.push(`${freed.kind}: ${freed.why}`);

      // The same, but the earlier one comes back counted, showing 2 left: the server counted it
      // before the later one, so the reading of 1 holds it already and its unit is free.
      const early2 = await laterAnsweredFirst("api|counted", 3);
      // Before the earlier one answers, a claim is told to ask again when it has (not booked after the reset).
      const due = await both.claim("api|counted", { latestStartMs: Number.POSITIVE_INFINITY });
      whys.push(`${due.kind}: ${due.why}`);
      await both.observe("api|counted", answer(seqOf(early2), both.nowMs - 20, "ok", fiveLeft(2)));
      const counted = await both.claim("api|counted", { latestStartMs: Number.POSITIVE_INFINITY });
      whys.push(`${counted.kind}: ${counted.why}`);
    } finally {
      await both.close();
    }
    expect(whys).toEqual([
      "go: learned rate: one unit at a time",
      "go: the server's count allows it",
      "wait: answers still out may show units free before the reset: asking again when they are in",
      "go: the server's count allows it",
    ]);
  });

  it("agrees on a first lesson's window read to the whole seconds of a Retry-After (the shortest that fits), and on one given to the millisecond", async () => {
    const both = new SideBySide(raw, server.url, "whole:", T0);
    const windows: (number | null)[] = [];
    try {
      for (const [scope, waitResolutionMs] of [["api|seconds", 1000], ["api|ms", undefined]] as const) {
        // Nothing shown: ten successes 25 ms apart, then a 429 saying 1 s (a fixed 10 per 1 s window read 250 ms in).
        for (let i = 0; i < 10; i++) await both.sendAnswered(scope, 25, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
        const eleventh = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        both.nowMs += 25;
        await both.observe(scope, { ...answer(seqOf(eleventh), both.nowMs - 25, "throttled", null), waitMs: 1000, waitFromServer: true, ...(waitResolutionMs === undefined ? {} : { waitResolutionMs }) });
        windows.push(both.memory.snapshot().get(scope)!.windowMs);
        both.nowMs += 2000;
      }
      // Fifteen successes 123 ms apart, then a 429 sent 1,845 ms in, answered 200 ms later, saying
      // 1 s: 2 s and 3 s both fit (bound 3,045 ms), the shorter is taken.
      const late = "api|late";
      for (let i = 0; i < 15; i++) await both.sendAnswered(late, 123, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      const sixteenth = await both.claim(late, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 200;
      await both.observe(late, { ...answer(seqOf(sixteenth), both.nowMs - 200, "throttled", null), waitMs: 1000, waitFromServer: true, waitResolutionMs: 1000 });
      windows.push(both.memory.snapshot().get(late)!.windowMs);
      // Eight successes 100 ms apart, then a 429 sent 800 ms in saying 2 s: the reset is after 1,800 ms.
      const told = "api|told";
      both.nowMs += 5000;
      for (let i = 0; i < 8; i++) await both.sendAnswered(told, 100, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      const ninth = await both.claim(told, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 20;
      await both.observe(told, { ...answer(seqOf(ninth), both.nowMs - 20, "throttled", null), waitMs: 2000, waitFromServer: true, waitResolutionMs: 1000 });
      windows.push(both.memory.snapshot().get(told)!.windowMs);
    } finally {
      await both.close();
    }
    // Whole seconds: 1,000 ms plus 1 %; to the millisecond: from the first success to the reset.
    expect(windows[0]).toBe(1010);
    expect(windows[1]).toBeGreaterThan(1200);
    expect(windows[2]).toBe(2020);
    expect(windows[3]).toBe(2020);
  });

  it("agrees on a window learned with no wait told: assumed, lengthened by a throttle that finds the lesson's units still counted, bounded by the first success; after the lesson one request in flight at a time", async () => {
    const both = new SideBySide(raw, server.url, "outlast:", T0);
    const scope = "api|outlast";
    const whys: string[] = [];
    const sources: (string | null)[] = [];
    const source = (): void => void sources.push(both.memory.snapshot().get(scope)!.windowSource);
    try {
      // A short backoff, so that the spacing of a quarter of the time measured decides the next probe.
      for (let i = 0; i < 4; i++) await both.sendAnswered(scope, 20, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      const fifth = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 20;
      await both.observe(scope, throttledNoWait(seqOf(fifth), both.nowMs - 20));
      source();
      // Eight more claims: the first goes when the log frees a unit, the others wait for its answer.
      for (let i = 0; i < 8; i++) {
        const result = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        whys.push(`${result.kind}: ${result.why.split(":")[0]}`);
      }
      // The first of them, sent when the log freed a unit, is throttled: the window is longer.
      const probeAtMs = both.memory.snapshot().get(scope)!.slots.find(([atMs]) => atMs > both.nowMs)![0];
      const probeSeq = both.memory.snapshot().get(scope)!.slots.find(([atMs]) => atMs > both.nowMs)![1];
      both.nowMs = probeAtMs + 20;
      await both.observe(scope, throttledNoWait(probeSeq, probeAtMs));
      source();
      both.nowMs = T0 + 3000;
      const later = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs = Math.max(both.nowMs, later.kind === "go" ? later.atMs : both.nowMs) + 20;
      await both.observe(scope, answer(seqOf(later), both.nowMs - 20, "ok", null));
      source();
    } finally {
      await both.close();
    }
    expect(sources).toEqual(["assumed", "outlasted", "inferred"]);
    // After the lesson the scope starts again from one in flight (observe.ts restartSlowStart).
    expect(whys).toEqual(["go: own log", ...Array<string>(7).fill("wait: 1 request(s) in flight, the most this scope takes at once for now")]);
  });

  it("agrees that a window outlasting a minute (a quota behind silence) holds the scope the whole time measured, not a quarter of it", async () => {
    const both = new SideBySide(raw, server.url, "quota-silence:", T0);
    const scope = "api|quota-silence";
    let held: GovernorState | undefined;
    try {
      for (let i = 0; i < 4; i++) await both.sendAnswered(scope, 20, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      await both.sendAnswered(scope, 20, throttledNoWait);
      // The next probe goes 70 s on (the jobs came later) and is throttled: the units are still counted.
      both.nowMs = T0 + 70_000;
      await both.sendAnswered(scope, 20, throttledNoWait);
      held = structuredClone(both.memory.snapshot().get(scope));
    } finally {
      await both.close();
    }
    expect(held?.windowSource).toBe("outlasted");
    expect(held?.notBeforeMs).toBe(T0 + 70_020 + (held?.windowFloorMs ?? 0));
  });

  it("agrees on probes at the documented lengths (1 and 2 s throttled, 3 s admitted), the window taken at 3 s between close bounds with its floor a quarter of the way below it, and on a trial that would gain under a twentieth of the window not going", async () => {
    const both = new SideBySide(raw, server.url, "documented:", T0);
    const scope = "api|documented";
    const whys: string[] = [];
    const startNext = starterOf(both, scope, whys);
    const throttledAtMs: number[] = [];
    try {
      for (let i = 0; i < 5; i++) await both.sendAnswered(scope, 20, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      const sixth = await startNext();
      both.nowMs += 20;
      await both.observe(scope, throttledNoWait(sixth.seq, sixth.atMs));
      // Probes at the documented lengths from the window's first unit, throttled until one goes past 3 s.
      let probe = await startNext();
      while (probe.atMs < T0 + 3000) {
        throttledAtMs.push(probe.atMs - T0);
        both.nowMs += 20;
        await both.observe(scope, throttledNoWait(probe.seq, probe.atMs));
        both.nowMs = both.memory.snapshot().get(scope)!.notBeforeMs;
        probe = await startNext();
      }
      expect(probe.atMs - T0).toBe(3030);
      both.nowMs += 20;
      await both.observe(scope, answer(probe.seq, probe.atMs, "ok", null));
      expect(both.memory.snapshot().get(scope)).toMatchObject({ windowMs: 3030, windowFloorMs: 2755, windowSource: "inferred" });
      for (let i = 0; i < 4; i++) {
        const g = await startNext();
        both.nowMs += 20;
        await both.observe(scope, answer(g.seq, g.atMs, "ok", null));
      }
      const next = await startNext();
      expect(next.atMs - probe.atMs).toBe(3030);
    } finally {
      await both.close();
    }
    expect(throttledAtMs.slice(-1)).toEqual([2020]);
    expect(whys.filter((why) => why === WINDOW_TRIAL_WHY)).toHaveLength(0);
  });

  it("agrees on trials of a window learned as an upper bound: the first start of the next window alone at the middle of the bounds, its throttle raising the floor, its success moving the window's units earlier", async () => {
    const both = new SideBySide(raw, server.url, "trial:", T0);
    const scope = "api|trial";
    const whys: string[] = [];
    const floors: number[] = [];
    const floor = (): void => void floors.push(both.memory.snapshot().get(scope)!.windowFloorMs);
    const startNext = starterOf(both, scope, whys);
    try {
      for (let i = 0; i < 5; i++) await both.sendAnswered(scope, 20, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      const sixth = await startNext();
      both.nowMs += 20;
      await both.observe(scope, throttledNoWait(sixth.seq, sixth.atMs));
      both.nowMs = T0 + 3000;
      const probe = await startNext();
      both.nowMs += 20;
      await both.observe(scope, throttledNoWait(probe.seq, probe.atMs));
      floor();
      both.nowMs = T0 + 5000;
      // One in flight at a time after the lessons (restartSlowStart): each answered before the next.
      for (let i = 0; i < 5; i++) {
        const g = await startNext();
        both.nowMs += 20;
        await both.observe(scope, answer(g.seq, g.atMs, "ok", null));
      }
      const trial = await startNext();
      expect(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })).toMatchObject({ kind: "wait" });
      both.nowMs += 20;
      await both.observe(scope, throttledNoWait(trial.seq, trial.atMs));
      floor();
      const second = await startNext();
      both.nowMs += 20;
      await both.observe(scope, answer(second.seq, second.atMs, "ok", null));
      for (let i = 0; i < 4; i++) await startNext();
      // Both trials answered: none is out.
      expect(both.memory.snapshot().get(scope)!.trialSeq).toBe(0);
    } finally {
      await both.close();
    }
    expect(whys.filter((why) => why === WINDOW_TRIAL_WHY)).toHaveLength(2);
    expect(floors[1]).toBeGreaterThan(floors[0]!);
  });

  it("agrees where a bucket's documented rate is shortened by its own count, where a later lesson's units are counted from the first success after the last, where what was admitted since the last lesson is a bucket's rate, and where a bucket's refill measured over two of its windows is (a window's, or one within two windows, is cut)", async () => {
    const both = new SideBySide(raw, server.url, "proven:", T0, { probeSilentRate: false });
    const scope = "api|proven";
    const windows: (number | null)[] = [];
    try {
      // Shopify REST's documented rate for 40 is 2 per s; the count comes back at 10 per s: a claim
      // every 500 ms spends one unit and five come back (5, 9, 13, ... remaining).
      for (let i = 0; i < 8; i++) {
        const sentAtMs = await both.sendAnswered(scope, 50, (seq, sent) => answer(seq, sent, "ok", shown({ remaining: 5 + 4 * i, limit: 40, restorePerSecond: 2, restoreEstimated: true })));
        windows.push(both.memory.snapshot().get(scope)!.windowMs);
        both.nowMs = sentAtMs + 500;
      }
      // No budget, no wait: a lesson (10 per window), then a second one at about that rate (9
      // admitted in the next window: the usual cut), then a probe throttled before any success.
      const noWait = (seq: number, sentAtMs: number) => ({ ...answer(seq, sentAtMs, "throttled", null), waitMs: 300, waitFromServer: false });
      const sendTo = (where: string, kind: "ok" | "throttled"): Promise<number> => both.sendAnswered(where, 10, (seq, sentAtMs) => (kind === "ok" ? answer(seq, sentAtMs, "ok", null) : noWait(seq, sentAtMs)));
      const quiet = "api|episodes";
      for (let i = 0; i < 10; i++) await sendTo(quiet, "ok");
      await sendTo(quiet, "throttled");
      const episodeStartMs = await sendTo(quiet, "ok");
      for (let i = 0; i < 8; i++) await sendTo(quiet, "ok");
      await sendTo(quiet, "throttled");
      both.nowMs = episodeStartMs + 1500;
      await sendTo(quiet, "throttled");
      windows.push(both.memory.snapshot().get(quiet)!.windowMs);
      // The same first lesson, then only 2 admitted before the next throttle: the rate regained
      // since the lesson's throttle, a bucket.
      const regained = "api|regained";
      both.nowMs = T0 + 60_000;
      for (let i = 0; i < 10; i++) await sendTo(regained, "ok");
      const lessonSentAtMs = await sendTo(regained, "throttled");
      for (let i = 0; i < 2; i++) await sendTo(regained, "ok");
      const throttledSentAtMs = await sendTo(regained, "throttled");
      expect(both.memory.snapshot().get(regained)).toMatchObject({ refill: "bucket", limit: 2, windowMs: throttledSentAtMs - lessonSentAtMs });
      // Paced at that rate, 20 admitted over more than two of its windows, then a throttle: the rate
      // admitted since, one unit less (bucketRateMeasured), not the cut to 1.
      for (let i = 0; i < 20; i++) await sendTo(regained, "ok");
      const measuredSentAtMs = await sendTo(regained, "throttled");
      expect(measuredSentAtMs - throttledSentAtMs).toBeGreaterThan(2 * (throttledSentAtMs - lessonSentAtMs));
      expect(both.memory.snapshot().get(regained)).toMatchObject({ refill: "bucket", limit: 2, windowMs: Math.round(((measuredSentAtMs - throttledSentAtMs) * 2) / 19) });
      // Not for a window (29 admitted over three of them: the cut), nor for a bucket throttled again
      // within two of its windows (the cut).
      const waited = (waitMs: number) => (seq: number, sentAtMs: number) => ({ ...answer(seq, sentAtMs, "throttled", null), waitMs, waitFromServer: false });
      // `oks` successes, then a throttle after the client's backoff of waitMs.
      const episode = async (where: string, oks: number, waitMs: number): Promise<void> => {
        for (let i = 0; i < oks; i++) await both.sendAnswered(where, 10, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
        await both.sendAnswered(where, 10, waited(waitMs));
      };
      const windowed = "api|windowed";
      both.nowMs = T0 + 120_000;
      await episode(windowed, 10, 500);
      await episode(windowed, 29, 500);
      expect(both.memory.snapshot().get(windowed)).toMatchObject({ refill: "window", limit: 8, windowMs: 1000 });
      const soon = "api|soon";
      both.nowMs = T0 + 180_000;
      await episode(soon, 10, 900);
      await episode(soon, 7, 10);
      const soonWindowMs = both.memory.snapshot().get(soon)!.windowMs;
      await episode(soon, 10, 500);
      expect(both.memory.snapshot().get(soon)).toMatchObject({ refill: "bucket", limit: 5, windowMs: soonWindowMs });
    } finally {
      await both.close();
    }
    expect(windows[0]).toBe(20_000);
    expect(windows[7]!).toBeLessThan(5000);
    expect(windows[8]).toBe(1500);
  });

  it("agrees where a budget is shown only on throttles: the first reading's lesson teaches no reserve, a success after its reset brings the limit back, and once that is spent a success lets two go", async () => {
    const both = new SideBySide(raw, server.url, "only429:", T0);
    const scope = "api|only429";
    const starts: number[] = [];
    const kinds: string[] = [];
    try {
      const send = (budget: ObservedBudget | null, kind: "ok" | "throttled" = "ok"): Promise<number> =>
        both.sendAnswered(scope, 20, (seq, sentAtMs) => ({ ...answer(seq, sentAtMs, kind, budget), waitMs: kind === "throttled" ? T0 + 1000 - (sentAtMs + 20) : null, waitFromServer: kind === "throttled" }));
      for (let i = 0; i < 5; i++) await send(null);
      await send(shown({ remaining: 0, limit: 5, resetAtMs: T0 + 1000 }), "throttled");
      both.nowMs = T0 + 1000;
      await send(null);
      const four: number[] = [];
      for (let i = 0; i < 4; i++) {
        const go = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        starts.push(go.kind === "go" ? go.atMs : Number.NaN);
        four.push(seqOf(go));
      }
      // Spent by our count, no window known: the first of the four to answer lets two go, then a probe.
      both.nowMs = T0 + 1040;
      await both.observe(scope, answer(four[0]!, T0 + 1020, "ok", null));
      const after: ClaimResult[] = [];
      for (let i = 0; i < 3; i++) after.push(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY }));
      for (const seq of four.slice(1)) await both.observe(scope, answer(seq, T0 + 1020, "ok", null));
      both.nowMs = T0 + 1060;
      await both.observe(scope, answer(seqOf(after[2]!), T0 + 1040, "ok", null));
      after.push(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY }));
      kinds.push(...after.map((r) => (r.kind === "go" ? (r.probe ? "probe" : "go") : r.kind)));
      // Where a success showed the budget, a probe's answer without fields (a replay) changes nothing.
      const shows = "api|shows";
      const first = await both.claim(shows, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 20;
      await both.observe(shows, answer(seqOf(first), both.nowMs - 20, "ok", shown({ remaining: 0, limit: 5, resetAtMs: T0 + 3000 })));
      both.nowMs = T0 + 3000;
      const probe = await both.claim(shows, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 20;
      await both.observe(shows, answer(seqOf(probe), both.nowMs - 20, "ok", null));
      expect(both.memory.snapshot().get(shows)!.anchor).toMatchObject({ remaining: 0, resetAtMs: T0 + 3000 });
    } finally {
      await both.close();
    }
    expect(starts).toEqual(Array<number>(4).fill(T0 + 1020));
    expect(kinds).toEqual(["go", "go", "probe", "probe"]);
  });

  it("agrees on a window's length shown beside a reset on a throttle, where successes show nothing: once spent by our count, starts follow the window", async () => {
    const both = new SideBySide(raw, server.url, "policy-w:", T0);
    const kinds: string[] = [];
    try {
      const scope = "api|policy-w";
      const send = (budget: ObservedBudget | null, kind: "ok" | "throttled" = "ok"): Promise<number> =>
        both.sendAnswered(scope, 20, (seq, sentAtMs) => ({ ...answer(seq, sentAtMs, kind, budget), waitMs: kind === "throttled" ? T0 + 1000 - (sentAtMs + 20) : null, waitFromServer: kind === "throttled" }));
      for (let i = 0; i < 5; i++) await send(null);
      await send(shown({ remaining: 0, limit: 5, resetAtMs: T0 + 1000, windowMs: 1000 }), "throttled");
      both.nowMs = T0 + 1000;
      await send(null);
      for (let i = 0; i < 5; i++) {
        const result = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        kinds.push(result.kind === "go" ? (result.probe ? "probe" : `go +${result.atMs - T0 - 1000}`) : result.kind);
      }
      expect(both.memory.snapshot().get(scope)).toMatchObject({ windowMs: 1000, windowSource: "shown" });
    } finally {
      await both.close();
    }
    // The window known, the limit goes as the last window's units leave it (a sliding log: each a
    // window after its own start, 20 ms apart; the fifth a window after the probe sent at the
    // reset), not one probe per answer.
    expect(kinds).toEqual(["go +20", "go +40", "go +60", "go +80", "go +1000"]);
  });

  it("agrees that a grant starting before the last one (a concurrency limit, a clock gone back) keeps the slots in start order", async () => {
    const both = new SideBySide(raw, server.url, "order:", T0);
    const scope = "api|order";
    try {
      const probe = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 20;
      await both.observe(scope, answer(seqOf(probe), both.nowMs - 20, "ok", shown({ remaining: 4, limit: 5, concurrent: true })));
      both.nowMs = T0 + 5000;
      await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs = T0 + 1000;
      await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
    } finally {
      await both.close();
    }
    const starts = both.memory.snapshot().get(scope)!.slots.map(([atMs]) => atMs);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
  });

  it("agrees on a bucket's claims granted far ahead at once (its restore rate spaces them)", async () => {
    const both = new SideBySide(raw, server.url, "gcra:", T0);
    const scope = "api|gcra";
    const starts: number[] = [];
    try {
      const probe = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 80;
      await both.observe(scope, answer(seqOf(probe), both.nowMs - 80, "ok", { remaining: 1, limit: 10, resetAtMs: null, windowMs: null, restorePerSecond: 2, unitsPerRequest: null }));
      for (let i = 0; i < 30; i++) {
        const go = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        starts.push(go.kind === "go" ? go.atMs : Number.NaN);
      }
    } finally {
      await both.close();
    }
    expect(starts[29]! - starts[1]!).toBe(28 * 500);
  });

  it("agrees that a bucket's estimated rate grants starts at most two units' spacing ahead and at most 2 s ahead, and that a start further off waits", async () => {
    // Shopify REST: all used, the documented rate for the size an estimate: 2 per s for 40 (two
    // units are 1 s), 0.5 per s for 10 (one unit is 2 s: the 2 s bound holds).
    const kinds = await claimKindsAfter("horizon:", {
      "api|forty": shown({ remaining: 0, limit: 40, restorePerSecond: 2, restoreEstimated: true }),
      "api|ten": shown({ remaining: 0, limit: 10, restorePerSecond: 0.5, restoreEstimated: true }),
    }, 80);
    expect(kinds).toEqual({ "api|forty": ["go", "go", "wait", "wait"], "api|ten": ["go", "wait", "wait", "wait"] });
  });

  it("agrees that a request that has waited longer reaches a start beyond an estimated rate's horizon first", async () => {
    const both = new SideBySide(raw, server.url, "seniority:", T0);
    const scope = "api|seniority";
    const kinds: string[] = [];
    try {
      await both.sendAndAnswer(scope, T0, shown({ remaining: 0, limit: 40, restorePerSecond: 2, restoreEstimated: true }), 50);
      await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      const second = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs = (second.kind === "go" ? second.atMs : Number.NaN) + 500 - 1100;
      for (const waitedMs of [undefined, 1000, 30_000]) {
        const result = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY, ...(waitedMs === undefined ? {} : { waitedMs }) });
        kinds.push(result.kind);
      }
    } finally {
      await both.close();
    }
    expect(kinds).toEqual(["wait", "wait", "go"]);
  });

  it("agrees that a reading's reset is compared with the one the previous reading showed, not the earlier one it was merged with", async () => {
    const both = new SideBySide(raw, server.url, "shown:", T0);
    const scope = "api|shown";
    const send = sendingLater(both, scope, 5);
    const states: (GovernorState | undefined)[] = [];
    try {
      await send(4, 3000);
      await send(3, 3000);
      // The count came back, its reset 960 ms on: units left, so the reset moved on (3,960, not merged into 3,000).
      await send(4, 3960);
      states.push(structuredClone(both.memory.snapshot().get(scope)));
      // The count continues, its reset 40 ms on from what the last reading showed: not a bucket's moving on.
      await send(3, 4000);
      states.push(structuredClone(both.memory.snapshot().get(scope)));
    } finally {
      await both.close();
    }
    expect(states[0]?.anchor).toMatchObject({ resetAtMs: T0 + 3960 });
    expect(states[0]?.anchor?.shownResetAtMs).toBeUndefined();
    expect(states[1]?.refill).not.toBe("bucket");
  });

  it("agrees that a count of one read as full whatever it showed is no evidence of a fixed window", async () => {
    const both = new SideBySide(raw, server.url, "of-one:", T0);
    const scope = "api|of-one";
    const send = sendingLater(both, scope, 1);
    let learned: GovernorState | undefined;
    try {
      await send(0, 2000);
      // Sent at the reset, its own unit fills the limit of one: the reset 2 s on says nothing of a window.
      await send(0, 4000);
      learned = structuredClone(both.memory.snapshot().get(scope));
    } finally {
      await both.close();
    }
    expect(learned?.refill).not.toBe("fixed");
  });

  it("agrees that a reset read a second on, less the Date's drift, while the count runs on is a bucket's", async () => {
    const both = new SideBySide(raw, server.url, "drift:", T0);
    const scope = "api|drift";
    const send = sendingLater(both, scope, 5);
    let learned: GovernorState | undefined;
    try {
      await send(4, 3040);
      // 980 ms on: a whole second read against a Date offset estimate 20 ms narrower.
      await send(3, 4020);
      learned = structuredClone(both.memory.snapshot().get(scope));
    } finally {
      await both.close();
    }
    expect(learned?.refill).toBe("bucket");
  });

  it("agrees that a reset counted down from when the answer was written, read a slow answer later, has not moved on (a bucket's would)", async () => {
    const both = new SideBySide(raw, server.url, "counted-down:", T0);
    const scope = "api|counted-down";
    const states: (GovernorState | undefined)[] = [];
    try {
      // 800 ms answers; each answer says 3 s left (its countdown, rounded up), read on arrival.
      const reading = (seq: number, sentAtMs: number, remaining: number) => answer(seq, sentAtMs, "ok", shown({ remaining, limit: 15, resetAtMs: sentAtMs + 800 + 3000, policyWindowMs: 3000, resetCountsDown: true }));
      await both.sendAnswered(scope, 800, (seq, sentAtMs) => reading(seq, sentAtMs, 14));
      await both.sendAnswered(scope, 800, (seq, sentAtMs) => reading(seq, sentAtMs, 13));
      states.push(structuredClone(both.memory.snapshot().get(scope)));
    } finally {
      await both.close();
    }
    expect(states[0]?.refill).not.toBe("bucket");
  });

  it("agrees that a window read as fixed whose reset reads 980 ms on before it is reached is sliding", async () => {
    const both = new SideBySide(raw, server.url, "fixed-drift:", T0);
    const scope = "api|fixed-drift";
    const sendAt = (atMs: number, remaining: number, resetOffsetMs: number): Promise<number> => {
      both.nowMs = T0 + atMs;
      return both.sendAnswered(scope, 20, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", shown({ remaining, limit: 10, resetAtMs: T0 + resetOffsetMs })));
    };
    const states: (GovernorState | undefined)[] = [];
    try {
      await sendAt(20, 9, 2000);
      await sendAt(2000, 9, 4000);
      await sendAt(2040, 8, 4000);
      states.push(structuredClone(both.memory.snapshot().get(scope)));
      await sendAt(3000, 8, 4980);
      states.push(structuredClone(both.memory.snapshot().get(scope)));
    } finally {
      await both.close();
    }
    expect(states.map((state) => state?.refill)).toEqual(["fixed", "window"]);
  });

  it("agrees that a fixed window read from one reset grants its next window only once the answers due to its burst are in", async () => {
    const both = new SideBySide(raw, server.url, "fixed-kind:", T0);
    const scope = "api|fixed-kind";
    const limit = 20;
    const go = async (): Promise<Extract<ClaimResult, { kind: "go" }>> => {
      const result = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      if (result.kind !== "go") expect.fail(`expected go at ${both.nowMs - T0} ms, got ${JSON.stringify(result)}`);
      return result;
    };
    const answerAt = async (granted: { seq: number; atMs: number }, atMs: number, remaining: number, resetOffsetMs: number): Promise<void> => {
      both.nowMs = T0 + atMs;
      await both.observe(scope, answer(granted.seq, granted.atMs, "ok", shown({ remaining, limit, resetAtMs: T0 + resetOffsetMs })));
    };
    const whys: string[] = [];
    let learned: GovernorState | undefined;
    try {
      await answerAt(await go(), 100, limit - 1, 1100);
      both.nowMs = T0 + 100;
      const first = [];
      for (let i = 1; i < limit; i++) first.push(await go());
      for (const [i, granted] of first.entries()) await answerAt(granted, 200, limit - 2 - i, 1100);
      both.nowMs = T0 + 1100;
      await answerAt(await go(), 1200, limit - 1, 2200);
      both.nowMs = T0 + 1200;
      const burst = [];
      for (let i = 1; i < limit; i++) burst.push(await go());
      const held = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      whys.push(`${held.kind}: ${held.why.split(":")[0]}`);
      // A bucket's time to full, in whole seconds, moves on as its count runs down.
      for (const [i, granted] of burst.entries()) await answerAt(granted, 1300, limit - 2 - i, 1300 + Math.ceil((i + 2) / 10) * 1000);
      learned = structuredClone(both.memory.snapshot().get(scope));
      const next = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      whys.push(`${next.kind}: ${next.why.split(":")[0]}`);
    } finally {
      await both.close();
    }
    expect(whys[0]).toBe("wait: fixed window");
    expect(learned?.refill).toBe("bucket");
  });

  it("agrees that a probe sent at a reset is answered by a reading of the next window that another request brought (a reset read late)", async () => {
    const both = new SideBySide(raw, server.url, "reset-probe:", T0);
    const scope = "api|reset-probe";
    const four = (left: number, resetAfterMs: number): ObservedBudget => shown({ remaining: left, limit: 4, resetAtMs: T0 + resetAfterMs });
    const go = async (): Promise<number> => seqOf(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY }));
    try {
      await both.sendAndAnswer(scope, T0, four(3, 1050), 50);
      const [second, third] = [await go(), await go()];
      both.nowMs = T0 + 100;
      await both.observe(scope, answer(second, T0 + 50, "ok", four(2, 1050)));
      await both.observe(scope, answer(third, T0 + 50, "ok", four(1, 1050)));
      both.nowMs = T0 + 950;
      const last = await go();
      expect(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })).toMatchObject({ kind: "go", probe: true, atMs: T0 + 1050 });
      both.nowMs = T0 + 1050;
      await both.observe(scope, answer(last, T0 + 950, "ok", four(3, 2050)));
      expect(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })).toMatchObject({ kind: "go", probe: false, atMs: T0 + 1050 });
    } finally {
      await both.close();
    }
  });

  it("agrees that a concurrency limit shown on 429s alone is one lesson per burst: the cap stays at the limit shown as the burst's throttles drain it", async () => {
    const both = new SideBySide(raw, server.url, "shown-429:", T0);
    const scope = "api|shown-429";
    const full = shown({ remaining: 0, limit: 3, resetAtMs: T0 + 1000, concurrent: true });
    try {
      await both.sendAnswered(scope, 20, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      const burst: number[] = [];
      for (let i = 0; i < 4; i++) burst.push(seqOf(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })));
      both.nowMs = T0 + 40;
      await both.observe(scope, answer(burst[0]!, T0 + 20, "throttled", full));
      await both.observe(scope, answer(burst[1]!, T0 + 20, "ok", null));
      await both.observe(scope, answer(burst[2]!, T0 + 20, "ok", null));
      await both.observe(scope, answer(burst[3]!, T0 + 20, "throttled", full));
      expect(both.memory.snapshot().get(scope)).toMatchObject({ concurrency: "shown", inFlightCap: 3 });
    } finally {
      await both.close();
    }
  });

  it("agrees that a sliding window read too short is lengthened by a spent throttle's reset, back to the limit-th newest unit of ours", async () => {
    const both = new SideBySide(raw, server.url, "lengthen:", T0 + 3120);
    const scope = "api|lengthen";
    const slots: GovernorState["slots"] = [[T0 + 2040, 1, 1], [T0 + 2050, 2, 1], [T0 + 2060, 3, 1], [T0 + 3100, 4, 1]];
    const misread: GovernorState = { ...emptyState(T0), seq: 4, limit: 3, windowMs: 1020, windowSource: "inferred", rttMs: 20, slots, inFlight: [[4, T0 + 33_100, 1]] };
    try {
      await writeBoth(raw, both, scope, misread);
      await both.observe(scope, { ...answer(4, T0 + 3100, "throttled", shown({ remaining: 0, limit: 3, resetAtMs: T0 + 5000 })), waitMs: 1000, waitFromServer: true });
      expect(both.memory.snapshot().get(scope)?.windowMs).toBe(1960);
    } finally {
      await both.close();
    }
  });

  it("agrees that a reset moved on over a second before the last shown one is a bucket's, though a unit came back meanwhile", async () => {
    const both = new SideBySide(raw, server.url, "early-reset:", T0);
    const scope = "api|early-reset";
    const forty = (remaining: number, resetAfterMs: number): ObservedBudget => shown({ remaining, limit: 40, resetAtMs: T0 + resetAfterMs });
    try {
      await both.sendAndAnswer(scope, T0, forty(39, 2020), 20);
      const burst: number[] = [];
      for (let i = 0; i < 14; i++) burst.push(seqOf(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })));
      both.nowMs = T0 + 40;
      for (const [i, seq] of burst.entries()) await both.observe(scope, answer(seq, T0 + 20, "ok", forty(38 - i, 2020)));
      await both.sendAndAnswer(scope, T0 + 200, forty(25, 3040), 20);
      expect(both.memory.snapshot().get(scope)).toMatchObject({ refill: "bucket", windowSource: "inferred" });
    } finally {
      await both.close();
    }
  });

  it("agrees that a bucket takes no more requests in flight than it holds, however fast it refills", async () => {
    const kinds = await claimKindsAfter("size:", {
      // 3 of 3 left, refilling 60 per s: as a rate, a fourth start would go 17 ms on.
      "api|size": shown({ remaining: 3, limit: 3, restorePerSecond: 60 }),
      // None left, refilling 30 per s: starts at 50, 67 and 100 ms, the fourth's at 133 within two round trips of them.
      "api|ahead": shown({ remaining: 0, limit: 3, restorePerSecond: 30 }),
    }, 50);
    expect(kinds).toEqual({ "api|size": ["go", "go", "go", "wait"], "api|ahead": ["go", "go", "go", "wait"] });
  });

  it("agrees that successes showing no count shorten an estimated bucket rate that a later 429 shows", async () => {
    const both = new SideBySide(raw, server.url, "admitted:", T0);
    const scope = "api|admitted";
    try {
      // 60 successes with no budget shown, 20 ms apart; then a 429 shows 40 of 40 used at Shopify's documented 2 per s.
      for (let i = 0; i < 60; i++) await both.sendAnswered(scope, 20, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      await both.sendAnswered(scope, 20, (seq, sentAtMs) => answer(seq, sentAtMs, "throttled", shown({ remaining: 0, limit: 40, restorePerSecond: 2, restoreEstimated: true })));
      for (let i = 0; i < 3; i++) await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
    } finally {
      await both.close();
    }
    // 60 admitted from a bucket of 40 in 1.2 s: it refills far faster than 40 per 20 s.
    expect(both.memory.snapshot().get(scope)?.windowMs).toBeLessThan(5000);
  });

  it("agrees where a count with no reset comes back in full at a throttle's told wait (a fixed window behind Shopify's header): the turn to a window, its length from the next told reset, and no reserve for that throttle", async () => {
    const both = new SideBySide(raw, server.url, "countwin:", T0);
    const scope = "api|countwin";
    const count = (remaining: number): ObservedBudget => shown({ remaining, limit: 40, restorePerSecond: 2, restoreEstimated: true });
    const throttled = (seq: number, sentAtMs: number, waitMs: number) => ({ ...answer(seq, sentAtMs, "throttled", count(0)), waitMs, waitFromServer: true });
    const claimNow = () => both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
    /** Claims granted now, sent at their starts, each answered 100 ms later with the count one lower. */
    const spend = async (units: number, left: number): Promise<void> => {
      const sent: ClaimResult[] = [];
      for (let i = 0; i < units; i++) sent.push(await claimNow());
      const sentAtMs = both.nowMs;
      both.nowMs += 100;
      for (const go of sent) await both.observe(scope, answer(seqOf(go), sentAtMs, "ok", count(--left)));
    };
    const kinds: string[] = [];
    try {
      await both.sendAnswered(scope, 100, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", count(39)));
      await spend(39, 39);
      // The estimated rate's next unit, throttled 300 ms before the window's reset.
      const paced = await claimNow();
      both.nowMs = Math.max(both.nowMs, paced.kind === "go" ? paced.atMs : both.nowMs) + 100;
      await both.observe(scope, throttled(seqOf(paced), both.nowMs - 100, 300));
      const toldResetMs = both.nowMs + 300;
      // The next start no later than the told wait; its answer shows the count back in full.
      const first = await claimNow();
      both.nowMs = Math.max(toldResetMs, first.kind === "go" ? first.atMs : toldResetMs);
      const firstSentMs = both.nowMs;
      both.nowMs += 100;
      await both.observe(scope, answer(seqOf(first), firstSentMs, "ok", count(39)));
      kinds.push(both.memory.snapshot().get(scope)!.refill);
      await spend(39, 39);
      // Spent, length unknown: one request, throttled, tells the next reset a second after the last.
      const lengthProbe = await claimNow();
      both.nowMs += 100;
      await both.observe(scope, throttled(seqOf(lengthProbe), both.nowMs - 100, toldResetMs + 1000 - both.nowMs));
      for (let i = 0; i < 3; i++) kinds.push((await claimNow()).kind);
    } finally {
      await both.close();
    }
    expect(kinds).toEqual(["fixed", "go", "go", "go"]);
    expect(both.memory.snapshot().get(scope)).toMatchObject({ refill: "fixed", windowMs: 1000, windowSource: "inferred", reserveUnits: 0 });
  });

  it("agrees where an estimated rate shown only on 429s is probed after two starts it paced, where a probe's 429 takes it back, and where a burst's 429s prove no refill", async () => {
    const both = new SideBySide(raw, server.url, "estimate:", T0);
    const scope = "api|estimate";
    const empty = shown({ remaining: 0, limit: 4, restorePerSecond: 0.2, restoreEstimated: true });
    const windows: Array<number | null | undefined> = [];
    try {
      // A start far ahead is claimed again when near: ask then.
      const send = async (kind: "ok" | "throttled"): Promise<void> => void windows.push(await sendWhenNear(both, scope, kind, empty));
      await send("throttled");
      for (let i = 0; i < 5; i++) await send("ok");
      await send("throttled");
      // After 30 s the bucket is full again: four starts 50 ms apart are a burst from it, no pacing.
      both.nowMs += 30_000;
      for (let i = 0; i < 4; i++) await send("ok");
      // Slow start with nothing shown until 16 are out at once, sent over 150 ms: one admitted, 15
      // rejected, each 429 showing 20 of 20 used. No 429 is a unit come back.
      const burstScope = "api|estimate-burst";
      let burst: Array<{ seq: number; atMs: number }> = [];
      while (burst.length < 16) {
        burst = [];
        for (let r = await both.claim(burstScope, { latestStartMs: Number.POSITIVE_INFINITY }); r.kind === "go" && burst.length < 16; r = await both.claim(burstScope, { latestStartMs: Number.POSITIVE_INFINITY })) burst.push(r);
        if (burst.length < 16) {
          for (const granted of burst) {
            both.nowMs += 1;
            await both.observe(burstScope, answer(granted.seq, granted.atMs, "ok", null));
          }
        }
        both.nowMs += 100;
      }
      const empty20 = shown({ remaining: 0, limit: 20, restorePerSecond: 1, restoreEstimated: true });
      await both.observe(burstScope, answer(burst[0]!.seq, burst[0]!.atMs, "ok", null));
      await both.observe(burstScope, answer(burst[1]!.seq, burst[1]!.atMs, "throttled", empty20));
      windows.push(both.memory.snapshot().get(burstScope)?.windowMs);
      both.nowMs += 150;
      for (const [i, granted] of burst.slice(2).entries()) await both.observe(burstScope, answer(granted.seq, granted.atMs + i * 10, "throttled", empty20));
      windows.push(both.memory.snapshot().get(burstScope)?.windowMs);
    } finally {
      await both.close();
    }
    // 4 per 20 s from the 429; halved at the second paced start (the first has none before it);
    // back at the probe's 429; not halved by a burst from a full bucket. The 429s' burst leaves the
    // window its first 429 taught.
    expect(windows.slice(0, 11)).toEqual([20_000, 20_000, 20_000, 10_000, 10_000, 10_000, 20_000, 20_000, 20_000, 20_000, 20_000]);
    expect(windows[12]).toBe(windows[11]);
  });

  it("agrees where a bucket shown smaller than the provider documents is paced at its slowest documented rate, and where 429s on starts that rate paced double the window up to the documented one", async () => {
    const both = new SideBySide(raw, server.url, "floor:", T0);
    const scope = "api|floor";
    // Shopify REST's count, 4 of 4 used: documented 0.2 per s (20 s a bucket), no plan slower than 2 per s (2 s).
    const empty = shown({ remaining: 0, limit: 4, restorePerSecond: 0.2, restoreEstimated: true, restoreFloorPerSecond: 2 });
    const windows: Array<number | null | undefined> = [];
    try {
      const send = async (kind: "ok" | "throttled"): Promise<void> => void windows.push(await sendWhenNear(both, scope, kind, empty));
      await send("throttled");
      await send("ok");
      for (let i = 0; i < 4; i++) await send("throttled");
      // A count of 15 (documented 0.75 per s) paced at the floor, back 300 ms after a reading: 0.6
      // of a unit at the floor, 0.225 at the documented rate, so a concurrency limit put to the test.
      const counted = "api|floor-count";
      const count = (left: number) => shown({ remaining: left, limit: 15, restorePerSecond: 0.75, restoreEstimated: true, restoreFloorPerSecond: 2 });
      const firstAtMs = both.nowMs;
      const first = await both.claim(counted, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 20;
      await both.observe(counted, answer(seqOf(first), firstAtMs, "ok", count(14)));
      both.nowMs = firstAtMs + 300;
      const next = await both.claim(counted, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 20;
      await both.observe(counted, answer(seqOf(next), firstAtMs + 300, "ok", count(14)));
    } finally {
      await both.close();
    }
    // The first 429 is read at the floor; each later one, on a start the floor paced, doubles the
    // window (once per claim since the last lesson) until the documented 20 s.
    expect(windows).toEqual([2000, 2000, 4000, 8000, 16_000, 20_000]);
    expect(both.memory.snapshot().get("api|floor-count")).toMatchObject({ concurrency: "testing", inFlightCap: 15 });
  });

  // Each throttle tells no wait; the client either records none, or its own backoff (held until a
  // concurrency limit is read, which ends the hold).
  it.each([
    ["no wait recorded", null],
    ["the client's own backoff of 400 ms", 400],
  ] as const)("agrees on a concurrency limit that shows nothing: learned from the successes after a lesson's throttle, grown, and lowered by a throttle (%s)", async (label, backoffMs) => {
    const both = new SideBySide(raw, server.url, `silent-${backoffMs ?? 0}:`, T0);
    const scope = "api|silent";
    const server10 = concurrencyLimit(10, 100);
    // 40 workers, each request answered 100 ms after it is sent; the server shows nothing and tells no
    // wait. After each answer the workers claim again, and a start that is due is sent at once.
    let sends: Array<{ seq: number; atMs: number }> = [];
    let out: Array<{ seq: number; sentAtMs: number; admitted: boolean }> = [];
    let succeeded = 0;
    const sendDue = (nowMs: number): void => {
      for (const due of sends.filter((g) => g.atMs <= nowMs)) out.push({ seq: due.seq, sentAtMs: due.atMs, admitted: server10.admit(due.atMs).admitted });
      sends = sends.filter((g) => g.atMs > nowMs);
    };
    const claimAll = async (nowMs: number): Promise<void> => {
      while (out.length + sends.length < 40) {
        const result = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        if (result.kind !== "go") break;
        sends.push({ seq: result.seq, atMs: result.atMs });
        sendDue(nowMs);
      }
    };
    try {
      for (let nowMs = T0; succeeded < 200 && nowMs < T0 + 30_000; nowMs += 10) {
        both.nowMs = nowMs;
        sendDue(nowMs);
        for (const sent of out.filter((o) => o.sentAtMs + 100 <= nowMs)) {
          out = out.filter((o) => o.seq !== sent.seq);
          await both.observe(scope, { ...answer(sent.seq, sent.sentAtMs, sent.admitted ? "ok" : "throttled", null), ...(sent.admitted ? {} : { waitMs: backoffMs }) });
          if (sent.admitted) succeeded += 1;
          await claimAll(nowMs);
        }
        await claimAll(nowMs);
      }
    } finally {
      await both.close();
    }
    expect(both.memory.snapshot().get(scope), label).toMatchObject({ concurrency: "silent" });
  });

  it("agrees that two successes after a lesson's throttle tell a silent concurrency limit of two", async () => {
    const both = new SideBySide(raw, server.url, "silent-two:", T0);
    const scope = "api|silent-two";
    const starts: number[] = [];
    try {
      // Slow start to four in flight (100 ms answers) under a limit of two: the first and third to
      // arrive are throttled with no wait told (the client's own 400 ms backoff), the others succeed.
      const { claimAt, four } = await slowStartToFour(both, scope);
      both.nowMs = T0 + 300;
      for (const i of [0, 2]) await both.observe(scope, { ...answer(seqOf(four[i]!), T0 + 200, "throttled", null), waitMs: 400 });
      for (const i of [1, 3]) await both.observe(scope, answer(seqOf(four[i]!), T0 + 200, "ok", null));
      for (let i = 0; i < 3; i++) {
        const result = await claimAt(T0 + 300);
        starts.push(result.kind === "go" ? result.atMs - T0 : -1);
      }
    } finally {
      await both.close();
    }
    expect(both.memory.snapshot().get(scope)).toMatchObject({ concurrency: "silent", inFlightCap: 2 });
    expect(starts).toEqual([300, 300, -1]);
  });

  it("agrees that a slow start ends at the most claims tracked in flight and does not begin again", async () => {
    const both = new SideBySide(raw, server.url, "slow-start-end:", T0);
    const scope = "api|unlimited";
    try {
      // One request at a time, a second each (a slow start past eight grows one per success only
      // where answers take that long), at an API that shows and throttles nothing.
      for (let i = 0; i < MAX_IN_FLIGHT + 3; i++) await both.sendAnswered(scope, 1000, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      expect(both.memory.snapshot().get(scope)).toMatchObject({ inFlightCap: MAX_IN_FLIGHT, inFlightCapGrows: false });
      expect(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })).toMatchObject({ kind: "go", probe: false });
    } finally {
      await both.close();
    }
  });

  it("agrees on a log past its bound: neighbours sent together merged first (two bursts of 200 and 120)", async () => {
    const both = new SideBySide(raw, server.url, "slots-bound:", T0);
    const scope = "api|bursts";
    try {
      const reading = shown({ remaining: 9_000, limit: 10_000, resetAtMs: T0 + 3_600_000 });
      await both.sendAndAnswer(scope, T0, reading, 20);
      for (let i = 0; i < 200; i++) await both.sendAndAnswer(scope, T0 + 100, null, 20);
      for (let i = 0; i < 120; i++) await both.sendAndAnswer(scope, T0 + 5_000 + i, null, 20);
      const slots = both.memory.snapshot().get(scope)!.slots;
      expect(slots).toHaveLength(MAX_SLOTS);
      expect(slots.filter(([atMs]) => atMs === T0 + 100).reduce((sum, [, , units]) => sum + units, 0)).toBe(200);
    } finally {
      await both.close();
    }
  });

  it("agrees that successes sent with a silent lesson's throttled request show a concurrency limit though one sent a round trip later stretches the rate's time", async () => {
    const both = new SideBySide(raw, server.url, "silent-burst:", T0);
    const scope = "api|silent-burst";
    const claimAt = claimerAt(both, scope);
    const ok = (sent: ClaimResult, sentAtMs: number) => both.observe(scope, answer(seqOf(sent), sentAtMs, "ok", null));
    try {
      // 400 ms answers: the probe, four, eight, then a burst of eleven whose third is throttled (no wait told).
      expect(await slowStartToEight(both, scope, 400)).toBe(T0 + 1200);
      const burst: ClaimResult[] = [];
      for (let i = 0; i < 11; i++) burst.push(await claimAt(T0 + 1200));
      both.nowMs = T0 + 1600;
      await ok(burst[0]!, T0 + 1200);
      const late = await claimAt(T0 + 1600);
      await ok(burst[1]!, T0 + 1200);
      await both.observe(scope, { ...answer(seqOf(burst[2]!), T0 + 1200, "throttled", null), waitMs: 500, waitFromServer: false });
      for (const sent of burst.slice(3)) await ok(sent, T0 + 1200);
      both.nowMs = T0 + 2000;
      await ok(late, T0 + 1600);
      expect(both.memory.snapshot().get(scope)).toMatchObject({ concurrency: "silent", inFlightCap: 9 });
    } finally {
      await both.close();
    }
  });

  it("agrees that throttles naming a concurrency limit (Stripe's global-concurrency) are one lesson: the cap is the others out at the first one's send, less each further throttle of the burst, in whatever order its answers come", async () => {
    const both = new SideBySide(raw, server.url, "told-burst:", T0);
    const scope = "api|told-burst";
    const claimAt = claimerAt(both, scope);
    const ok = (sent: ClaimResult, sentAtMs: number) => both.observe(scope, answer(seqOf(sent), sentAtMs, "ok", null));
    const told = (sent: ClaimResult, sentAtMs: number) => both.observe(scope, { ...answer(seqOf(sent), sentAtMs, "throttled", null), limitType: "concurrency", waitMs: 500, waitFromServer: false });
    try {
      // 1.5 s answers: the probe, four, eight, then a burst of sixteen whose ten successes are applied first.
      const atMs = await slowStartToEight(both, scope, 1500);
      const burst: ClaimResult[] = [];
      for (let i = 0; i < 16; i++) burst.push(await claimAt(atMs));
      both.nowMs = atMs + 1500;
      for (const sent of burst.slice(0, 10)) await ok(sent, atMs);
      for (const sent of burst.slice(10)) await told(sent, atMs);
      expect(both.memory.snapshot().get(scope)).toMatchObject({ concurrency: "silent", inFlightCap: 10, breakerOpen: false });
      // A later claim's throttle is a new lesson: one under the others out at its send.
      const next: ClaimResult[] = [];
      for (let i = 0; i < 10; i++) next.push(await claimAt(atMs + 1500));
      expect((await claimAt(atMs + 1500)).kind).toBe("wait");
      both.nowMs = atMs + 3000;
      await told(next[0]!, atMs + 1500);
      expect(both.memory.snapshot().get(scope)).toMatchObject({ concurrency: "silent", inFlightCap: 9 });
    } finally {
      await both.close();
    }
  });

  it("agrees where a count shown only on throttles is first read spent with more of ours out after twice it succeeded: a limit on requests in flight, ruled out by a later claim's throttle", async () => {
    const both = new SideBySide(raw, server.url, "throttle-count:", T0);
    const scope = "api|403-only";
    const claimAt = claimerAt(both, scope);
    const reading = (resetAtMs: number): ObservedBudget => shown({ remaining: 0, limit: 4, resetAtMs });
    const throttled = (seq: number, sentAtMs: number, resetAtMs: number) => ({ ...answer(seq, sentAtMs, "throttled", reading(resetAtMs)), waitMs: resetAtMs - both.nowMs, waitFromServer: true });
    try {
      // The probe and four succeed; of six sent at T0 + 200 four succeed and two are throttled.
      const probe = await claimAt(T0);
      both.nowMs = T0 + 100;
      await both.observe(scope, answer(seqOf(probe), T0, "ok", null));
      const four = [];
      for (let i = 0; i < 4; i++) four.push(await claimAt(T0 + 100));
      both.nowMs = T0 + 200;
      for (const sent of four) await both.observe(scope, answer(seqOf(sent), T0 + 100, "ok", null));
      const six = [];
      for (let i = 0; i < 6; i++) six.push(await claimAt(T0 + 200));
      both.nowMs = T0 + 300;
      for (const sent of six.slice(0, 4)) await both.observe(scope, answer(seqOf(sent), T0 + 200, "ok", null));
      for (const sent of six.slice(4)) await both.observe(scope, throttled(seqOf(sent), T0 + 200, T0 + 1000));
      expect(both.memory.snapshot().get(scope)).toMatchObject({ concurrency: "inferred", inFlightCap: 4 });
      const next = [];
      for (let i = 0; i < 4; i++) next.push(await claimAt(T0 + 300));
      expect((await claimAt(T0 + 300)).kind).toBe("wait");
      both.nowMs = T0 + 1100;
      await both.observe(scope, answer(seqOf(next[0]!), T0 + 1000, "ok", null));
      await both.observe(scope, throttled(seqOf(next[1]!), T0 + 1000, T0 + 2000));
      expect(both.memory.snapshot().get(scope)).toMatchObject({ concurrency: "ruled-out" });
    } finally {
      await both.close();
    }
  });

  it("agrees that past eight in flight a slow start grows by rttMs / 1000 per success (20 ms answers: one per 50)", async () => {
    const both = new SideBySide(raw, server.url, "slow-start-fast:", T0);
    const scope = "api|fast";
    try {
      for (let i = 0; i < 205; i++) await both.sendAnswered(scope, 20, (seq, sentAtMs) => answer(seq, sentAtMs, "ok", null));
      // Four to eight over the first four successes, then 200 x 20 / 1000 = 4 more.
      expect(both.memory.snapshot().get(scope)).toMatchObject({ inFlightCap: 12, inFlightCapGrows: true });
    } finally {
      await both.close();
    }
  });

  it("agrees that a rate learned from throttles alone is probed up after a clean bucketful, goes back on a throttle before the next, and waits eight bucketfuls after it", async () => {
    const both = new SideBySide(raw, server.url, "silent-probe:", T0);
    const scope = "api|silent-probe";
    const noWait = (seq: number, sentAtMs: number) => ({ ...answer(seq, sentAtMs, "throttled", null), waitMs: 500, waitFromServer: false });
    const send = (kind: "ok" | "throttled"): Promise<number> => both.sendAnswered(scope, 10, (seq, sentAtMs) => (kind === "ok" ? answer(seq, sentAtMs, "ok", null) : noWait(seq, sentAtMs)));
    const state = (): GovernorState => both.memory.snapshot().get(scope)!;
    try {
      // Nothing shown, no wait told: 10 admitted and a throttle, then 2 and a throttle (a bucket of 2).
      for (let i = 0; i < 10; i++) await send("ok");
      await send("throttled");
      for (let i = 0; i < 2; i++) await send("ok");
      await send("throttled");
      expect(state()).toMatchObject({ refill: "bucket", limit: 2, probedFromWindowMs: 0 });
      const learnedMs = state().windowMs!;
      for (let i = 0; i < 3 && state().probedFromWindowMs === 0; i++) await send("ok");
      expect(state()).toMatchObject({ probedFromWindowMs: learnedMs, windowMs: Math.round((learnedMs * 2) / 3) });
      await send("throttled");
      expect(state()).toMatchObject({ windowMs: learnedMs, probedFromWindowMs: 0, estimateProbeFailed: true });
      let paced = 0;
      for (; paced < 20 && state().probedFromWindowMs === 0; paced++) await send("ok");
      expect(paced).toBeGreaterThanOrEqual(16);
      expect(state().probedFromWindowMs).toBe(learnedMs);
    } finally {
      await both.close();
    }
  });

  it("agrees that a start laid from a lesson's rate more than an answer time ahead waits for the claims still out at the lesson, and one within an answer time goes", async () => {
    const both = new SideBySide(raw, server.url, "lessonout:", T0);
    const scope = "api|lessonout";
    const whys: string[] = [];
    try {
      const { claimAt, four } = await slowStartToFour(both, scope);
      both.nowMs = T0 + 300;
      await both.observe(scope, { ...answer(seqOf(four[0]!), T0 + 200, "throttled", null), waitMs: 1000, waitFromServer: true, waitResolutionMs: 1000 });
      whys.push((await claimAt(T0 + 300)).why);
      // A start within an answer time of the wait's end is granted; the lesson's other claims then answer.
      const near = await claimAt(T0 + 1250);
      whys.push(near.why);
      for (const sent of four.slice(1)) await both.observe(scope, answer(seqOf(sent), T0 + 200, "ok", null));
      for (let i = 0; i < 3; i++) whys.push((await claimAt(T0 + 1250)).why.split(":")[0]!);
    } finally {
      await both.close();
    }
    expect(whys[0]).toContain("claims out at the last throttle");
    expect(whys[1]).not.toContain("claims out at the last throttle");
  });

  it("agrees on others' spending bounded, in a fixed window, by the count since it began less what we started", async () => {
    const both = new SideBySide(raw, server.url, "bound:", T0);
    try {
      const scope = "api|fixed";
      await learnFixedWindow(both, scope);
      both.nowMs = reset1 + 100;
      const ours: number[] = [];
      for (let i = 0; i < 20; i++) ours.push(seqOf(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })));
      both.nowMs += 50;
      for (let i = 0; i < 19; i++) await both.observe(scope, answer(ours[i]!, reset1 + 100, "ok", fixedBudget(98 - i, reset1 + 10_000)));
      // A reading too high for what the server counted, written on both sides alike.
      const state = roundTrip(both.memory.snapshot().get(scope)) as Record<string, unknown> & { anchor: Record<string, unknown> };
      const raised = { ...state, anchor: { ...state.anchor, remaining: 95, lateUnits: 0 } };
      await writeBoth(raw, both, scope, raised);
      both.nowMs = reset1 + 400;
      await both.observe(scope, answer(ours[19]!, reset1 + 300, "ok", fixedBudget(79, reset1 + 10_000)));
      expect(both.memory.snapshot().get(scope)).toMatchObject({ refill: "fixed", othersPerMs: 0, reserveUnits: 0 });
    } finally {
      await both.close();
    }
  });

  it("agrees where a fixed window defers a claim to its next reset, where resets further apart than the inferred window keep a sliding reading, and where a reset that moves on reads as a bucket (or, read as fixed, as sliding)", async () => {
    const both = new SideBySide(raw, server.url, "resets:", T0);
    try {
      await learnFixedWindow(both, "api|fixed");
      const spent = await both.claim("api|fixed", { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 50;
      await both.observe("api|fixed", answer(seqOf(spent), both.nowMs - 50, "ok", fixedBudget(0, reset1 + 10_000)));
      const deferred = await both.claim("api|fixed", { latestStartMs: both.nowMs + 1000 });
      expect(deferred).toMatchObject({ kind: "defer", notBeforeMs: reset1 + 10_000 });
      expect(deferred.why).toMatch(/\(fixed window/);

      // 10 per second behind whole-second resets: the window is at most 1050 ms, and two resets 2 s apart are not one window.
      const reading = (left: number, resetAtMs: number): ObservedBudget => shown({ remaining: left, limit: 10, resetAtMs });
      both.nowMs = T0 + 950;
      const probe = await both.claim("api|sliding", { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs = T0 + 1000;
      await both.observe("api|sliding", answer(seqOf(probe), T0 + 950, "ok", reading(9, T0 + 2000)));
      const firsts = [];
      for (let i = 0; i < 9; i++) firsts.push(await both.claim("api|sliding", { latestStartMs: Number.POSITIVE_INFINITY }));
      both.nowMs = T0 + 1050;
      for (const [i, go] of firsts.entries()) await both.observe("api|sliding", answer(seqOf(go), T0 + 1000, "ok", reading(8 - i, T0 + 2000)));
      const afterReset = await both.claim("api|sliding", { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs = T0 + 2050;
      await both.observe("api|sliding", answer(seqOf(afterReset), T0 + 2000, "ok", reading(9, T0 + 4000)));
      expect(both.memory.snapshot().get("api|sliding")).toMatchObject({ windowMs: 1050, refill: "window" });

      // A fixed window of 5 learned from one full reading after a reset; then a reading that continues
      // the count (3 -> 2, one claim of ours) names a reset a second later: a bucket whose reset is the
      // time until it is full. More than 5 - 3 - 1 units were missing at 2020 ms (a remaining is
      // its tokens rounded down), so its window is under (3000 - 2020) * 5 / (5 - 3 - 1) = 4900 ms.
      const five = (left: number, resetAtMs: number): ObservedBudget => shown({ remaining: left, limit: 5, resetAtMs });
      const step = async (sendAtMs: number, left: number, resetAtMs: number): Promise<void> => {
        expect((await both.sendAndAnswer("api|bucket", sendAtMs, five(left, resetAtMs), 20)).atMs).toBe(sendAtMs);
      };
      await step(T0 + 980, 4, T0 + 2000);
      for (const left of [3, 2, 1, 0]) await step(T0 + 1000, left, T0 + 2000);
      await step(T0 + 2000, 4, T0 + 3000);
      expect(both.memory.snapshot().get("api|bucket")).toMatchObject({ refill: "fixed", windowMs: 1000 });
      await step(T0 + 2020, 3, T0 + 3000);
      await step(T0 + 2040, 2, T0 + 4000);
      expect(both.memory.snapshot().get("api|bucket")).toMatchObject({ refill: "bucket", windowMs: 4900 });

      // Ten per 2 s read as fixed (the count back in full at a reset); a reading sent a second before
      // that reset names one a second later, and its count does not continue ours: sliding.
      const ten = (left: number, resetAtMs: number): ObservedBudget => shown({ remaining: left, limit: 10, resetAtMs });
      const slide = async (sendAtMs: number, left: number, resetAtMs: number): Promise<void> => {
        expect((await both.sendAndAnswer("api|moved", sendAtMs, ten(left, resetAtMs), 20)).atMs).toBe(sendAtMs);
      };
      await slide(T0 + 20, 9, T0 + 2000);
      await slide(T0 + 2000, 9, T0 + 4000);
      expect(both.memory.snapshot().get("api|moved")).toMatchObject({ refill: "fixed", windowMs: 2000 });
      await slide(T0 + 2020, 8, T0 + 4000);
      await slide(T0 + 3000, 8, T0 + 5000);
      expect(both.memory.snapshot().get("api|moved")).toMatchObject({ refill: "window", windowMs: 2000 });
    } finally {
      await both.close();
    }
  });

  it("agrees where a fixed window joined late is read as fixed (not as a short sliding window), and where a start more than a window ahead is not reserved", async () => {
    const both = new SideBySide(raw, server.url, "late:", T0);
    try {
      const ten = (left: number, resetAfterT0Ms: number): ObservedBudget => shown({ remaining: left, limit: 10, resetAtMs: T0 + resetAfterT0Ms });
      const scope = "api|joined-late";
      /** One claim at sendAfterT0Ms, granted then and answered 10 ms later with `reading`. */
      const step = async (stepScope: string, sendAfterT0Ms: number, reading: ObservedBudget): Promise<void> => {
        expect((await both.sendAndAnswer(stepScope, T0 + sendAfterT0Ms, reading, 10)).atMs).toBe(T0 + sendAfterT0Ms);
      };
      await step(scope, 530, ten(9, 1000));
      for (let left = 8; left >= 0; left--) await step(scope, 540, ten(left, 1000));
      expect(both.memory.snapshot().get(scope)).toMatchObject({ windowMs: 470, refill: "window" });
      await step(scope, 1300, ten(9, 2000));
      expect(both.memory.snapshot().get(scope)).toMatchObject({ refill: "fixed", windowMs: 1000 });
      const kinds: string[] = [];
      for (let i = 0; i < 30; i++) kinds.push((await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })).kind);
      // The nine left go; the next window waits for their answers, due within two round trips.
      expect(kinds.filter((kind) => kind === "go")).toHaveLength(9);
      expect(kinds.slice(9).every((kind) => kind === "wait")).toBe(true);
      both.nowMs += 50;
      const later: string[] = [];
      for (let i = 0; i < 21; i++) later.push((await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })).kind);
      expect(later.filter((kind) => kind === "go")).toHaveLength(10);
      expect(later.slice(10).every((kind) => kind === "wait")).toBe(true);
      // Joined 170 ms before the reset, the next window's first answer 7 ms after it: a bound under a second is no sliding window.
      const late = "api|joined-170-ms-before";
      both.nowMs = T0 + 10_830;
      await step(late, 10_830, ten(9, 11_000));
      for (let left = 8; left >= 0; left--) await step(late, 10_860, ten(left, 11_000));
      await step(late, 11_007, ten(9, 12_000));
      expect(both.memory.snapshot().get(late)).toMatchObject({ refill: "fixed", windowMs: 1000 });
    } finally {
      await both.close();
    }
  });

  it("agrees where units of ours the count no longer holds trim a sliding window's length, and where claims still out or the reading's own reset keep it", async () => {
    const both = new SideBySide(raw, server.url, "trim:", T0);
    try {
      const two = (left: number, resetAfterT0Ms: number): ObservedBudget => shown({ remaining: left, limit: 2, resetAtMs: T0 + resetAfterT0Ms });
      /** One step: a claim at sendAfterT0Ms, answered 50 ms after its start with `reading` (or left out when null). */
      const step = (scope: string, sendAfterT0Ms: number, reading: ObservedBudget | null) => both.sendAndAnswer(scope, T0 + sendAfterT0Ms, reading, 50);
      // 2 per 1 s behind whole-second resets: bound at 1050 ms, then d (T0 + 1100) is gone at T0 + 2100.
      for (const [scope, lastReset, dOut] of [["api|trimmed", 4050, false], ["api|reset-rules-out", 5050, false], ["api|d-out", 4050, true]] as const) {
        await step(scope, 0, two(1, 1050));
        await step(scope, 50, two(0, 1050));
        await step(scope, 100, two(1, 3050));
        await step(scope, 1100, dOut ? null : two(0, 3050));
        await step(scope, 1150, two(1, lastReset));
      }
      expect(both.memory.snapshot().get("api|trimmed")).toMatchObject({ windowMs: 1010, refill: "window" });
      expect(both.memory.snapshot().get("api|reset-rules-out")).toMatchObject({ windowMs: 1050 });
      expect(both.memory.snapshot().get("api|d-out")).toMatchObject({ windowMs: 1050 });
    } finally {
      await both.close();
    }
  });

  it("agrees that a replayed success after a silent lesson teaches nothing: a throttle after it keeps the lesson's window, not a bucket of one unit per the time since", async () => {
    const both = new SideBySide(raw, server.url, "replayed:", T0);
    const scope = "api|replayed";
    try {
      const ok = (seq: number, sentAtMs: number) => answer(seq, sentAtMs, "ok", null);
      await both.sendAnswered(scope, 50, ok);
      const b = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      const c = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      const d = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 50;
      await both.observe(scope, ok(seqOf(b), both.nowMs - 50));
      await both.observe(scope, ok(seqOf(c), both.nowMs - 50));
      await both.observe(scope, answer(seqOf(d), both.nowMs - 50, "throttled", null));
      await both.sendAnswered(scope, 50, (seq, sentAtMs) => ({ ...ok(seq, sentAtMs), counted: false }));
      await both.sendAnswered(scope, 50, (seq, sentAtMs) => answer(seq, sentAtMs, "throttled", null));
      expect(both.memory.snapshot().get(scope)?.refill).toBe("window");
    } finally {
      await both.close();
    }
  });

  it("agrees that a window length the policy names (IETF w=) is a sliding log's length: not the rounded-up reset's, and not trimmed below it", async () => {
    const both = new SideBySide(raw, server.url, "policy-w:", T0);
    try {
      const two = (left: number, resetAfterT0Ms: number): ObservedBudget => shown({ remaining: left, limit: 2, resetAtMs: T0 + resetAfterT0Ms, policyWindowMs: 2000 });
      const rounded = "api|rounded-up";
      await both.sendAndAnswer(rounded, T0, two(1, 2600), 600);
      await both.sendAndAnswer(rounded, T0 + 600, two(0, 2650), 50);
      const fixed = "api|fixed-reset";
      await both.sendAndAnswer(fixed, T0 + 1500, two(1, 2000), 50);
      await both.sendAndAnswer(fixed, T0 + 1550, two(0, 2000), 50);
      await both.sendAndAnswer(fixed, T0 + 1600, two(1, 4000), 50);
      expect(both.memory.snapshot().get(rounded)).toMatchObject({ windowMs: 2000, refill: "window" });
      expect(both.memory.snapshot().get(fixed)).toMatchObject({ windowMs: 2000 });
    } finally {
      await both.close();
    }
  });

  it("agrees that a throttle explained by our own starts filling a fixed window, or a sliding log's last window, teaches no reserve", async () => {
    const both = new SideBySide(raw, server.url, "own:", T0);
    try {
      const scope = "api|fixed";
      await learnFixedWindow(both, scope);
      both.nowMs = reset1 + 100;
      for (let i = 0; i < 99; i++) await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      // One grant too many, written on both sides alike (another process's grant from an older reading).
      const state = roundTrip(both.memory.snapshot().get(scope)) as Record<string, unknown> & { seq: number; slots: number[][]; inFlight: number[][] };
      const extraSeq = state.seq + 1;
      const extra = { ...state, seq: extraSeq, slots: [...state.slots, [reset1 + 100, extraSeq, 1]], inFlight: [...state.inFlight, [extraSeq, reset1 + 30_000]] };
      await writeBoth(raw, both, scope, extra);
      both.nowMs = reset1 + 160;
      await both.observe(scope, { ...answer(extraSeq, reset1 + 100, "throttled", fixedBudget(0, reset1 + 10_000)), waitMs: 9000, waitFromServer: true });
      expect(both.memory.snapshot().get(scope)).toMatchObject({ refill: "fixed", reserveUnits: 0 });

      // The same in a first window of 100 per 10 s shown (IETF w=10) and not yet seen to be fixed: our own 101st grant.
      const sliding = "api|first-window";
      const shownWindow = (left: number): ObservedBudget => shown({ remaining: left, limit: 100, resetAtMs: T0 + 10_000, windowMs: 10_000 });
      both.nowMs = T0;
      const probe = await both.claim(sliding, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs = T0 + 50;
      await both.observe(sliding, answer(seqOf(probe), T0, "ok", shownWindow(99)));
      for (let i = 0; i < 99; i++) await both.claim(sliding, { latestStartMs: Number.POSITIVE_INFINITY });
      const spent = roundTrip(both.memory.snapshot().get(sliding)) as Record<string, unknown> & { seq: number; slots: number[][]; inFlight: number[][] };
      const oneTooMany = spent.seq + 1;
      await writeBoth(raw, both, sliding, { ...spent, seq: oneTooMany, slots: [...spent.slots, [T0 + 50, oneTooMany, 1]], inFlight: [...spent.inFlight, [oneTooMany, T0 + 30_000]] });
      both.nowMs = T0 + 110;
      await both.observe(sliding, { ...answer(oneTooMany, T0 + 50, "throttled", shownWindow(0)), waitMs: 10_000, waitFromServer: true });
      expect(both.memory.snapshot().get(sliding)).toMatchObject({ refill: "window", reserveUnits: 0 });
    } finally {
      await both.close();
    }
  });

  it("agrees that a start just after the reset we read, counted in the window our own burst filled, teaches no reserve (its reset read a second on)", async () => {
    const both = new SideBySide(raw, server.url, "own-early:", T0);
    try {
      const scope = "api|fixed-early";
      await learnFixedWindow(both, scope);
      both.nowMs = reset1 + 100;
      const burst: number[] = [];
      for (let i = 0; i < 99; i++) burst.push(seqOf(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })));
      both.nowMs = reset1 + 200;
      for (const [i, seq] of burst.entries()) await both.observe(scope, answer(seq, reset1 + 100, "ok", fixedBudget(98 - i, reset1 + 10_000)));
      both.nowMs = reset1 + 10_030;
      const early = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs = reset1 + 10_080;
      await both.observe(scope, { ...answer(seqOf(early), reset1 + 10_030, "throttled", fixedBudget(0, reset1 + 11_000)), waitMs: 1000, waitFromServer: true });
      expect(both.memory.snapshot().get(scope)).toMatchObject({ reserveUnits: 0 });
    } finally {
      await both.close();
    }
  });

  it("agrees on a concurrency limit: put to the test when a count came back, inferred or ruled out by the test, ruled out by a throttle, and shown by qu; and on a held grant given back", async () => {
    const both = new SideBySide(raw, server.url, "concurrency:", T0);
    try {
      const counted = (left: number, concurrent = false): ObservedBudget => shown({ remaining: left, limit: 3, resetAtMs: T0 + 1000, concurrent });
      /** A probe at T0 answered with 2 left; one more sent at that answer shows the same count under the same reset: a place came back. */
      const twoReadings = async (scope: string, concurrent = false): Promise<void> => {
        both.nowMs = T0;
        const probe = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        both.nowMs = T0 + 200;
        await both.observe(scope, answer(seqOf(probe), T0, "ok", counted(2, concurrent)));
        const next = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        both.nowMs = T0 + 400;
        await both.observe(scope, answer(seqOf(next), T0 + 200, "ok", counted(2, concurrent)));
      };
      for (const scope of ["api|inferred", "api|shown"]) {
        const concurrent = scope === "api|shown";
        await twoReadings(scope, concurrent);
        expect(both.memory.snapshot().get(scope)).toMatchObject({ concurrency: concurrent ? "shown" : "testing", inFlightCap: 3, limit: null });
        // Three places shown: three go at once, the fourth waits for an answer. Under test, the two
        // the count read still allows either way.
        const going = [];
        for (let i = 0; i < (concurrent ? 3 : 2); i++) going.push(await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY }));
        expect((await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })).kind).toBe("wait");
        both.nowMs = T0 + 600;
        await both.observe(scope, { ...answer(seqOf(going[0]!), T0 + 400, "throttled", counted(0, concurrent)), waitMs: 300, waitFromServer: false });
      }
      // A throttle disproves the inference for good; a shown limit stays, and our own backoff holds no one else.
      expect(both.memory.snapshot().get("api|inferred")).toMatchObject({ concurrency: "ruled-out", inFlightCap: null, limit: 3 });
      expect(both.memory.snapshot().get("api|shown")).toMatchObject({ concurrency: "shown", inFlightCap: 2, notBeforeMs: 0 });
      // An answer counting more than ours out at its send disproves an inference too (a full bucket draining).
      await twoReadings("api|drained");
      const lone = await both.claim("api|drained", { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs = T0 + 600;
      await both.observe("api|drained", answer(seqOf(lone), T0 + 400, "ok", counted(0)));
      expect(both.memory.snapshot().get("api|drained")).toMatchObject({ concurrency: "ruled-out", limit: 3 });
      // Nor does an answer whose reset lies further than a second and a round trip from it (a bucket's time until full).
      for (const [scope, resetAtMs] of [["api|reset-near", T0 + 2000], ["api|reset-far", T0 + 2200]] as const) {
        await twoReadings(scope);
        const sent = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        both.nowMs = T0 + 600;
        await both.observe(scope, answer(seqOf(sent), T0 + 400, "ok", shown({ remaining: 2, limit: 3, resetAtMs })));
      }
      expect(both.memory.snapshot().get("api|reset-near")).toMatchObject({ concurrency: "testing" });
      expect(both.memory.snapshot().get("api|reset-far")).toMatchObject({ concurrency: "ruled-out", inFlightCap: null });
      // Not by one counting the answers of the instant it was sent, which were out when it was granted.
      // The test: what the count allows goes, the rest wait for the answers still due, then one
      // request tells. Counting itself alone, a concurrency limit; counting the pair, a bucket.
      const tested = async (scope: string, left: number): Promise<void> => {
        await twoReadings(scope);
        const pair = [await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY }), await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })];
        expect((await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })).kind).toBe("wait");
        both.nowMs = T0 + 600;
        for (const sent of pair) await both.observe(scope, answer(seqOf(sent), T0 + 400, "ok", counted(1)));
        const test = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        expect(test).toMatchObject({ kind: "go", probe: true });
        expect((await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })).kind).toBe("wait");
        both.nowMs = T0 + 800;
        await both.observe(scope, answer(seqOf(test), T0 + 600, "ok", counted(left)));
      };
      await tested("api|bucket", 0);
      expect(both.memory.snapshot().get("api|bucket")).toMatchObject({ concurrency: "ruled-out", inFlightCap: null, limit: 3 });
      await tested("api|same-instant", 2);
      expect(both.memory.snapshot().get("api|same-instant")).toMatchObject({ concurrency: "inferred", inFlightCap: 3, anchor: null });
      const out = [];
      for (let i = 0; i < 3; i++) out.push(await both.claim("api|same-instant", { latestStartMs: Number.POSITIVE_INFINITY }));
      both.nowMs = T0 + 900;
      await both.observe("api|same-instant", answer(seqOf(out[0]!), T0 + 800, "ok", counted(0)));
      const taken = await both.claim("api|same-instant", { latestStartMs: Number.POSITIVE_INFINITY });
      for (const other of out.slice(1)) await both.observe("api|same-instant", answer(seqOf(other), T0 + 800, "ok", counted(0)));
      both.nowMs = T0 + 1000;
      await both.observe("api|same-instant", answer(seqOf(taken), T0 + 900, "ok", counted(0)));
      expect(both.memory.snapshot().get("api|same-instant")).toMatchObject({ concurrency: "inferred", inFlightCap: 3 });

      // A probe's grant held for the reset, claimed again: kept while nothing earlier can be given,
      // given back once the count shows a concurrency limit (its holder claims afresh), as is a held
      // seq not counted.
      both.nowMs = T0;
      const first = await both.claim("api|held", { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs = T0 + 200;
      await both.observe("api|held", answer(seqOf(first), T0, "ok", counted(2)));
      const a = await both.claim("api|held", { latestStartMs: Number.POSITIVE_INFINITY });
      await both.claim("api|held", { latestStartMs: Number.POSITIVE_INFINITY });
      const late = await both.claim("api|held", { latestStartMs: Number.POSITIVE_INFINITY });
      if (late.kind !== "go") expect.fail("expected a grant at the reset");
      const holding = { seq: late.seq, atMs: late.atMs };
      both.nowMs = T0 + 300;
      expect(await both.claim("api|held", { latestStartMs: Number.POSITIVE_INFINITY, holding })).toMatchObject({ kind: "go", seq: late.seq, atMs: T0 + 1000, probe: true });
      both.nowMs = T0 + 400;
      await both.observe("api|held", answer(seqOf(a), T0 + 200, "ok", counted(2)));
      const afresh = await both.claim("api|held", { latestStartMs: Number.POSITIVE_INFINITY, holding });
      expect(afresh).toMatchObject({ kind: "go", atMs: T0 + 400, probe: false });
      expect(afresh.kind === "go" && afresh.seq).not.toBe(late.seq);
      // The count is spent: the next waits for the test.
      expect((await both.claim("api|held", { latestStartMs: Number.POSITIVE_INFINITY, holding: { seq: 999, atMs: T0 + 5000 } })).kind).toBe("wait");
      // A holding that is no grant is ignored (a fresh claim): both sides read it alike.
      expect((await both.claim("api|held", { latestStartMs: Number.POSITIVE_INFINITY, holding: { seq: 1.5, atMs: Number.NaN } })).kind).toBe("wait");
    } finally {
      await both.close();
    }
  });

  it("agrees that a late claim sent before the reading's own request, answered long after it (another process), was in its count", async () => {
    const both = new SideBySide(raw, server.url, "sent-before:", T0);
    try {
      const fiveLeft = (left: number): ObservedBudget => shown({ remaining: left, limit: 5, resetAtMs: T0 + 60_000 });
      const go = async (): Promise<ClaimResult> => both.claim("api|late", { latestStartMs: Number.POSITIVE_INFINITY });
      const probe = await go();
      both.nowMs = T0 + 50;
      await both.observe("api|late", answer(seqOf(probe), T0, "ok", fiveLeft(3)));
      both.nowMs = T0 + 60;
      const early = await go();
      both.nowMs = T0 + 120;
      const later = await go();
      both.nowMs = T0 + 170;
      await both.observe("api|late", answer(seqOf(later), T0 + 120, "ok", fiveLeft(1)));
      expect(both.memory.snapshot().get("api|late")?.anchor?.lateUnits).toBe(1);
      both.nowMs = T0 + 600;
      await both.observe("api|late", answer(seqOf(early), T0 + 60, "ok", fiveLeft(2)));
      expect(both.memory.snapshot().get("api|late")?.anchor?.lateUnits).toBe(0);
      expect(await go()).toMatchObject({ kind: "go", atMs: T0 + 600 });
    } finally {
      await both.close();
    }
  });

  it("agrees that a claim started two round trips before a reading is in its count, and that one late for it is not among the units it counts", async () => {
    const both = new SideBySide(raw, server.url, "slow-answer:", T0);
    try {
      const sixPerSecond = (left: number): ObservedBudget => shown({ remaining: left, limit: 6, windowMs: 1000 });
      const go = async (scope: string): Promise<ClaimResult> => both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      const windowOfSix = async (scope: string): Promise<number> => probeThenBurst(both, scope, sixPerSecond, 6, 2, 60);
      // The slow claim started 180 ms (more than two round trips) before the reading's request.
      await windowOfSix("api|before");
      await go("api|before");
      both.nowMs = T0 + 300;
      const later = await go("api|before");
      both.nowMs = T0 + 360;
      await both.observe("api|before", answer(seqOf(later), T0 + 300, "ok", sixPerSecond(1)));
      expect(both.memory.snapshot().get("api|before")?.anchor?.lateUnits).toBe(0);
      expect(await go("api|before")).toMatchObject({ kind: "go", atMs: T0 + 360 });
      // Started with the reading's request: late for it, and the probe's unit is the first to leave.
      await windowOfSix("api|with");
      await go("api|with");
      const counted = await go("api|with");
      both.nowMs = T0 + 180;
      await both.observe("api|with", answer(seqOf(counted), T0 + 120, "ok", sixPerSecond(2)));
      expect(both.memory.snapshot().get("api|with")?.anchor?.lateUnits).toBe(1);
      expect(await go("api|with")).toMatchObject({ kind: "go", atMs: T0 + 180 });
      expect(await go("api|with")).toMatchObject({ kind: "go", atMs: T0 + 1000 });
    } finally {
      await both.close();
    }
  });

  it("agrees that a window shown with no reset whose count comes back faster than our units leave it is a bucket, and that a count back to the limit at once is not", async () => {
    const both = new SideBySide(raw, server.url, "shown-refill:", T0);
    try {
      const interval = (left: number): ObservedBudget => shown({ remaining: left, limit: 100, windowMs: 10_000 });
      const go = async (scope: string): Promise<ClaimResult> => both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      const afterBurst = async (scope: string): Promise<number> => probeThenBurst(both, scope, interval, 100, 60, 50);
      const left = await afterBurst("api|bucket");
      both.nowMs = T0 + 1050;
      const next = await go("api|bucket");
      both.nowMs = T0 + 1100;
      await both.observe("api|bucket", answer(seqOf(next), T0 + 1050, "ok", interval(left - 1 + 10)));
      expect(both.memory.snapshot().get("api|bucket")?.refill).toBe("bucket");
      await afterBurst("api|fixed");
      both.nowMs = T0 + 9050;
      const after = await go("api|fixed");
      both.nowMs = T0 + 9100;
      await both.observe("api|fixed", answer(seqOf(after), T0 + 9050, "ok", interval(99)));
      expect(both.memory.snapshot().get("api|fixed")?.refill).not.toBe("bucket");
    } finally {
      await both.close();
    }
  });

  it("agrees that units come back a fraction at a time behind a shown window add up across readings to a bucket, and that a pair that cannot tell starts the sum afresh", async () => {
    const both = new SideBySide(raw, server.url, "shown-sum:", T0);
    try {
      const interval = (left: number, resetAtMs?: number): ObservedBudget => shown({ remaining: left, limit: 40, windowMs: 3000, ...(resetAtMs ? { resetAtMs } : {}) });
      // Each reading 50 ms after the last, one claim between: a bucket of 40 per 3 s gives two thirds of a unit back.
      const step = async (scope: string, sentAtMs: number, left: number, resetAtMs?: number): Promise<void> => {
        both.nowMs = sentAtMs;
        const claimed = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        both.nowMs = sentAtMs + 50;
        await both.observe(scope, answer(seqOf(claimed), sentAtMs, "ok", interval(left, resetAtMs)));
      };
      const left = await probeThenBurst(both, "api|sum", interval, 40, 20, 50);
      for (let k = 1; k <= 3; k++) await step("api|sum", T0 + 100 + 50 * k, left - k + Math.floor((50 * k * 40) / 3000));
      expect(both.memory.snapshot().get("api|sum")?.refill).toBe("bucket");
      const before = await probeThenBurst(both, "api|afresh", interval, 40, 20, 50);
      await step("api|afresh", T0 + 200, before);
      await step("api|afresh", T0 + 300, before - 1, T0 + 3000);
      await step("api|afresh", T0 + 400, before - 2);
      await step("api|afresh", T0 + 500, before - 2);
      expect(both.memory.snapshot().get("api|afresh")?.refill).toBe("window");
    } finally {
      await both.close();
    }
  });

  it("agrees on a fixed window not yet told from a concurrency limit: its last unit waits for an answer of its window, a count back down infers the limit, one holding more than ours rules it out, and grants ahead are claimed again", async () => {
    const both = new SideBySide(raw, server.url, "fixed-untold:", T0);
    try {
      const ten = (left: number, resetAtMs: number): ObservedBudget => shown({ remaining: left, limit: 10, resetAtMs });
      const go = async (scope: string): Promise<ClaimResult> => both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      /** Read as fixed 10 per 1 s (the budget back in full at the reset); at the next reset nine go and the tenth waits; the nine answer together, each counted on arrival. */
      const burstAtReset = async (scope: string): Promise<void> => {
        both.nowMs = T0 + 20;
        const probe = await go(scope);
        both.nowMs = T0 + 40;
        await both.observe(scope, answer(seqOf(probe), T0 + 20, "ok", ten(9, T0 + 1000)));
        both.nowMs = T0 + 1000;
        const after = await go(scope);
        both.nowMs = T0 + 1020;
        await both.observe(scope, answer(seqOf(after), T0 + 1000, "ok", ten(9, T0 + 2000)));
        expect(both.memory.snapshot().get(scope)).toMatchObject({ refill: "fixed", concurrency: "unknown" });
        both.nowMs = T0 + 2000;
        const nine: ClaimResult[] = [];
        for (let i = 0; i < 9; i++) nine.push(await go(scope));
        expect(await go(scope)).toMatchObject({ kind: "wait" });
        both.nowMs = T0 + 2020;
        for (const [index, granted] of nine.entries()) await both.observe(scope, answer(seqOf(granted), T0 + 2000, "ok", ten(9 - index, T0 + 3000)));
      };
      for (const [scope, left] of [["api|came-back", 9], ["api|outgrew", 0]] as const) {
        await burstAtReset(scope);
        const last = await go(scope);
        both.nowMs = T0 + 2040;
        await both.observe(scope, answer(seqOf(last), T0 + 2020, "ok", ten(left, T0 + 3000)));
      }
      expect(both.memory.snapshot().get("api|came-back")).toMatchObject({ concurrency: "testing", inFlightCap: 10 });
      expect(both.memory.snapshot().get("api|outgrew")).toMatchObject({ concurrency: "ruled-out", refill: "fixed" });
      // Once told, the whole limit goes at the next reset, and starts laid ahead are not claimed again.
      expect(await go("api|outgrew")).toMatchObject({ atMs: T0 + 3000, revisable: false });
      // Untold, a start laid ahead (the next window's) is claimed again as answers come.
      both.nowMs = T0 + 20;
      const probe = await go("api|ahead");
      both.nowMs = T0 + 40;
      await both.observe("api|ahead", answer(seqOf(probe), T0 + 20, "ok", ten(9, T0 + 1000)));
      both.nowMs = T0 + 1000;
      const after = await go("api|ahead");
      both.nowMs = T0 + 1020;
      await both.observe("api|ahead", answer(seqOf(after), T0 + 1000, "ok", ten(9, T0 + 2000)));
      for (let i = 0; i < 9; i++) await go("api|ahead");
      // Asked once the nine's answers are overdue (before, the next window waits for them).
      both.nowMs = T0 + 1070;
      expect(await go("api|ahead")).toMatchObject({ atMs: T0 + 2000, revisable: true });
    } finally {
      await both.close();
    }
  });

  it("agrees on a concurrency limit behind a count with no reset (Shopify REST's), read against its estimated bucket rate: put to the test where the estimate gives back under a quarter unit between the sends, not where it gives back more", async () => {
    const both = new SideBySide(raw, server.url, "estimated:", T0);
    const shopify = (left: number): ObservedBudget => shown({ remaining: left, limit: 15, restorePerSecond: 0.75, restoreEstimated: true });
    try {
      // The probe at T0 answered 20 ms later with 14 left; the next request is sent gapMs after it.
      for (const [scope, gapMs] of [["api|fast", 20], ["api|slow", 400]] as const) {
        both.nowMs = T0;
        const probe = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        both.nowMs = T0 + gapMs;
        await both.observe(scope, answer(seqOf(probe), T0, "ok", shopify(14)));
        const next = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        both.nowMs = T0 + gapMs + 20;
        await both.observe(scope, answer(seqOf(next), T0 + gapMs, "ok", shopify(14)));
      }
    } finally {
      await both.close();
    }
    expect(both.memory.snapshot().get("api|fast")).toMatchObject({ concurrency: "testing", inFlightCap: 15 });
    expect(both.memory.snapshot().get("api|slow")).toMatchObject({ concurrency: "unknown", refill: "bucket" });
  });

  it("agrees that resets closer together than a window that held our units are a sliding window's, and that resets a fixed window's length apart are its length", async () => {
    const both = new SideBySide(raw, server.url, "closer-resets:", T0);
    try {
      const three = (remaining: number, resetAfterT0Ms: number): ObservedBudget => shown({ remaining, limit: 3, resetAtMs: T0 + resetAfterT0Ms });
      for (const [scope, nextResetAfterT0Ms] of [["api|sliding", 11_050], ["api|fixed", 20_050]] as const) {
        both.nowMs = T0;
        await both.sendAndAnswer(scope, T0, three(2, 10_050), 50);
        both.nowMs = T0 + 50;
        const pair = [await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY }), await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY })];
        both.nowMs = T0 + 100;
        for (const [index, sent] of pair.entries()) await both.observe(scope, answer(seqOf(sent), T0 + 50, "ok", three(1 - index, 10_050)));
        const next = await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
        if (next.kind !== "go") expect.fail(`${scope}: expected a grant at the reset`);
        both.nowMs = next.atMs + 50;
        await both.observe(scope, answer(next.seq, next.atMs, "ok", three(2, nextResetAfterT0Ms)));
        await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY });
      }
      expect(both.memory.snapshot().get("api|sliding")).toMatchObject({ refill: "window", windowMs: 10_050 });
      expect(both.memory.snapshot().get("api|fixed")).toMatchObject({ refill: "fixed", windowMs: 10_000 });
    } finally {
      await both.close();
    }
  });

  it("agrees that others' share of a bucket leaves a full bucket a request's unit, however large the reserve grew", async () => {
    const both = new SideBySide(raw, server.url, "reserve-bound:", T0);
    try {
      const seed = await both.claim("api", { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 100;
      await both.observe("api", answer(seqOf(seed), T0, "ok", { remaining: 0, limit: 10, resetAtMs: null, windowMs: null, restorePerSecond: null, unitsPerRequest: null }));
      const base = roundTrip(both.memory.snapshot().get("api")) as Record<string, unknown>;
      // A bucket of 1 per 1,567 ms read empty at T0, 2.7 units reserved for others (a lesson lowered the limit under it).
      const lowered = { ...base, refill: "bucket", limit: 1, windowMs: 1567, windowSource: "inferred", concurrency: "ruled-out", reserveUnits: 2.7, othersPerMs: 0.0117 };
      expect(both.memory.load({ "api|lowered": lowered })).toEqual([]);
      await raw.set(both.redis.keyOf("api|lowered"), JSON.stringify(lowered));
      both.nowMs = T0 + 10 * 1567;
      const result = await both.claim("api|lowered", { latestStartMs: Number.POSITIVE_INFINITY });
      expect(result).toMatchObject({ kind: "go", atMs: T0 + 10 * 1567 });
    } finally {
      await both.close();
    }
  });

  it("reads a state written elsewhere as readState does: defaults, rounding, order, and malformed ones start afresh", async () => {
    const both = new SideBySide(raw, server.url, "read:", T0);
    try {
      const seed = await both.claim("api", { latestStartMs: Number.POSITIVE_INFINITY });
      both.nowMs += 200;
      await both.observe("api", answer(seqOf(seed), T0, "ok", { remaining: 5, limit: 10, resetAtMs: T0 + 30_000, windowMs: 60_000, restorePerSecond: null, unitsPerRequest: null }));
      await both.claim("api", { latestStartMs: Number.POSITIVE_INFINITY });
      const base = roundTrip(both.memory.snapshot().get("api")) as Record<string, unknown>;
      const variants: Array<[string, Record<string, unknown>, boolean]> = [
        ["an older version's state, without reserveUnits", omit(base, "reserveUnits"), true],
        ["an older version's state, without lessonSentAtMs", omit(base, "lessonSentAtMs"), true],
        ["a lessonSentAtMs with a fraction", { ...base, lessonSentAtMs: T0 + 0.5 }, true],
        ["a lessonSentAtMs that is not an instant", { ...base, lessonSentAtMs: -5 }, true],
        ["an older version's state, without lessonSeq", omit(base, "lessonSeq"), true],
        ["a lessonSeq that is not a count", { ...base, lessonSeq: 1.5 }, true],
        ["a silent concurrency limit", { ...base, concurrency: "silent", inFlightCap: 3, limit: null, windowMs: null, anchor: null }, true],
        ["a concurrency limit under test, with the latest count read", { ...base, concurrency: "testing", inFlightCap: 3, limit: null, windowMs: null }, true],
        ["figures out of range (othersPerMs, reserveUnits)", { ...base, othersPerMs: 2e6, reserveUnits: -1 }, true],
        ["an older version's state, without an estimated rate's probe", omit(omit(base, "probedFromWindowMs"), "pacedCleanUnits"), true],
        ["a probe's figures out of range", { ...base, probedFromWindowMs: 2e12, pacedCleanUnits: -1 }, true],
        ["a probed window with a fraction, and units of a fractional cost", { ...base, probedFromWindowMs: 1500.5, pacedCleanUnits: 1.5 }, true],
        ["instants with fractions and slots out of order", { ...base, lastGrantMs: T0 + 200.5, windowStartMs: 0.4, slots: [[T0 + 200.5, 2, 1], [T0 + 0.5, 1, 1]], anchor: { remaining: -2, seq: 1, atMs: T0 + 0.5, resetAtMs: T0 + 30_000 } }, true],
        ["an unknown limit type and flags that are not true", { ...base, notBeforeType: "weird", inFlightCapGrows: "yes", breakerOpen: 1, notBeforeReason: 7, estimateProbeFailed: "yes" }, true],
        ["no probe key", omit(base, "probe"), false],
        ["a slot of four figures", { ...base, slots: [[T0, 1, 1, 0]] }, false],
        ["a seq past 2^52", { ...base, seq: 2 ** 52 + 2 }, false],
        ["a windowSource that is not one", { ...base, windowSource: "guessed" }, false],
        ["a window assumed, and one a throttle found longer", { ...base, windowSource: "assumed" }, true],
        ["a window a throttle found longer than assumed", { ...base, windowSource: "outlasted" }, true],
        ["a fractional in-flight seq", { ...base, inFlight: [[1.5, T0 + 30_000]] }, false],
        ["an older version's state, in-flight pairs without their count at grant", { ...base, inFlight: [[2, T0 + 30_200]] }, true],
        ["an in-flight count at grant that is not a count", { ...base, inFlight: [[2, T0 + 30_200, 1.5]] }, true],
        ["an in-flight entry of four figures", { ...base, inFlight: [[2, T0 + 30_200, 1, 0]] }, false],
      ];
      for (const [name, value, readable] of variants) {
        const scope = `api|${name}`;
        const loadProblems = both.memory.load({ [scope]: value });
        expect(loadProblems.length === 0, name).toBe(readable);
        await raw.set(both.redis.keyOf(scope), JSON.stringify(value));
        await both.claim(scope, { latestStartMs: Number.POSITIVE_INFINITY }, name);
      }
    } finally {
      await both.close();
    }
  });
});
