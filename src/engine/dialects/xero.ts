/**
 * Xero. Per tenant: 5 concurrent calls, 60 per minute, 5,000 per day; per app: 10,000 per minute
 * across all tenants. A breach is a 429 with Retry-After (seconds) and X-Rate-Limit-Problem naming
 * the limit hit (minute, day; concurrent is UNCONFIRMED). Every response carries
 * X-DayLimit-Remaining, X-MinLimit-Remaining and X-AppMinLimit-Remaining.
 * https://developer.xero.com/documentation/guides/oauth2/limits/ ; https://developer.xero.com/faq/limits
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { readCount, readRetryAfter } from "../signals";
import type { Budget, Interpretation, LimitType } from "../types";
import { interpretStatus } from "./generic";

const REMAINING_HEADERS = ["x-minlimit-remaining", "x-daylimit-remaining", "x-appminlimit-remaining"] as const;

/** The tightest of the three remaining counts (Xero sends no limit or reset alongside them). */
function readBudget(ctx: SignalContext): Budget | null {
  let budget: Budget | null = null;
  for (const name of REMAINING_HEADERS) {
    const remaining = readCount(ctx, name);
    if (remaining === null) continue;
    if (!budget || remaining < budget.remaining) budget = { remaining, limit: null, resetAt: null, source: name };
  }
  return budget;
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const budget = readBudget(ctx);
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget, reset: null });

  const problem = ctx.header("x-rate-limit-problem")?.trim();
  const key = problem?.toLowerCase();
  let limitType: LimitType = "burst";
  let retryable = true;
  let what = "a rate limit";
  if (key === "day" || key === "daily") {
    // The daily limit (5,000 per tenant): not retried in this run; the wait is reported for a scheduler.
    limitType = "quota";
    retryable = false;
    what = "the tenant's daily limit";
  } else if (key === "concurrent") {
    limitType = "concurrency";
    what = "the tenant's limit of 5 concurrent calls";
  } else if (key === "minute") {
    what = "the tenant's 60-calls-per-minute limit";
  } else if (key === "appminute") {
    what = "the app-wide per-minute limit across all tenants";
  }
  return {
    throttled: true,
    retryable,
    limitType,
    minWaitMs: retryAfter?.waitMs ?? null,
    waitSource: retryAfter?.source ?? null,
    scope: problem ? { problem } : {},
    budget,
    reason: retryAfter
      ? `Xero 429: ${what}${problem ? ` (X-Rate-Limit-Problem: ${problem})` : ""}; ${retryable ? "retry" : "resume"} after ${retryAfter.waitMs} ms (retry-after).`
      : `Xero 429: ${what}${problem ? ` (X-Rate-Limit-Problem: ${problem})` : ""} with no wait given; ${retryable ? "back off" : "not retried in this run"}.`,
  };
}

export const xero: Dialect = {
  id: "xero",
  label: "Xero",
  hosts: ["api.xero.com"],
  docs: ["https://developer.xero.com/documentation/guides/oauth2/limits/", "https://developer.xero.com/faq/limits"],
  interpret,
};
