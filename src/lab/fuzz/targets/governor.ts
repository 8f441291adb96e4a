/**
 * Fuzz target: the rate governor (src/engine/governor). Each input is a sequence of claim,
 * observe, release, holdUntil and readState steps on one scope, starting from a fresh state, a
 * state with values at the edges of what readState accepts, or garbage read through readState
 * (as a store reads cross-flow state). Observations and claims are valid or absurd (NaN,
 * Infinity, negative, beyond the Date range, seqs never granted).
 *
 * Properties, after every step: nothing throws; a go starts at or after the claim's now and the
 * state's notBeforeMs when it was claimed, and no later than its latest start; a defer's
 * notBeforeMs is past the latest start; notBeforeMs never goes down; a throttle's wait from the
 * server is a floor; every stored instant is a whole ms within the Date range (ECMA-262
 * §21.4.1.1); at most MAX_SLOTS slots; and the state reads back unchanged through JSON and
 * readState (what a store writes, the next execution can load); and, at the end, a scope left alone
 * for ten minutes grants a plain claim within two of its windows (idleClaimProblems).
 */
import { claim, emptyState, holdUntil, MAX_SLOTS, observe, readState, release, type GovernorOptions, type GovernorState, type Observation, type ObservedBudget } from "../../../engine/governor";
import { MAX_EPOCH_MS } from "../../../engine/time";
import type { LimitType } from "../../../engine/types";
import { Gen } from "../random";
import { Tally } from "../tally";
import type { FuzzResult, FuzzTarget } from "../types";

const T0 = Date.UTC(2026, 10, 30, 12);
const LIMIT_TYPES: readonly LimitType[] = ["burst", "quota", "concurrency", "cost", "contention", "server", "none"];
const ABSURD_NUMBERS = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, -1e15, 0, 0.5, 1e300, Number.MAX_SAFE_INTEGER, MAX_EPOCH_MS, MAX_EPOCH_MS + 1];
const GARBAGE: readonly unknown[] = [null, undefined, "", "12", "garbage", [], [1, 2, 3], {}, true, Number.NaN, -1, 1.5, 1e300, Number.MAX_SAFE_INTEGER, MAX_EPOCH_MS + 1, { v: 1 }];

/** A number that is usually sensible (around `typical`) and sometimes absurd. */
function figure(gen: Gen, typical: number, absurdShare = 0.1): number {
  return gen.chance(absurdShare) ? gen.pick(ABSURD_NUMBERS) : Math.round(gen.random() * typical);
}

/** Where a sequence starts. */
function startState(gen: Gen): GovernorState {
  const fresh = emptyState(T0);
  switch (gen.int(0, 3)) {
    case 0:
      return fresh;
    case 1: {
      // At the edges of what readState accepts.
      const edge = { ...fresh, seq: gen.pick([0, 1, 2 ** 40, Number.MAX_SAFE_INTEGER - 1]), notBeforeMs: gen.pick([0, T0, MAX_EPOCH_MS - 1]), limit: gen.pick([null, 1, 1e12]), windowMs: gen.pick([null, 1, 1e12]), unitsPerRequest: gen.pick([1, 0.001, 1e12]) };
      const read = readState(JSON.parse(JSON.stringify(edge)));
      return "state" in read ? read.state : fresh;
    }
    default: {
      // A state with one field (or the whole value) replaced by garbage: read as a store reads it.
      const names = Object.keys(fresh);
      const value: unknown = gen.chance(0.1) ? gen.pick(GARBAGE) : { ...fresh, [gen.pick(names)]: gen.pick(GARBAGE) };
      const read = readState(value);
      return "state" in read ? read.state : fresh;
    }
  }
}

function randomBudget(gen: Gen, nowMs: number): ObservedBudget | null {
  if (gen.chance(0.4)) return null;
  const limit = gen.chance(0.8) ? figure(gen, 200) || 1 : null;
  return {
    remaining: figure(gen, limit ?? 100),
    limit,
    resetAtMs: gen.chance(0.7) ? nowMs + figure(gen, 120_000) : gen.chance(0.5) ? null : gen.pick(ABSURD_NUMBERS),
    windowMs: gen.chance(0.4) ? figure(gen, 60_000) : null,
    restorePerSecond: gen.chance(0.15) ? figure(gen, 100) : null,
    restoreEstimated: gen.chance(0.5),
    restoreFloorPerSecond: gen.chance(0.3) ? figure(gen, 10) : null,
    unitsPerRequest: gen.chance(0.2) ? figure(gen, 50) : null,
  };
}

/** One step: its description for an example, and its run with the properties it broke. */
interface Step {
  /** The step as it ran (JSON-printable). */
  what: unknown;
  run(state: GovernorState): { state: GovernorState; broken: string[] };
}

/** Everything a stored state must be, checked on the state and on its JSON round trip. */
/** Every instant a state stores, by name. */
function storedInstants(state: GovernorState): Array<[string, number]> {
  const times: Array<[string, number]> = [
    ["lastGrantMs", state.lastGrantMs],
    ["notBeforeMs", state.notBeforeMs],
    ["windowStartMs", state.windowStartMs],
    ["updatedAtMs", state.updatedAtMs],
    ["countResetAtMs", state.countResetAtMs],
    ...state.slots.map((s, i): [string, number] => [`slots[${i}]`, s[0]]),
    ...state.inFlight.map((f, i): [string, number] => [`inFlight[${i}]`, f[1]]),
  ];
  if (state.anchor) times.push(["anchor.atMs", state.anchor.atMs], ["anchor.resetAtMs", state.anchor.resetAtMs]);
  if (state.probe) times.push(["probe.atMs", state.probe.atMs], ["probe.untilMs", state.probe.untilMs]);
  return times;
}

export function stateProblems(state: GovernorState): string[] {
  const broken: string[] = [];
  const times = storedInstants(state);
  for (const [name, ms] of times) if (!Number.isInteger(ms) || ms < 0 || ms > MAX_EPOCH_MS) broken.push(`${name} ${ms} is not a whole ms within the Date range`);
  if (state.slots.length > MAX_SLOTS) broken.push(`${state.slots.length} slots, more than ${MAX_SLOTS}`);
  const read = readState(JSON.parse(JSON.stringify(state)));
  if ("error" in read) broken.push(`does not read back: ${read.error}`);
  else {
    const changed = (Object.keys(state) as Array<keyof GovernorState>).filter((key) => JSON.stringify(read.state[key]) !== JSON.stringify(state[key]));
    if (changed.length > 0) broken.push(`reads back changed: ${changed.map((key) => `${key} ${printable(state[key]).slice(0, 60)} -> ${printable(read.state[key]).slice(0, 60)}`).join(", ")}`);
  }
  return broken;
}

function claimStep(gen: Gen, clock: { nowMs: number }, options: GovernorOptions, granted: number[], ops: GovernorOps): Step {
  const nowMs = gen.chance(0.95) ? clock.nowMs : gen.pick(ABSURD_NUMBERS);
  const latestStartMs = gen.chance(0.9) ? clock.nowMs + figure(gen, 300_000, 0) : gen.pick(ABSURD_NUMBERS);
  // The latest start the scope's pacing may set: absent, further than latestStartMs, or absurd.
  const latestPacedStartMs = gen.chance(0.5) ? undefined : gen.chance(0.9) ? clock.nowMs + figure(gen, 900_000, 0) : gen.pick(ABSURD_NUMBERS);
  const pacedReachMs = typeof latestPacedStartMs === "number" && latestPacedStartMs > latestStartMs ? latestPacedStartMs : latestStartMs;
  const units = gen.chance(0.8) ? undefined : gen.chance(0.7) ? gen.int(1, 50) : gen.pick(ABSURD_NUMBERS);
  const random = gen.chance(0.5) ? gen.random() : undefined;
  // Now and then a grant held and claimed again: one of ours at a time near now, or no grant at all.
  const holding = granted.length > 0 && gen.chance(0.15) ? { seq: gen.chance(0.9) ? gen.pick(granted) : figure(gen, 50), atMs: gen.chance(0.9) ? clock.nowMs + gen.int(-2000, 60_000) : gen.pick(ABSURD_NUMBERS) } : undefined;
  // How long the request has waited already (a longer reach beyond an estimated rate's horizon).
  const waitedMs = gen.chance(0.7) ? undefined : gen.chance(0.8) ? figure(gen, 300_000, 0) : gen.pick(ABSURD_NUMBERS);
  const request = { nowMs, latestStartMs, ...(latestPacedStartMs === undefined ? {} : { latestPacedStartMs }), ...(units === undefined ? {} : { units }), ...(random === undefined ? {} : { random }), ...(holding === undefined ? {} : { holding }), ...(waitedMs === undefined ? {} : { waitedMs }) };
  return {
    what: { claim: request },
    run(state) {
      const floorMs = Math.max(Number.isFinite(nowMs) ? Math.min(MAX_EPOCH_MS, Math.max(0, Math.round(nowMs))) : nowMs > 0 ? MAX_EPOCH_MS : 0, state.notBeforeMs);
      const next = ops.claim(state, request, options);
      const result = next.result;
      const broken: string[] = [];
      if (result.kind === "go") {
        granted.push(result.seq);
        if (result.atMs < floorMs) broken.push(`go at ${result.atMs}, before the floor ${floorMs}`);
        // The API's hold past the inline latest start defers, however far the pacing may reach.
        if (state.notBeforeMs > latestStartMs) broken.push(`go at ${result.atMs} under a hold to ${state.notBeforeMs}, past the latest start ${latestStartMs}`);
        if (Number.isInteger(pacedReachMs) && result.atMs > pacedReachMs) broken.push(`go at ${result.atMs}, after the latest start ${pacedReachMs}`);
      } else if (result.kind === "defer") {
        if (!(result.notBeforeMs > latestStartMs)) broken.push(`defer to ${result.notBeforeMs}, not past the latest start ${latestStartMs}`);
        if (!Number.isFinite(result.notBeforeMs)) broken.push(`defer to ${result.notBeforeMs}`);
      } else if (!Number.isFinite(result.untilMs)) {
        broken.push(`wait until ${result.untilMs}`);
      }
      return { state: next.state, broken };
    },
  };
}

function observeStep(gen: Gen, clock: { nowMs: number }, options: GovernorOptions, granted: number[], ops: GovernorOps): Step {
  const seq = granted.length > 0 && gen.chance(0.85) ? gen.pick(granted) : figure(gen, 50);
  const nowMs = gen.chance(0.95) ? clock.nowMs : gen.pick(ABSURD_NUMBERS);
  const kind = gen.pick(["ok", "ok", "throttled", "lost"] as const);
  const waitFromServer = kind === "throttled" && gen.chance(0.7);
  const observation: Observation = {
    seq,
    sentAtMs: gen.chance(0.9) ? clock.nowMs - gen.int(0, 2000) : gen.pick(ABSURD_NUMBERS),
    nowMs,
    kind,
    limitType: gen.pick(LIMIT_TYPES),
    waitMs: kind === "throttled" && gen.chance(0.9) ? figure(gen, 60_000) : null,
    waitFromServer,
    budget: randomBudget(gen, clock.nowMs),
    reason: gen.chance(0.95) ? gen.text() : gen.longRun(),
    ...(gen.chance(0.1) ? { counted: false } : {}),
  };
  return {
    what: { observe: { ...observation, reason: `(${observation.reason.length} chars)` } },
    run(state) {
      const next = ops.observe(state, observation, options);
      const broken: string[] = [];
      const { waitMs } = observation;
      if (kind === "throttled" && waitFromServer && waitMs !== null && Number.isFinite(waitMs) && waitMs >= 0 && Number.isFinite(nowMs)) {
        const floorMs = Math.min(MAX_EPOCH_MS, Math.max(0, Math.round(nowMs + waitMs)));
        if (next.notBeforeMs < floorMs) broken.push(`notBeforeMs ${next.notBeforeMs} below the server's wait ${floorMs}`);
      }
      return { state: next, broken };
    },
  };
}

function randomStep(gen: Gen, clock: { nowMs: number }, options: GovernorOptions, granted: number[], ops: GovernorOps): Step {
  const roll = gen.random();
  if (roll < 0.4) return claimStep(gen, clock, options, granted, ops);
  if (roll < 0.8) return observeStep(gen, clock, options, granted, ops);
  if (roll < 0.88) {
    const seq = granted.length > 0 && gen.chance(0.8) ? gen.pick(granted) : figure(gen, 50);
    return { what: { release: seq }, run: (state) => ({ state: release(state, seq), broken: [] }) };
  }
  if (roll < 0.95) {
    const untilMs = gen.chance(0.85) ? clock.nowMs + figure(gen, 3_600_000, 0) : gen.pick(ABSURD_NUMBERS);
    const limitType = gen.pick([...LIMIT_TYPES, "unknown"] as const);
    const reason = gen.text();
    return { what: { holdUntil: untilMs, limitType }, run: (state) => ({ state: holdUntil(state, untilMs, reason, limitType), broken: [] }) };
  }
  return {
    what: "readState(JSON)",
    run(state) {
      const read = readState(JSON.parse(JSON.stringify(state)));
      return "state" in read ? { state: read.state, broken: [] } : { state, broken: [`does not read back: ${read.error}`] };
    },
  };
}

/** A number as JSON shows it, NaN and the infinities by name (JSON.stringify would print null). */
function printable(what: unknown): string {
  return JSON.stringify(what, (_key, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v));
}

/** One input: a sequence of steps from a start state, every property checked after each step. */
function runSequence(gen: Gen, tally: Tally, label: { seed: number; input: number }, ops: GovernorOps): void {
  const options: GovernorOptions = { breakerThreshold: gen.chance(0.9) ? gen.int(1, 5) : 3, leaseMs: gen.chance(0.9) ? gen.int(1, 60_000) : 30_000, probeSilentRate: gen.chance(0.8) };
  const start = startState(gen);
  const clock = { nowMs: T0 + gen.int(0, 60_000) };
  const granted: number[] = [];
  const length = gen.int(1, 24);
  tally.attempt({ ...label, options }, () => {
    let state = start;
    // Each step is drawn after the one before has run: an observation answers a granted seq.
    for (let i = 0; i < length; i++) {
      clock.nowMs += gen.chance(0.7) ? gen.int(0, 500) : gen.int(0, 120_000);
      const step = randomStep(gen, clock, options, granted, ops);
      const before = state.notBeforeMs;
      const { state: next, broken } = step.run(state);
      // One deliberate exception (concurrency.ts learnSilentConcurrency): a scope read anew as a
      // concurrency limit drops the hold its own backoffs laid while it was read as a rate.
      const turnedConcurrency = next.concurrency === "silent" && state.concurrency !== "silent";
      if (next.notBeforeMs < before && !turnedConcurrency) broken.push(`notBeforeMs went down from ${before} to ${next.notBeforeMs}`);
      broken.push(...stateProblems(next));
      if (broken.length > 0) return [`step ${i + 1} ${printable(step.what)}: ${broken.join("; ")}`];
      state = next;
    }
    return idleClaimProblems(state, clock.nowMs, options, ops);
  });
}

/** Longer than any lease the fuzz draws (60 s), and than the windows idleClaimProblems checks. */
const IDLE_MS = 10 * 60_000;
const IDLE_WINDOW_MAX_MS = 60_000;

/**
 * Liveness: a scope left alone for ten minutes, whose window is a minute or less and whose hold has
 * ended, grants a plain claim (a unit or less) within two windows of it. A reserve for others above the limit once
 * answered every claim with a start one reserve beyond its own time, and its requests waited out
 * their deadline (model.ts fromBucket).
 */
function idleClaimProblems(state: GovernorState, lastNowMs: number, options: GovernorOptions, ops: GovernorOps): string[] {
  const nowMs = lastNowMs + IDLE_MS;
  const windowMs = state.windowMs ?? 0;
  if (windowMs > IDLE_WINDOW_MAX_MS || state.notBeforeMs > nowMs || state.unitsPerRequest > 1 || nowMs > MAX_EPOCH_MS - IDLE_MS) return [];
  // Nor one whose limit is below a request's units, or whose log holds claims larger than the limit
  // (a debt the bucket pays back at its rate, as GCRA does): no idle time is owed to make room.
  const limit = state.limit ?? Number.POSITIVE_INFINITY;
  if (limit < 1 || state.slots.some(([, , units]) => units > limit) || (state.anchor?.lateUnits ?? 0) > limit) return [];
  // Only a state whose instants are all behind it (an absurd clock in the sequence lays starts, leases and readings far ahead);
  // its hold is checked above, against the idle claim's own time.
  if (storedInstants(state).some(([name, ms]) => name !== "notBeforeMs" && ms > lastNowMs)) return [];
  const { result } = ops.claim(state, { nowMs, latestStartMs: Number.POSITIVE_INFINITY }, options);
  if (result.kind === "go" && result.atMs <= nowMs + 2 * windowMs) return [];
  return [`after ${IDLE_MS / 60_000} idle minutes (window ${windowMs} ms, limit ${state.limit}, reserve ${state.reserveUnits}) a claim got ${printable(result)}`];
}

/** The governor's operations under test; a test hands in a broken one to show the target can fail. */
export interface GovernorOps {
  claim: typeof claim;
  observe: typeof observe;
}

export function runGovernorFuzz(seed: number, count: number, ops: GovernorOps = { claim, observe }): FuzzResult {
  const gen = new Gen(seed);
  const tally = new Tally(false);
  for (let i = 0; i < count; i++) runSequence(gen, tally, { seed, input: i }, ops);
  return tally.result();
}

export const governorTarget: FuzzTarget = { name: "governor", run: (seed, count) => runGovernorFuzz(seed, count) };
