/**
 * The not_before ledger: per rate-limit scope, the earliest time the next request may go out,
 * plus a circuit breaker. One small interface with two backings: in memory (shared between
 * clients of one process) and cross-flow state (shared between Prismatic executions).
 */

/** The breaker of one scope: closed (normal), open (no request before notBefore), half_open (one probe in flight). */
export type BreakerState = "closed" | "open" | "half_open";

export interface LedgerEntry {
  /** ISO 8601: no request for this scope before this time. */
  notBefore: string;
  provider: string;
  limitType: string;
  reason: string;
  /** ISO 8601: when this entry was last written. */
  setAt: string;
  /** Throttled responses in a row for this scope; a non-throttled answer resets it. */
  consecutiveThrottles: number;
  breaker: BreakerState;
  /** ISO 8601: while a half-open probe is in flight, others wait until this lease ends. */
  probeUntil?: string;
}

/** What a caller writes; the ledger keeps the later notBefore. */
export interface NotBeforeWrite {
  notBefore: string;
  provider: string;
  limitType: string;
  reason: string;
}

/** The plain object kept in cross-flow state. */
export interface LedgerState {
  version: 1;
  entries: Record<string, LedgerEntry>;
}

export interface LedgerWarning {
  (message: string): void;
}

export interface LedgerOptions {
  /** The most scopes kept; beyond it the entries that expire first are dropped. Default 200. */
  maxEntries?: number;
  /** How long an entry is kept after its notBefore passed, so the breaker count survives short gaps. Default 10 min. */
  retainMs?: number;
  /** Called once per entry that is dropped as invalid (a warning, never an exception). */
  warn?: LedgerWarning;
}

/** When a scope may be used next, as the client's gate sees it. */
export interface Gate {
  /** Epoch ms before which no request may go out (0 when free). */
  blockedUntilMs: number;
  /** Why it is blocked (the entry's reason), or null when free. */
  reason: string | null;
  entry: LedgerEntry | undefined;
}

export interface Ledger {
  get(scope: string): LedgerEntry | undefined;
  /** Writes a notBefore unless a later one is already there (set-if-later). Returns the entry kept. */
  setIfLater(scope: string, write: NotBeforeWrite, nowMs: number): LedgerEntry;
  /** A throttled answer: set-if-later, count it, and open the breaker at the threshold. */
  recordThrottle(scope: string, write: NotBeforeWrite, nowMs: number, breakerThreshold: number): LedgerEntry;
  /** A non-throttled answer: reset the count and close the breaker (a successful probe). */
  recordSuccess(scope: string, nowMs: number): void;
  /**
   * The gate before a request: blocked until notBefore; after an open breaker's notBefore, the
   * first caller becomes the single probe (half_open, leased for probeLeaseMs) and others wait.
   */
  gate(scope: string, nowMs: number, probeLeaseMs?: number): Gate;
  clear(scope: string): boolean;
  /** Drops entries expired for longer than retainMs; returns how many were dropped. */
  prune(nowMs: number): number;
  entries(): Record<string, LedgerEntry>;
  /** A plain, JSON-safe copy (for cross-flow state). */
  toState(): LedgerState;
  /** Merges a plain object in (set-if-later); invalid entries are dropped with a warning. Returns how many were kept. */
  load(state: unknown): number;
}
