import type { Gate, Ledger, LedgerEntry, LedgerOptions, LedgerState, NotBeforeWrite } from "./types";

const DEFAULT_MAX_ENTRIES = 200;
const DEFAULT_RETAIN_MS = 10 * 60_000;
const DEFAULT_PROBE_LEASE_MS = 30_000;
const MAX_TEXT = 500;

function isoMs(iso: string | undefined): number {
  if (iso === undefined) return Number.NaN;
  return Date.parse(iso);
}

function clip(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
}

/** Checks an entry read from outside (state written by another version, or tampered with). */
export function validateEntry(scope: string, value: unknown): { entry: LedgerEntry } | { error: string } {
  if (typeof scope !== "string" || scope.length === 0 || scope.length > 1000) return { error: "the scope key is empty or too long" };
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: "the entry is not an object" };
  const v = value as Record<string, unknown>;
  if (typeof v.notBefore !== "string" || !Number.isFinite(isoMs(v.notBefore))) return { error: "notBefore is not an ISO 8601 time" };
  if (typeof v.setAt !== "string" || !Number.isFinite(isoMs(v.setAt))) return { error: "setAt is not an ISO 8601 time" };
  const throttles = v.consecutiveThrottles ?? 0;
  if (typeof throttles !== "number" || !Number.isSafeInteger(throttles) || throttles < 0) return { error: "consecutiveThrottles is not a non-negative integer" };
  const breaker = v.breaker ?? "closed";
  if (breaker !== "closed" && breaker !== "open" && breaker !== "half_open") return { error: "breaker is not closed, open or half_open" };
  if (v.probeUntil !== undefined && (typeof v.probeUntil !== "string" || !Number.isFinite(isoMs(v.probeUntil)))) return { error: "probeUntil is not an ISO 8601 time" };
  const entry: LedgerEntry = {
    notBefore: new Date(isoMs(v.notBefore)).toISOString(),
    provider: typeof v.provider === "string" ? clip(v.provider) : "unknown",
    limitType: typeof v.limitType === "string" ? clip(v.limitType) : "unknown",
    reason: typeof v.reason === "string" ? clip(v.reason) : "",
    setAt: new Date(isoMs(v.setAt)).toISOString(),
    consecutiveThrottles: throttles,
    breaker,
  };
  if (typeof v.probeUntil === "string") entry.probeUntil = new Date(isoMs(v.probeUntil)).toISOString();
  return { entry };
}

/**
 * The in-memory ledger. Every write is set-if-later, so two clients (or two executions whose
 * states are merged) can only make the wait longer, never shorter: waiting too long costs time,
 * coming back early costs another throttle and, on some APIs, a longer penalty.
 */
export function createMemoryLedger(options: LedgerOptions = {}): Ledger {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const retainMs = options.retainMs ?? DEFAULT_RETAIN_MS;
  const warn = options.warn ?? (() => undefined);
  const map = new Map<string, LedgerEntry>();

  function enforceBound(): void {
    if (map.size <= maxEntries) return;
    // Drop the entries that free up first: they carry the least information about the future.
    const sorted = [...map.entries()].sort((a, b) => isoMs(a[1].notBefore) - isoMs(b[1].notBefore));
    for (const [scope] of sorted.slice(0, map.size - maxEntries)) map.delete(scope);
  }

  function put(scope: string, entry: LedgerEntry): LedgerEntry {
    map.set(scope, entry);
    enforceBound();
    return entry;
  }

  function setIfLater(scope: string, write: NotBeforeWrite, nowMs: number): LedgerEntry {
    const writeMs = isoMs(write.notBefore);
    const existing = map.get(scope);
    if (!Number.isFinite(writeMs)) {
      warn(`ledger: ignored a write for ${scope}: notBefore "${write.notBefore}" is not an ISO 8601 time`);
      return existing ?? put(scope, freshEntry(write, nowMs, nowMs));
    }
    if (existing && isoMs(existing.notBefore) >= writeMs) return existing;
    return put(scope, {
      ...(existing ?? { consecutiveThrottles: 0, breaker: "closed" as const }),
      notBefore: new Date(writeMs).toISOString(),
      provider: clip(write.provider),
      limitType: clip(write.limitType),
      reason: clip(write.reason),
      setAt: new Date(nowMs).toISOString(),
    });
  }

  function freshEntry(write: NotBeforeWrite, notBeforeMs: number, nowMs: number): LedgerEntry {
    return {
      notBefore: new Date(notBeforeMs).toISOString(),
      provider: clip(write.provider),
      limitType: clip(write.limitType),
      reason: clip(write.reason),
      setAt: new Date(nowMs).toISOString(),
      consecutiveThrottles: 0,
      breaker: "closed",
    };
  }

  const ledger: Ledger = {
    get: (scope) => map.get(scope),
    setIfLater,
    recordThrottle(scope, write, nowMs, breakerThreshold) {
      const entry = { ...setIfLater(scope, write, nowMs) };
      entry.consecutiveThrottles += 1;
      delete entry.probeUntil;
      if (entry.breaker === "half_open" || entry.consecutiveThrottles >= Math.max(1, breakerThreshold)) entry.breaker = "open";
      return put(scope, entry);
    },
    recordSuccess(scope, nowMs) {
      const existing = map.get(scope);
      if (!existing) return;
      // Keep a budget-driven notBefore (it may lie ahead); only the breaker and the count reset.
      const entry: LedgerEntry = { ...existing, consecutiveThrottles: 0, breaker: "closed", setAt: new Date(nowMs).toISOString() };
      delete entry.probeUntil;
      put(scope, entry);
    },
    gate(scope, nowMs, probeLeaseMs = DEFAULT_PROBE_LEASE_MS): Gate {
      const entry = map.get(scope);
      if (!entry) return { blockedUntilMs: 0, reason: null, entry };
      const notBeforeMs = isoMs(entry.notBefore);
      if (notBeforeMs > nowMs) return { blockedUntilMs: notBeforeMs, reason: entry.reason, entry };
      if (entry.breaker === "half_open") {
        const probeUntilMs = isoMs(entry.probeUntil);
        if (Number.isFinite(probeUntilMs) && probeUntilMs > nowMs) {
          return { blockedUntilMs: probeUntilMs, reason: "the breaker is half-open and another request is probing the scope", entry };
        }
      }
      if (entry.breaker === "open" || entry.breaker === "half_open") {
        // This caller becomes the single probe; others wait for its answer (or the lease's end).
        put(scope, { ...entry, breaker: "half_open", probeUntil: new Date(nowMs + probeLeaseMs).toISOString() });
      }
      return { blockedUntilMs: 0, reason: null, entry: map.get(scope) };
    },
    clear: (scope) => map.delete(scope),
    prune(nowMs) {
      let dropped = 0;
      for (const [scope, entry] of map) {
        if (isoMs(entry.notBefore) + retainMs <= nowMs && entry.breaker !== "half_open") {
          map.delete(scope);
          dropped += 1;
        }
      }
      return dropped;
    },
    entries: () => Object.fromEntries([...map.entries()].map(([scope, entry]) => [scope, { ...entry }])),
    toState(): LedgerState {
      return { version: 1, entries: ledger.entries() };
    },
    load(state) {
      if (state === undefined || state === null) return 0;
      const raw = (state as { entries?: unknown }).entries;
      if (typeof state !== "object" || raw === null || typeof raw !== "object" || Array.isArray(raw)) {
        warn("ledger: the stored ledger is not an object with entries; it was ignored");
        return 0;
      }
      let kept = 0;
      for (const [scope, value] of Object.entries(raw as Record<string, unknown>)) {
        const checked = validateEntry(scope, value);
        if ("error" in checked) {
          warn(`ledger: dropped the entry for ${scope.slice(0, 200)}: ${checked.error}`);
          continue;
        }
        const incoming = checked.entry;
        const existing = map.get(scope);
        if (!existing || isoMs(incoming.notBefore) > isoMs(existing.notBefore)) {
          put(scope, incoming);
        } else if (incoming.consecutiveThrottles > existing.consecutiveThrottles) {
          put(scope, { ...existing, consecutiveThrottles: incoming.consecutiveThrottles, breaker: incoming.breaker === "closed" ? existing.breaker : incoming.breaker });
        }
        kept += 1;
      }
      return kept;
    },
  };
  return ledger;
}
