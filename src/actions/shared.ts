/** Prismatic glue shared by the actions: context -> ledger, logger, deadline, scope. */
import type { ActionContext, Connection } from "@prismatic-io/spectral";
import { belongsElsewhere, createThrottleClient, type ClientLogger } from "../client";
import type { ScopeParts } from "../engine";
import { authFromConnection } from "../connections";
import { createStateLedger, type LedgerEntry, type StateLedger } from "../ledger";

/** Prismatic stops an execution after 15 minutes; keep a margin for the steps after this one. */
export const EXECUTION_LIMIT_MS = 15 * 60_000;
export const DEADLINE_MARGIN_MS = 60_000;

export function loggerOf(context: Pick<ActionContext, "logger">): ClientLogger {
  return {
    info: (message) => context.logger.info(message),
    warn: (message) => context.logger.warn(message),
  };
}

/** The cross-flow ledger as this execution loaded it (Prismatic loads state when an execution starts). */
export function openLedger(context: Pick<ActionContext, "logger" | "crossFlowState">, nowMs: number): StateLedger {
  return createStateLedger(context.crossFlowState, nowMs, { warn: (message) => context.logger.warn(message) });
}

/** The latest moment a wait may end inside this execution, from context.startedAt; null when unknown. */
export function executionDeadlineMs(startedAt: string | undefined, nowMs: number): number | null {
  const startedAtMs = startedAt ? Date.parse(startedAt) : Number.NaN;
  const base = Number.isFinite(startedAtMs) && startedAtMs <= nowMs ? startedAtMs : nowMs;
  return base + EXECUTION_LIMIT_MS - DEADLINE_MARGIN_MS;
}

interface ScopeInput {
  connection?: Connection | null;
  url?: string;
  provider: string;
  scopeKey?: string;
}

function clientFor(input: ScopeInput) {
  const auth = authFromConnection(input.connection);
  return createThrottleClient({ baseUrl: auth.baseUrl, headers: auth.headers, credential: auth.credential, secrets: auth.secrets, provider: input.provider });
}

/** The base scope for a connection + URL + provider, computed exactly as sendRequest computes it. */
export function baseScopeOf(input: ScopeInput): string {
  if (input.scopeKey) return input.scopeKey;
  return clientFor(input).scopeOf(input.url ?? "/");
}

/** The scope parts a request to the URL counts against (GitHub's resource...), as sendRequest's gate sees them. */
export function requestPartsOf(input: ScopeInput): ScopeParts {
  return input.url ? clientFor(input).requestPartsOf(input.url) : {};
}

/**
 * Every ledger entry under a base scope (the base itself and its dialect sub-scopes), less those
 * of other parts of the API than the request's (a spent search budget, for a core call).
 */
export function entriesUnder(ledger: StateLedger, base: string, requestParts: ScopeParts = {}): Array<[string, LedgerEntry]> {
  return Object.entries(ledger.entries()).filter(([key]) => (key === base || key.startsWith(`${base}|`)) && !belongsElsewhere(key, base, requestParts));
}
