/**
 * The in-memory store: one process's governors. Every operation runs synchronously inside one
 * call, so it is atomic; waiters held by a probe are woken as soon as the scope changes (the
 * probe's answer arrives), not after a fixed lease.
 */
import { randomBytes } from "node:crypto";
import { claimInPlace, DEFAULT_GOVERNOR_OPTIONS, emptyState, freesOnAnswer, holdUntil, keptHeldGrant, observeInPlace, readState, release, seesEveryClaim, type ClaimRequest, type ClaimResult, type GovernorOptions, type GovernorState, type Observation } from "../engine";
import { createQueueSet } from "./queue";
import type { ClaimScopes, GovernorStore, ParkedItem, QueueLimits, StoreClaim } from "./types";
import { ScopeWaiters } from "./waiters";

/** The time source a store waits on (the client's clock: real, or virtual in the lab). */
export interface StoreClock {
  nowMs(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface MemoryStoreOptions {
  clock?: StoreClock;
  governor?: Partial<GovernorOptions>;
  /** The most scopes kept. Past it, scopes with nothing ahead go first (least recently used); a wait still ahead goes last. Default 500. */
  maxScopes?: number;
  /** The fingerprint salt; a random one per store when absent. */
  salt?: string;
  /** Park queue bounds: per queue (default 1,000 items, 2 MiB) and for all queues together (default 8 MiB). */
  queues?: { limits?: Partial<QueueLimits>; maxTotalBytes?: number };
  /** Called with every decision, for tracing (the lab's --trace, a user's metrics). Must not throw. */
  onEvent?: (event: StoreEvent) => void;
}

/** One governor decision, as it was made. */
export type StoreEvent =
  | { kind: "claim"; scope: string; request: ClaimRequest; result: ClaimResult; state: GovernorState }
  | { kind: "observe"; scope: string; observation: Observation; state: GovernorState };

export interface MemoryStore extends GovernorStore {
  claimNow(scopes: ClaimScopes, request: ClaimRequest): StoreClaim;
  observeNow(scope: string, observation: Observation): void;
  sleepUntilConcurrencyLearned(scope: string, waitMs: number, signal?: AbortSignal, throttledSeq?: number): Promise<void>;
  freesOnAnswerNow(scope: string): boolean;
  seesEveryClaimNow(scope: string): boolean;
  /** Every scope's state (copies are not made: treat as read-only). */
  snapshot(): ReadonlyMap<string, GovernorState>;
  /** Loads states written elsewhere (checked; malformed ones are dropped and reported). Returns the problems, one line each. */
  load(scopes: Record<string, unknown>): string[];
  /** Every park queue's items (copies), by queue name. */
  queuesSnapshot(): Record<string, ParkedItem[]>;
  /** Loads park queues written elsewhere (checked; malformed items are dropped and reported). Returns the problems, one line each. */
  loadQueues(queues: unknown): string[];
  readonly saltValue: string;
}

/** The real clock (Date.now and setTimeout), for stores given none. */
export const defaultStoreClock: StoreClock = {
  nowMs: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, Math.max(0, Math.min(ms, 2 ** 31 - 1)));
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};

/** The waiters' key for a scope's becoming a limit on requests in flight (no scope key holds a NUL). */
const placesKey = (scope: string): string => `${scope}\u0000places`;

/** Whether a scope still holds something that matters: a wait ahead, a probe or claims out. */
function holdsSomethingAhead(state: GovernorState, nowMs: number): boolean {
  return state.notBeforeMs > nowMs || state.lastGrantMs > nowMs || state.inFlight.length > 0 || state.probe !== null;
}

/**
 * Keeps at most maxScopes: least recently used first among scopes with nothing ahead; a wait still
 * ahead is kept longest (losing it costs a throttle), and among those the one that ends first goes first.
 */
function evictIfFull(states: Map<string, GovernorState>, maxScopes: number, nowMs: number): void {
  if (states.size <= maxScopes) return;
  const ranked = [...states.entries()].sort(([, a], [, b]) => {
    const aheadA = holdsSomethingAhead(a, nowMs) ? 1 : 0;
    const aheadB = holdsSomethingAhead(b, nowMs) ? 1 : 0;
    if (aheadA !== aheadB) return aheadA - aheadB;
    return aheadA ? a.notBeforeMs - b.notBeforeMs : a.updatedAtMs - b.updatedAtMs;
  });
  for (const [scope] of ranked.slice(0, states.size - maxScopes)) states.delete(scope);
}

/** The governor's state under the waits of the scopes that hold it (a wait told for the whole API holds each endpoint's scope). */
function withHolds(states: ReadonlyMap<string, GovernorState>, scopes: ClaimScopes, state: GovernorState): GovernorState {
  let held = state;
  for (const hold of scopes.holds) {
    const holding = states.get(hold);
    if (holding && holding.notBeforeMs > held.notBeforeMs) held = holdUntil(held, holding.notBeforeMs, holding.notBeforeReason, holding.notBeforeType);
  }
  return held;
}

/**
 * Throttled claims whose retry needs no backoff of its own once the scope holds a limit on requests
 * in flight (the cap holds the retry until a place frees): those answered before that limit was
 * learned, and those granted with more of ours in flight than the cap their answer left (a slow
 * start's wave, or claims out when a lesson lowered the cap). Judged at the answer, not at the
 * sleep: a wave of 64 sent into a concurrency limit of 25 behind Stripe's silence (50 workers,
 * 20 ms answers) found the limit learned by the time their backoffs began, read that as a throttle
 * under a known limit and slept 250 to 490 ms of jittered backoff while places stood free
 * (lab:random seed 1571 #24: 2.63 -> 1.33 x ideal). A claim granted within a cap already held and
 * still throttled sleeps its backoff: others take places unseen.
 */
class BackoffNotNeeded {
  private readonly keys = new Set<string>();

  note(scope: string, seq: number, heldBefore: boolean, outAtGrant: number | undefined, after: GovernorState): void {
    const overCap = outAtGrant !== undefined && after.inFlightCap !== null && outAtGrant > after.inFlightCap;
    if (heldBefore && !overCap) return;
    // Bounded: a key is taken by the retry's sleep; one never taken (its request gave up) is dropped with the rest.
    if (this.keys.size >= 10_000) this.keys.clear();
    this.keys.add(`${scope}\n${seq}`);
  }

  take(scope: string, seq: number): boolean {
    return this.keys.delete(`${scope}\n${seq}`);
  }
}

/** Whether a scope's limit is on requests in flight (a place frees when an answer comes, not at a time). */
function freesOnAnswerIn(states: ReadonlyMap<string, GovernorState>, scope: string): boolean {
  const state = states.get(scope);
  return state !== undefined && freesOnAnswer(state);
}

/** The park queue's part of the store (Send Batch's queues), over one queue set. */
function queueMethods(queues: ReturnType<typeof createQueueSet>): Pick<MemoryStore, "park" | "takeParked" | "queuesSnapshot" | "loadQueues"> {
  return {
    park: async (queue, items, limits) => queues.park(queue, items, limits),
    takeParked: async (queue, nowMs, maxItems) => {
      if (!Number.isSafeInteger(maxItems) || maxItems < 1) throw new TypeError(`Invalid maxItems ${String(maxItems)}: give a whole number, 1 or more.`);
      return queues.take(queue, nowMs, maxItems);
    },
    queuesSnapshot: () => queues.snapshot(),
    loadQueues: (value) => queues.load(value),
  };
}

/** What the scope methods below need of the store they belong to. */
interface ScopeAccess {
  states: Map<string, GovernorState>;
  clock: StoreClock;
  put(scope: string, state: GovernorState, nowMs: number): void;
  stateOf(scope: string, nowMs: number): GovernorState;
  notify(scope: string): void;
}

/** Release, hold, clear and list: the store's writes to a scope outside claim and observe. */
function scopeMethods({ states, clock, put, stateOf, notify }: ScopeAccess): Pick<MemoryStore, "release" | "holdUntil" | "clear" | "scopesUnder"> {
  return {
    async release(scope, seq) {
      const state = states.get(scope);
      if (state) put(scope, release(state, seq), clock.nowMs());
    },
    async holdUntil(scope, untilMs, reason, limitType) {
      const nowMs = clock.nowMs();
      const next = holdUntil(stateOf(scope, nowMs), untilMs, reason, limitType);
      put(scope, next, nowMs);
      return next;
    },
    async clear(scope) {
      const had = states.delete(scope);
      notify(scope);
      return had;
    },
    async scopesUnder(base) {
      return [...states.entries()].filter(([key]) => key === base || key.startsWith(`${base}|`));
    },
  };
}

/** Loads states written elsewhere into states, each checked; returns what was dropped, one line each. */
function loadStates(states: Map<string, GovernorState>, scopes: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [scope, value] of Object.entries(scopes)) {
    if (scope.length === 0 || scope.length > 1000) {
      problems.push("a scope key is empty or longer than 1000 characters; it was dropped");
      continue;
    }
    const read = readState(value);
    if ("error" in read) problems.push(`the state of scope ${scope.slice(0, 120)} was dropped: ${read.error}`);
    else states.set(scope, read.state);
  }
  return problems;
}

export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const clock = options.clock ?? defaultStoreClock;
  const governorOptions: GovernorOptions = { ...DEFAULT_GOVERNOR_OPTIONS, ...options.governor };
  const maxScopes = options.maxScopes ?? 500;
  const saltValue = options.salt ?? randomBytes(16).toString("hex");
  const states = new Map<string, GovernorState>();
  const waiters = new ScopeWaiters(clock);

  function put(scope: string, state: GovernorState, nowMs: number): void {
    const isNew = !states.has(scope);
    states.set(scope, state);
    if (isNew) evictIfFull(states, maxScopes, nowMs);
    waiters.notify(scope);
  }

  const stateOf = (scope: string, nowMs: number): GovernorState => states.get(scope) ?? emptyState(nowMs);
  const backoffNotNeeded = new BackoffNotNeeded();
  const freesOn = (scope: string): boolean => freesOnAnswerIn(states, scope);

  const store: MemoryStore = {
    kind: "memory",
    saltValue,
    claimNow(scopes: ClaimScopes, request: ClaimRequest): StoreClaim {
      // The store owns its states: the governor changes them in place (no copy per request).
      const next = claimInPlace(withHolds(states, scopes, stateOf(scopes.governor, request.nowMs)), request, governorOptions);
      options.onEvent?.({ kind: "claim", scope: scopes.governor, request, result: next.result, state: next.state });
      // A held grant kept as it was changed nothing: no write, and no one is woken for it.
      if (!keptHeldGrant(request, next.result)) put(scopes.governor, next.state, request.nowMs);
      return { result: next.result, nowMs: request.nowMs };
    },
    observeNow(scope: string, observation: Observation): void {
      const freedOnAnswer = freesOn(scope);
      const outAtGrant = states.get(scope)?.inFlight.find(([seq]) => seq === observation.seq)?.[2];
      const after = observeInPlace(stateOf(scope, observation.nowMs), observation, governorOptions);
      // Only a throttle the server named no wait for is followed by a backoff of ours (run.ts sitOutRetryWait).
      if (observation.kind === "throttled" && !observation.waitFromServer) backoffNotNeeded.note(scope, observation.seq, freedOnAnswer, outAtGrant, after);
      options.onEvent?.({ kind: "observe", scope, observation, state: after });
      put(scope, after, observation.nowMs);
      // Only the change is told: a wait on every answer woke each backing-off request each time.
      if (!freedOnAnswer && freesOnAnswer(after)) waiters.notify(placesKey(scope));
    },
    freesOnAnswerNow: freesOn,
    seesEveryClaimNow(scope: string): boolean {
      const state = states.get(scope);
      return state !== undefined && seesEveryClaim(state);
    },
    async sleepUntilConcurrencyLearned(scope: string, waitMs: number, signal?: AbortSignal, throttledSeq?: number): Promise<void> {
      const cut = throttledSeq !== undefined && backoffNotNeeded.take(scope, throttledSeq);
      if (freesOn(scope)) return cut ? undefined : clock.sleep(waitMs, signal);
      await waiters.changed(placesKey(scope), waitMs, signal);
    },
    async claim(scopes, request) {
      return store.claimNow(scopes, request);
    },
    async observe(scope, observation) {
      store.observeNow(scope, observation);
    },
    ...scopeMethods({ states, clock, put, stateOf, notify: (scope) => waiters.notify(scope) }),
    changed: (scope, waitMs, signal) => waiters.changed(scope, waitMs, signal),
    async salt() {
      return saltValue;
    },
    ...queueMethods(createQueueSet(options.queues)),
    async close() {},
    snapshot: () => states,
    load(scopes) {
      const problems = loadStates(states, scopes);
      evictIfFull(states, maxScopes, clock.nowMs());
      return problems;
    },
  };
  return store;
}
