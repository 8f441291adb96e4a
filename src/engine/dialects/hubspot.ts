/**
 * HubSpot.
 * https://developers.hubspot.com/docs/api/usage-details
 * https://github.com/HubSpot/hubspot-api-nodejs (codegen/.../RetryDecorator.ts: the SDK's retry rules)
 *
 * A 429 body names the policy: TEN_SECONDLY_ROLLING (the burst window; the SDK retries after
 * 10 s x attempt) or DAILY (resets "at midnight based on your time zone setting"; the SDK does not
 * retry it). The search API says "You have reached your secondly limit." (the SDK retries after
 * 1 s x attempt). X-HubSpot-RateLimit-Interval-Milliseconds is the window LENGTH, not a reset.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readCount, readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, docWait, perAttemptWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const USAGE_DOC = "https://developers.hubspot.com/docs/api/usage-details";

/**
 * The daily limit resets "at midnight based on your time zone setting" (USAGE_DOC), a zone no answer
 * gives; the account's next midnight is at most a day away. Waiting that long is the one wait sure
 * not to meet the spent quota again. Read as no wait at all, the request gave up with nothing to
 * resume by, and the scope was not held: every job after the quota ran out called and was throttled
 * (lab probe daily-quota-300-hubspot-16-workers-posts: 100 of 400 jobs failed, 25 % of calls
 * throttled; now deferred with their not_before, and the others defer before calling).
 */
const DAILY_RESET_AT_THE_LATEST: Wait = { waitMs: 24 * 3_600_000, source: "doc:daily-reset-within-24h" };

function readBudgets(ctx: SignalContext): { burst: Budget | null; daily: Budget | null } {
  const remaining = readCount(ctx, "x-hubspot-ratelimit-remaining");
  const max = readCount(ctx, "x-hubspot-ratelimit-max");
  const dailyRemaining = readCount(ctx, "x-hubspot-ratelimit-daily-remaining");
  const daily = readCount(ctx, "x-hubspot-ratelimit-daily");
  // Interval-Milliseconds is the rolling window length (USAGE_DOC), so no reset instant is known;
  // the length still tells a pacer how fast the window gives requests back.
  const windowMs = readCount(ctx, "x-hubspot-ratelimit-interval-milliseconds");
  return {
    burst:
      remaining === null
        ? null
        : { remaining, limit: max, resetAt: null, source: "x-hubspot-ratelimit-remaining", ...(windowMs !== null && windowMs > 0 ? { windowMs } : {}) },
    daily: dailyRemaining === null ? null : { remaining: dailyRemaining, limit: daily, resetAt: null, source: "x-hubspot-ratelimit-daily-remaining" },
  };
}

function interpretHubspot(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const budgets = readBudgets(ctx);
  const policy = asString(field(ctx.body, "policyName"))?.trim().toUpperCase();
  const errorType = asString(field(ctx.body, "errorType"));
  const message = asString(field(ctx.body, "message")) ?? "";
  const dailySpent = budgets.daily?.remaining === 0;
  const budget = dailySpent || policy === "DAILY" ? (budgets.daily ?? budgets.burst) : (budgets.burst ?? budgets.daily);
  const scope: ScopeParts = policy ? { policy } : {};
  const burst = (fallback: Wait | null, what: string): Interpretation => {
    const wait = retryAfter ?? fallback;
    return throttledBy("burst", wait, {
      scope,
      budget,
      reason: `HubSpot ${what}; ${describeWait(wait)}.`,
    });
  };

  // Any policy named for a day (DAILY, and variants that carry it in their name) is the daily limit.
  if ((policy !== undefined && policy.includes("DAILY")) || (ctx.status === 429 && !policy && dailySpent)) {
    return throttledBy("quota", DAILY_RESET_AT_THE_LATEST, {
      retryable: false,
      scope: { policy: "DAILY" },
      budget,
      reason:
        "HubSpot daily API limit reached (DAILY); it resets at midnight in the account's time zone setting, which the response does not give, so the work waits for the latest that midnight can be, 24 h from now, and is not retried in this run.",
    });
  }
  // The official client waits 10 s x attempt for TEN_SECONDLY_ROLLING when no header says otherwise.
  // A rolling window gives back every unit it counted within its own length, so an interval shorter
  // than the documented 10 s is the wait, growing per attempt as the SDK's does (a 1 s window of 20
  // waited 10 s per throttle: 5.5 x ideal, 1.1 x so). The documented 10 s stays fixed: per attempt,
  // eight executions POSTing into a 10 s window (the suite's HubSpot writes) took 1.08 -> 1.19 x.
  const intervalMs = budgets.burst?.windowMs;
  if (policy === "TEN_SECONDLY_ROLLING" && intervalMs !== undefined && intervalMs < 10_000) {
    return burst(perAttemptWait({ waitMs: intervalMs, source: "x-hubspot-ratelimit-interval-milliseconds" }), `rolling limit of ${intervalMs} ms (TEN_SECONDLY_ROLLING)`);
  }
  if (policy === "TEN_SECONDLY_ROLLING") return burst(docWait(10), "10-second rolling limit (TEN_SECONDLY_ROLLING)");
  // policyName "SECONDLY" is not named in USAGE_DOC (seen in the wild, not confirmed); read it as a one-second window.
  if (policy === "SECONDLY") return burst(docWait(1), "per-second limit (SECONDLY)");
  // Search endpoints: the SDK matches this exact message and waits 1 s x attempt.
  if (message.includes("You have reached your secondly limit.")) return burst(docWait(1), "search API per-second limit");
  if (ctx.status === 429 || errorType === "RATE_LIMIT") {
    return burst(null, `rate limit (${ctx.status}${policy ? ` ${policy}` : ""})`);
  }
  return interpretStatus(ctx, { retryAfter, budget, reset: null }, scope);
}

export const hubspot: Dialect = {
  id: "hubspot",
  label: "HubSpot",
  hosts: ["api.hubapi.com", "api.hubspot.com", "api-eu1.hubapi.com"],
  docs: [USAGE_DOC],
  interpret: interpretHubspot,
};
