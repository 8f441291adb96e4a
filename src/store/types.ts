/**
 * The governor's state behind one asynchronous interface. Every operation is atomic for its
 * scope: in memory because JavaScript runs one callback at a time, in Redis because each is one
 * Lua script. Backings: memory (one process), cross-flow state (Prismatic's embedded default:
 * loaded when an execution starts, written when it ends), Redis (shared across executions,
 * instances and processes).
 *
 * Beside the governors, a store keeps park queues: named lists of work that could not run yet
 * (Send Batch's deferred items), each held until its not_before. park and takeParked are single
 * operations so that a shared store can make each one atomic (one Lua script in Redis).
 */
import type { ClaimRequest, ClaimResult, GovernorState, LimitType, Observation } from "../engine";

export type StoreKind = "memory" | "cross-flow" | "redis";

/** A claim as the store answers it: the result, and the store's clock when it decided (Redis uses its own TIME). */
export interface StoreClaim {
  result: ClaimResult;
  /** The store's "now" for this decision, epoch ms: sleep (atMs - nowMs), not (atMs - the local clock). */
  nowMs: number;
}

export interface ClaimScopes {
  /** The scope whose governor hands out the slot. */
  governor: string;
  /** Wider scopes whose waits also hold this request (the API's base scope when the governor is a part of it). */
  holds: readonly string[];
}

/** One item in a park queue: what the caller gave, and the time before which it must not be taken. */
export interface ParkedItem {
  /** The work as the caller gave it (JSON: it is stored as given). */
  item: Record<string, unknown>;
  /** Not taken before this time, epoch ms. */
  notBeforeMs: number;
  /** Why it was parked, in one sentence. */
  reason: string;
}

/** The bounds of one park queue. */
export interface QueueLimits {
  /** The most items a queue holds. */
  maxItems: number;
  /** The most bytes a queue holds (its items as UTF-8 JSON). */
  maxBytes: number;
}

export interface ParkResult {
  /** Items added to the queue. */
  parked: number;
  /** Items that did not fit (queue full, or an item larger than the byte bound), in the order given: never dropped, handed back. */
  overflow: ParkedItem[];
  /** Items in the queue after this call. */
  queued: number;
}

export interface TakeResult {
  /** Items whose not_before has passed, in queue order, removed from the queue. */
  items: ParkedItem[];
  /** Items still in the queue. */
  remaining: number;
  /** The earliest not_before among the items still in the queue, epoch ms; null when it is empty. */
  nextNotBeforeMs: number | null;
}

export interface GovernorStore {
  readonly kind: StoreKind;
  /** The backing that answers now, where it can change from `kind` (a shared store fallen back to cross-flow state). */
  backing?(): StoreKind;
  claim(scopes: ClaimScopes, request: ClaimRequest): Promise<StoreClaim>;
  observe(scope: string, observation: Observation): Promise<void>;
  /**
   * claim and observe without a promise, for stores whose state is in this process (memory,
   * cross-flow): same decision, same atomicity. The client uses them when present, so a request
   * that finds a free slot takes no trip through the microtask queue for it (a shared store such as
   * Redis has none: its answer must come over the wire).
   */
  claimNow?(scopes: ClaimScopes, request: ClaimRequest): StoreClaim;
  observeNow?(scope: string, observation: Observation): void;
  /**
   * Sleeps waitMs, or less: until the scope is learned to limit requests in flight (learned, shown or
   * inferred: a place frees when an answer comes, not at a time), where it was not at the call; for
   * stores whose state is in this process. The client's own backoff after a throttle ends there
   * (run.ts sitOutRetryWait). throttledSeq, the claim whose throttle the backoff follows: none at
   * all, once the limit is learned, where that throttle was answered before it was, or its claim
   * was granted beyond the in-flight cap its answer left (the cap holds the retry).
   */
  sleepUntilConcurrencyLearned?(scope: string, waitMs: number, signal?: AbortSignal, throttledSeq?: number): Promise<void>;
  /**
   * Whether the scope is known (learned, shown or inferred) to limit requests in flight, answered at
   * once: from the state in this process, or (Redis) from what the store's last claim or observe in
   * the scope answered. A dropped write's backoff reads it (plan.ts AttemptHistory.placesFreeOnAnswer).
   */
  freesOnAnswerNow?(scope: string): boolean;
  /**
   * Whether every claim on the scope's budget goes through this store and its state shows no one
   * else spending it (engine seesEveryClaim), answered at once like freesOnAnswerNow: false for
   * cross-flow state, whose concurrent executions each load a copy. A dropped write's backoff reads
   * it (plan.ts AttemptHistory.claimsAllSeen).
   */
  seesEveryClaimNow?(scope: string): boolean;
  /** Gives back a granted slot that will not be used (deferred or aborted before sending). */
  release(scope: string, seq: number): Promise<void>;
  /** Set-if-later: no start in this scope before untilMs. */
  holdUntil(scope: string, untilMs: number, reason: string, limitType: LimitType | "unknown"): Promise<GovernorState>;
  /** Forgets a scope (its wait, breaker and what was learned). */
  clear(scope: string): Promise<boolean>;
  /** The states of a scope and of every scope under it (`scope|...`), for Check and Clear Backoff. */
  scopesUnder(base: string): Promise<Array<[string, GovernorState]>>;
  /** Resolves when the scope's state may have changed, or after waitMs, whichever comes first. */
  changed(scope: string, waitMs: number, signal?: AbortSignal): Promise<void>;
  /** A secret kept with the state, mixed into scope fingerprints so that a log reader cannot test credential guesses. */
  salt(): Promise<string>;
  /**
   * Appends items to a named queue, in one atomic step. What does not fit the queue's bounds
   * (limits, or the store's defaults) comes back as overflow, in order; nothing is dropped.
   */
  park(queue: string, items: readonly ParkedItem[], limits?: Partial<QueueLimits>): Promise<ParkResult>;
  /** Removes and returns, in one atomic step, up to maxItems items whose not_before is at or before nowMs; the others stay, in order. */
  takeParked(queue: string, nowMs: number, maxItems: number): Promise<TakeResult>;
  /** Releases sockets and timers (Redis); a no-op in memory. */
  close(): Promise<void>;
}
