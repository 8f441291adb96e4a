import { DEFAULT_MAX_SERVER_WAIT_MS, epochOfIso, isoAt } from "./time";
import type { Verdict } from "./types";

/**
 * Proactive pacing: when a response (a success too) shows the budget at or below the caller's
 * threshold, the next request should wait until enough of it has come back. Returns that time
 * (ISO 8601), or null when the budget leaves room or says nothing about when it refills.
 *
 * - A bucket that refills continuously at a known rate (Shopify and Jobber restoreRate): wait for
 *   just the units that lift the budget above the threshold, not for the whole bucket.
 * - A window with a reset instant (X-RateLimit-Reset, RateLimit t=): wait until the reset; a fixed
 *   window gives nothing back before it, so an earlier guess would only earn a 429.
 * - A rolling window with only its length (HubSpot): every request counted now has left the
 *   window after windowMs, and on average one unit comes back every windowMs/limit, so wait for
 *   the units the threshold needs at that rate.
 *
 * A pacing wait longer than maxWaitMs (default 31 days, the same cap as a server wait) is not
 * trusted and gives null: a tiny restore rate must not block a scope for years.
 */
export function budgetNotBefore(verdict: Verdict, budgetThreshold: number, nowMs: number, maxWaitMs: number = DEFAULT_MAX_SERVER_WAIT_MS): string | null {
  const budget = verdict.budget;
  if (!budget || !Number.isFinite(nowMs)) return null;
  const threshold = Number.isFinite(budgetThreshold) ? Math.max(0, budgetThreshold) : 0;
  if (!(budget.remaining <= threshold)) return null;
  const deficit = threshold + 1 - budget.remaining;
  const at = (waitMs: number): string | null => (Number.isFinite(waitMs) && waitMs >= 0 && waitMs <= maxWaitMs ? isoAt(nowMs + Math.ceil(waitMs)) : null);
  if (budget.restorePerSecond !== undefined && budget.restorePerSecond > 0) return at((deficit / budget.restorePerSecond) * 1000);
  if (budget.resetAt !== null) {
    const resetMs = epochOfIso(budget.resetAt);
    return Number.isFinite(resetMs) ? at(Math.max(0, resetMs - nowMs)) : null;
  }
  if (budget.windowMs !== undefined && budget.windowMs > 0 && budget.limit !== null && budget.limit > 0) {
    return at(Math.min(budget.windowMs, (deficit * budget.windowMs) / budget.limit));
  }
  return null;
}
