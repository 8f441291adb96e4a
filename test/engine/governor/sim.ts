/**
 * A small discrete-event run of the pure governor against a model server, for the property
 * tests: requests arrive, claim a slot (asking again when told to wait), are counted by the
 * server at their start, and their answers are fed back through observe one round trip later.
 * Time is a plain number; nothing sleeps.
 */
import { claim, DEFAULT_GOVERNOR_OPTIONS, emptyState, observe, type ClaimResult, type GovernorOptions, type GovernorState, type Observation, type ObservedBudget } from "../../../src/engine/governor";

/** What a model server says about one request at its arrival. */
export interface Admission {
  admitted: boolean;
  remaining: number;
  /** When at least one unit is back, epoch ms. */
  resetAtMs: number;
  /** For a rejected request: how long until one would be admitted. */
  waitMs: number;
}

export interface ModelServer {
  readonly limit: number;
  readonly windowMs: number;
  admit(atMs: number): Admission;
}

/** A sliding log: at most `limit` admitted in any (t - windowMs, t]; a rejected request is not counted. */
export function slidingLog(limit: number, windowMs: number): ModelServer {
  const log: number[] = [];
  return {
    limit,
    windowMs,
    admit(atMs) {
      while (log.length > 0 && log[0]! <= atMs - windowMs) log.shift();
      const admitted = log.length < limit;
      if (admitted) log.push(atMs);
      const resetAtMs = log.length > 0 ? log[0]! + windowMs : atMs;
      return { admitted, remaining: limit - log.length, resetAtMs, waitMs: admitted ? 0 : resetAtMs - atMs };
    },
  };
}

/**
 * A token bucket of `limit` refilling `limit` per windowMs whose reset is the time until it is full
 * again (as many X-RateLimit servers give it); a rejected request takes no token.
 */
export function tokenBucket(limit: number, windowMs: number): ModelServer {
  let tokens = limit;
  let lastMs: number | null = null;
  const perMs = limit / windowMs;
  return {
    limit,
    windowMs,
    admit(atMs) {
      if (lastMs !== null && atMs > lastMs) tokens = Math.min(limit, tokens + (atMs - lastMs) * perMs);
      lastMs = lastMs === null ? atMs : Math.max(lastMs, atMs);
      const admitted = tokens + 1e-9 >= 1;
      if (admitted) tokens = Math.max(0, tokens - 1);
      const resetAtMs = atMs + Math.ceil((limit - tokens) / perMs);
      return { admitted, remaining: Math.floor(tokens + 1e-9), resetAtMs, waitMs: admitted ? 0 : Math.ceil((1 - tokens) / perMs) };
    },
  };
}

/** Fixed windows aligned to originMs: `limit` per window; a rejected request is not counted. */
export function fixedWindow(limit: number, windowMs: number, originMs: number): ModelServer {
  let index = Number.NEGATIVE_INFINITY;
  let used = 0;
  return {
    limit,
    windowMs,
    admit(atMs) {
      const current = Math.floor((atMs - originMs) / windowMs);
      if (current !== index) {
        index = current;
        used = 0;
      }
      const admitted = used < limit;
      if (admitted) used += 1;
      const resetAtMs = originMs + (current + 1) * windowMs;
      return { admitted, remaining: limit - used, resetAtMs, waitMs: admitted ? 0 : resetAtMs - atMs };
    },
  };
}

/**
 * A concurrency limit: at most `limit` admitted requests held at once, each for holdMs from its
 * arrival (its answer); the server shows nothing and tells no wait (waitMs 0), as a generic 429 does.
 */
export function concurrencyLimit(limit: number, holdMs: number): ModelServer {
  const held: number[] = [];
  return {
    limit,
    windowMs: holdMs,
    admit(atMs) {
      while (held.length > 0 && held[0]! <= atMs) held.shift();
      const admitted = held.length < limit;
      if (admitted) {
        held.push(atMs + holdMs);
        held.sort((a, b) => a - b);
      }
      return { admitted, remaining: limit - held.length, resetAtMs: held[0] ?? atMs, waitMs: 0 };
    },
  };
}

export interface SimOptions {
  server: ModelServer;
  /** Arrival times of the requests, epoch ms (any order). */
  arrivalsMs: readonly number[];
  rttMs: number;
  /**
   * What answers show: the whole budget (remaining, limit, reset, window), the budget without the
   * window's length (GitHub's X-RateLimit-Limit/Remaining/Reset), or nothing but a throttle's wait.
   */
  shows: "budget" | "budget without window" | "nothing";
  /** Whether a throttle says how long to wait (Retry-After). */
  throttleSaysWait: boolean;
  /** Fixed draws handed to claim as `random`. */
  draws?: readonly number[];
  governor?: Partial<GovernorOptions>;
  startMs: number;
  /** Called with one line per decision and answer, to read a failing run. */
  trace?: (line: string) => void;
}

export interface SimRun {
  /** Start times of the requests the governor let go (each was sent then). */
  startsMs: number[];
  admitted: number;
  throttled: number;
  /** Claims answered "go" whose atMs was before the claim's nowMs or the state's notBeforeMs. */
  earlyGrants: number;
  /** Requests that never got a start (the run hit its event bound). */
  unfinished: number;
  /** Every granted start with the server's verdict, in grant order. */
  grants: Array<{ seq: number; atMs: number; admitted: boolean; why: string }>;
  /** The last seq granted when the governor first knew a limit (null: it never did). */
  firstLimitAtSeq: number | null;
  state: GovernorState;
}

type Event = { atMs: number; order: number; kind: "claim"; request: number } | { atMs: number; order: number; kind: "answer"; request: number; seq: number; sentAtMs: number; admission: Admission };

const MAX_EVENTS = 200_000;

function budgetOf(server: ModelServer, admission: Admission, withWindow: boolean): ObservedBudget {
  return { remaining: admission.remaining, limit: server.limit, resetAtMs: admission.resetAtMs, windowMs: withWindow ? server.windowMs : null, restorePerSecond: null, unitsPerRequest: null };
}

function observationOf(options: SimOptions, event: Extract<Event, { kind: "answer" }>): Observation {
  const { admission } = event;
  return {
    seq: event.seq,
    sentAtMs: event.sentAtMs,
    nowMs: event.atMs,
    kind: admission.admitted ? "ok" : "throttled",
    limitType: admission.admitted ? "none" : "burst",
    waitMs: admission.admitted ? null : options.throttleSaysWait ? Math.max(0, admission.waitMs - options.rttMs) : 1000,
    waitFromServer: !admission.admitted && options.throttleSaysWait,
    budget: options.shows === "nothing" ? null : budgetOf(options.server, admission, options.shows === "budget"),
    reason: admission.admitted ? "ok" : "429",
  };
}

/** Runs every request to its answer; throttled requests are not retried (each arrival is one attempt). */
export function simulate(options: SimOptions): SimRun {
  const governor: GovernorOptions = { ...DEFAULT_GOVERNOR_OPTIONS, ...options.governor };
  let state = emptyState(options.startMs);
  let order = 0;
  const events: Event[] = options.arrivalsMs.map((atMs, request) => ({ atMs, order: order++, kind: "claim" as const, request }));
  const run: SimRun = { startsMs: [], admitted: 0, throttled: 0, earlyGrants: 0, unfinished: 0, grants: [], firstLimitAtSeq: null, state };
  const done = new Set<number>();
  let draw = 0;
  for (let step = 0; step < MAX_EVENTS && events.length > 0; step++) {
    // Earliest first; at the same instant answers come before claims, then arrival order.
    let next = 0;
    for (let i = 1; i < events.length; i++) {
      const a = events[i]!;
      const b = events[next]!;
      if (a.atMs < b.atMs || (a.atMs === b.atMs && (a.kind === "answer" ? 0 : 1) - (b.kind === "answer" ? 0 : 1) < 0) || (a.atMs === b.atMs && a.kind === b.kind && a.order < b.order)) next = i;
    }
    const event = events.splice(next, 1)[0]!;
    if (event.kind === "answer") {
      const observation = observationOf(options, event);
      state = observe(state, observation, governor);
      if (run.firstLimitAtSeq === null && state.limit !== null) run.firstLimitAtSeq = state.seq;
      options.trace?.(`${event.atMs - options.startMs}: answer seq ${event.seq} sent ${event.sentAtMs - options.startMs}: ${observation.kind}${observation.budget ? ` remaining ${observation.budget.remaining} reset +${(observation.budget.resetAtMs ?? options.startMs) - options.startMs}` : ""}`);
      done.add(event.request);
      continue;
    }
    const random = options.draws ? options.draws[draw++ % options.draws.length] : undefined;
    const floorMs = Math.max(event.atMs, state.notBeforeMs);
    const claimed = claim(state, { nowMs: event.atMs, latestStartMs: event.atMs + 100 * options.server.windowMs, random }, governor);
    state = claimed.state;
    const result = claimed.result;
    options.trace?.(`${event.atMs - options.startMs}: claim by request ${event.request}: ${result.kind} ${result.kind === "go" ? `at ${result.atMs - options.startMs} seq ${result.seq} (${result.why})` : result.kind === "wait" ? `until ${result.untilMs - options.startMs}` : `until ${result.notBeforeMs - options.startMs}`}`);
    if (result.kind === "go") {
      if (result.atMs < floorMs) run.earlyGrants += 1;
      run.startsMs.push(result.atMs);
      const admission = options.server.admit(result.atMs);
      run.grants.push({ seq: result.seq, atMs: result.atMs, admitted: admission.admitted, why: result.why });
      if (admission.admitted) run.admitted += 1;
      else run.throttled += 1;
      events.push({ atMs: result.atMs + options.rttMs, order: order++, kind: "answer", request: event.request, seq: result.seq, sentAtMs: result.atMs, admission });
    } else {
      const againMs = result.kind === "wait" ? result.untilMs : result.notBeforeMs;
      events.push({ atMs: Math.max(event.atMs + 1, againMs), order: order++, kind: "claim", request: event.request });
    }
  }
  run.unfinished = options.arrivalsMs.length - done.size;
  run.state = state;
  return run;
}

/** The most starts in any half-open interval [t, t + windowMs). */
export function mostInAnyWindow(startsMs: readonly number[], windowMs: number): number {
  const sorted = [...startsMs].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= windowMs) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

/**
 * `workers` each sending one request at a time to `server` through `scope` until `jobs` succeeded,
 * from startMs; each answer shows the budget `budgetOf` makes of the server's admission.
 */
export function runWorkers(
  scope: { claim(nowMs: number): ClaimResult; answer(granted: { seq: number; atMs: number }, nowMs: number, fields: Partial<Observation>): unknown; throttle(granted: { seq: number; atMs: number }, nowMs: number, waitMs: number | null, fields: Partial<Observation>): unknown },
  server: ModelServer,
  run: { workers: number; rttMs: number; startMs: number; jobs: number; budgetOf: (admission: Admission) => ObservedBudget | null; waitOf?: (admission: Admission) => number | null },
): { throttled: number; lastStartMs: number } {
  let throttled = 0;
  let lastStartMs = run.startMs;
  const freeAtMs = Array.from({ length: run.workers }, () => run.startMs);
  for (let sent = 0; sent < run.jobs; ) {
    const worker = freeAtMs.indexOf(Math.min(...freeAtMs));
    const nowMs = freeAtMs[worker]!;
    const result = scope.claim(nowMs);
    if (result.kind !== "go") {
      freeAtMs[worker] = result.kind === "wait" ? Math.max(nowMs + 1, result.untilMs) : result.notBeforeMs;
      continue;
    }
    const admission = server.admit(result.atMs);
    const answeredAtMs = result.atMs + run.rttMs;
    const budget = run.budgetOf(admission);
    if (admission.admitted) {
      scope.answer(result, answeredAtMs, { budget });
      sent += 1;
      lastStartMs = result.atMs;
    } else {
      throttled += 1;
      scope.throttle(result, answeredAtMs, run.waitOf ? run.waitOf(admission) : admission.waitMs, { budget });
    }
    freeAtMs[worker] = answeredAtMs;
  }
  return { throttled, lastStartMs };
}


type WorkerEvent = { atMs: number; order: number; worker: number } & ({ kind: "claim" } | { kind: "send"; seq: number } | { kind: "answer"; seq: number; sentAtMs: number; admission: Admission });

/**
 * `workers` each sending one request at a time until `jobs` succeeded, as runWorkers, but in time
 * order: a request is counted by the server when it is sent (its start), and its answer is observed
 * one round trip later, after whatever else happened meanwhile (other claims, sends and answers).
 * A throttled request is claimed again at its answer. For servers whose verdict depends on what is
 * in flight (a concurrency limit). Successes show nothing; a throttle shows what throttleBudget
 * reads from its admission (nothing where it is not given).
 */
export function runWorkersInTime(
  scope: { state: GovernorState; claim(nowMs: number): ClaimResult; answer(granted: { seq: number; atMs: number }, nowMs: number, fields: Partial<Observation>): unknown; throttle(granted: { seq: number; atMs: number }, nowMs: number, waitMs: number | null, fields: Partial<Observation>): unknown },
  server: ModelServer,
  run: { workers: number; rttMs: number; startMs: number; jobs: number; waitOf: (admission: Admission) => number | null; throttleBudget?: (admission: Admission) => ObservedBudget },
): { throttled: number; lastStartMs: number } {
  let order = 0;
  const events: WorkerEvent[] = Array.from({ length: run.workers }, (_, worker) => ({ atMs: run.startMs, order: order++, worker, kind: "claim" as const }));
  let throttled = 0;
  let succeeded = 0;
  let started = 0;
  let lastStartMs = run.startMs;
  for (let step = 0; step < MAX_EVENTS && events.length > 0 && succeeded < run.jobs; step++) {
    // Earliest first; at one instant answers, then sends, then claims, each in the order made.
    const rank = (e: WorkerEvent): number => (e.kind === "answer" ? 0 : e.kind === "send" ? 1 : 2);
    let next = 0;
    for (let i = 1; i < events.length; i++) {
      const a = events[i]!;
      const b = events[next]!;
      if (a.atMs < b.atMs || (a.atMs === b.atMs && (rank(a) < rank(b) || (rank(a) === rank(b) && a.order < b.order)))) next = i;
    }
    const event = events.splice(next, 1)[0]!;
    if (event.kind === "claim") {
      if (started >= run.jobs + throttled) continue;
      const result = scope.claim(event.atMs);
      if (result.kind === "go") {
        started += 1;
        events.push({ atMs: result.atMs, order: order++, worker: event.worker, kind: "send", seq: result.seq });
      } else {
        events.push({ atMs: Math.max(event.atMs + 1, result.kind === "wait" ? result.untilMs : result.notBeforeMs), order: order++, worker: event.worker, kind: "claim" });
      }
    } else if (event.kind === "send") {
      lastStartMs = Math.max(lastStartMs, event.atMs);
      events.push({ atMs: event.atMs + run.rttMs, order: order++, worker: event.worker, kind: "answer", seq: event.seq, sentAtMs: event.atMs, admission: server.admit(event.atMs) });
    } else {
      const granted = { seq: event.seq, atMs: event.sentAtMs };
      if (event.admission.admitted) {
        succeeded += 1;
        scope.answer(granted, event.atMs, { budget: null });
      } else {
        throttled += 1;
        scope.throttle(granted, event.atMs, run.waitOf(event.admission), { budget: run.throttleBudget?.(event.admission) ?? null });
      }
      events.push({ atMs: event.atMs, order: order++, worker: event.worker, kind: "claim" });
    }
  }
  return { throttled, lastStartMs };
}
