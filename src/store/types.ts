/**
 * The governor's state behind one asynchronous interface. Every operation is atomic for its
 * scope: in memory because JavaScript runs one callback at a time, in Redis because each is one
 * Lua script. Backings: memory (one process), cross-flow state (Prismatic's embedded default:
 * loaded when an execution starts, written when it ends), Redis (shared across executions,
 * instances and processes).
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

export interface GovernorStore {
  readonly kind: StoreKind;
  claim(scopes: ClaimScopes, request: ClaimRequest): Promise<StoreClaim>;
  observe(scope: string, observation: Observation): Promise<void>;
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
  /** Releases sockets and timers (Redis); a no-op in memory. */
  close(): Promise<void>;
}
