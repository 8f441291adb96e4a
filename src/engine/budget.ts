import type { Verdict } from "./types";

/**
 * Proactive pacing: when a response (a success too) shows the budget spent or at the caller's
 * threshold, the next request should not go out before the reset. Returns that time (ISO 8601)
 * or null when the budget leaves room or shows no reset.
 */
export function budgetNotBefore(verdict: Verdict, budgetThreshold: number): string | null {
  const budget = verdict.budget;
  if (!budget || budget.resetAt === null) return null;
  return budget.remaining <= Math.max(0, budgetThreshold) ? budget.resetAt : null;
}
