/** Small helpers shared by the provider dialects. Pure, like the rest of the engine. */
import type { SignalContext } from "../context";
import { isoAfter, longestWait, readLimitFamily, waitUntil, type ResetKind, type Wait } from "../signals";

export { longestWait };
import { PER_ATTEMPT_SUFFIX } from "../time";
import type { Budget, Interpretation, LimitType, ScopeParts } from "../types";

/** A throttled answer, the shape every dialect's "not yet" shares; retryable unless said otherwise. */
export function throttledBy(
  limitType: LimitType,
  wait: Wait | null | undefined,
  details: { reason: string; scope?: ScopeParts; budget?: Budget | null; retryable?: boolean; writeNotProcessed?: boolean },
): Interpretation {
  // The details go first: a spread that happens to carry minWaitMs or waitSource must not override the wait.
  return {
    ...details,
    throttled: true,
    limitType,
    minWaitMs: wait?.waitMs ?? null,
    waitSource: wait?.source ?? null,
    retryable: details.retryable ?? true,
  };
}

/**
 * Not a throttle, but worth another attempt after the wait (a lock held by another write, a
 * transient server failure the provider says to retry): throttledBy's sibling, holding back no
 * other call.
 */
export function retryableBy(
  limitType: Exclude<LimitType, "none">,
  wait: Wait | null | undefined,
  details: { reason: string; scope?: ScopeParts; budget?: Budget | null; writeNotProcessed?: boolean },
): Interpretation {
  return { ...details, throttled: false, retryable: true, limitType, minWaitMs: wait?.waitMs ?? null, waitSource: wait?.source ?? null };
}

/** A "true"/"false" header (Stripe-Should-Retry, x-should-retry); null when absent or unreadable. */
export function readBooleanHeader(ctx: SignalContext, name: string): boolean | null {
  const raw = ctx.header(name);
  if (raw === undefined) return null;
  const value = raw.trim().toLowerCase();
  if (value === "true") return true;
  if (value === "false") return false;
  ctx.ignore(name, raw, "neither true nor false");
  return null;
}

/**
 * The server's own retry verdict wins over the dialect's rules (docs/dialects.md, "Meanings to keep"), as the
 * SDKs that define these headers obey it before anything else (stripe-node RequestSender
 * `_shouldRetry`; openai-node and anthropic-sdk-typescript `shouldRetry`: "If the server
 * explicitly says whether or not to retry, obey."):
 * - "false" stops retries;
 * - "true" on an error makes it retryable, whatever the dialect read (a 400, a 409, a quota):
 *   after the server's wait if it gave one, else with backoff. Whether a retry may repeat a write
 *   is a separate question (write-safety.ts), not answered by this flag.
 */
export function applyServerRetryVerdict(
  ctx: SignalContext,
  interpretation: Interpretation,
  allowed: boolean | null,
  headerName: string,
): Interpretation {
  if (allowed === null) return interpretation;
  if (allowed === false) {
    return {
      ...interpretation,
      retryAllowed: false,
      retryable: false,
      reason: interpretation.retryable ? `${interpretation.reason} The server says not to retry (${headerName}: false).` : interpretation.reason,
    };
  }
  if (ctx.status < 400 || interpretation.retryable) return { ...interpretation, retryAllowed: true };
  return {
    ...interpretation,
    retryAllowed: true,
    retryable: true,
    reason: interpretation.throttled
      ? `${interpretation.reason} The server says the request may be retried (${headerName}: true).`
      : `${ctx.status}: the server says the request may be retried (${headerName}: true), though the status alone would be final. ${interpretation.reason}`,
  };
}

/** A success reason that names the budget's own unit (tokens, points) instead of "requests". */
export function withBudgetReason(ctx: SignalContext, interpretation: Interpretation): Interpretation {
  const budget = interpretation.budget;
  if (!budget || interpretation.limitType !== "none" || ctx.status < 200 || ctx.status >= 300) return interpretation;
  const shown = `${budget.remaining}${budget.limit === null ? "" : `/${budget.limit}`}`;
  return {
    ...interpretation,
    reason: `${ctx.status}: not throttled; ${shown} left (${budget.source})${budget.resetAt ? `, resets at ${budget.resetAt}` : ""}.`,
  };
}

/** A wait in seconds from a body field (Discord retry_after), or null with a recorded reason. */
export function secondsWait(ctx: SignalContext, value: unknown, source: string): Wait | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    ctx.ignore(source, String(value), "not a non-negative number of seconds");
    return null;
  }
  const waitMs = Math.ceil(value * 1000);
  if (!Number.isSafeInteger(waitMs)) {
    ctx.ignore(source, String(value), "too large to be a wait");
    return null;
  }
  return { waitMs, source };
}

/** A budget from a used/limit pair (X-Shopify-Shop-Api-Call-Limit, Sforce-Limit-Info). */
export function budgetFromUsed(used: number, limit: number, source: string, resetAt: string | null = null): Budget {
  return { remaining: Math.max(0, limit - used), limit, resetAt, source };
}

/** A wait that grows with each attempt (plan() multiplies it by the attempts made so far). */
export function perAttemptWait(wait: Wait): Wait {
  return { waitMs: wait.waitMs, source: `${wait.source}${PER_ATTEMPT_SUFFIX}` };
}

const DAY_MS = 86_400_000;

/**
 * The wait until a daily limit's next reset, read on the server's clock (Date), where the provider
 * names the time of day it resets at: midnight UTC (utcOffsetMs 0), or 12:00 AM CST (6 h). A reset
 * at that very instant is a day away.
 */
export function untilDailyReset(ctx: SignalContext, utcOffsetMs: number, source: string): Wait {
  const resetMs = (Math.floor((ctx.serverNowMs - utcOffsetMs) / DAY_MS) + 1) * DAY_MS + utcOffsetMs;
  return { waitMs: waitUntil(ctx, resetMs), source };
}

/** A fixed wait given in a provider's docs, e.g. doc:fixed-60s. */
export function docWait(seconds: number): Wait {
  return { waitMs: seconds * 1000, source: `doc:fixed-${seconds}s` };
}

/** "a 1.5 s wait (retry-after)" for reasons. */
export function describeWait(wait: Wait | null): string {
  if (!wait) return "no wait given; back off";
  const s = wait.waitMs / 1000;
  return `wait ${Number.isInteger(s) ? s : s.toFixed(3).replace(/0+$/, "")} s (${wait.source})`;
}

/** A reset in ms from now as an ISO instant on the local clock, or null. */
export function resetAtFor(ctx: SignalContext, wait: Wait | null): string | null {
  return wait ? isoAfter(ctx, wait.waitMs) : null;
}

/** Lower-case error codes are compared as written; hex codes case-insensitively. */
export function sameCode(a: unknown, b: string): boolean {
  return typeof a === "string" && a.toLowerCase() === b.toLowerCase();
}

/** Picks, among several budgets, the one that binds: a spent one first, else the lowest share left. */
export function tightestBudget(budgets: (Budget | null)[]): Budget | null {
  let best: Budget | null = null;
  const share = (b: Budget): number => (b.limit && b.limit > 0 ? b.remaining / b.limit : b.remaining === 0 ? 0 : 1);
  for (const budget of budgets) {
    if (!budget) continue;
    if (best === null || share(budget) < share(best)) best = budget;
  }
  return best;
}

/**
 * Budgets reported per dimension (OpenAI requests/tokens, Anthropic requests/tokens/...): every
 * budget shown, and the wait until the last spent dimension resets (when several are spent, the
 * later reset is the one that frees the request).
 */
export function readDimensionBudgets(
  ctx: SignalContext,
  dimensions: readonly string[],
  names: (dimension: string) => { limit: string; remaining: string; reset: string },
  resetKind: ResetKind,
): { budgets: Budget[]; exhaustedReset: Wait | null } {
  const budgets: Budget[] = [];
  const exhausted: Wait[] = [];
  for (const dimension of dimensions) {
    const family = readLimitFamily(ctx, names(dimension), resetKind);
    if (!family.budget) continue;
    budgets.push(family.budget);
    if (family.budget.remaining === 0 && family.reset) exhausted.push(family.reset);
  }
  return { budgets, exhaustedReset: longestWait(...exhausted) };
}
