/**
 * Jobber. Two limiters (https://developer.getjobber.com/docs/using_jobbers_api/api_rate_limits):
 * - a request limiter (Rack::Attack): 2,500 requests per 300 s per app and account, answered 429;
 * - a GraphQL query-cost bucket (Shopify-style): 10,000 points restoring 500 points/s. A throttled
 *   query gets errors[].extensions.code "THROTTLED" and extensions.cost.{requestedQueryCost,
 *   actualQueryCost, throttleStatus.{maximumAvailable, currentlyAvailable, restoreRate}} (its HTTP
 *   status, 200, is UNCONFIRMED). The wait is (requestedQueryCost - currentlyAvailable) / restoreRate
 *   seconds; a query whose requestedQueryCost exceeds maximumAvailable "will never resolve".
 * throttleStatus comes on successes too and is the budget.
 */
import type { SignalContext } from "../context";
import { asArray, asNumber, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter } from "../signals";
import type { Budget, Interpretation } from "../types";
import { impliedWait, interpretStatus, readStandardSignals } from "./generic";
import { throttledBy } from "./_dialect-kit";

interface Cost {
  requested: number | undefined;
  maximum: number;
  available: number;
  restoreRate: number;
}

function readCost(ctx: SignalContext): Cost | null {
  const cost = field(ctx.body, "extensions", "cost");
  if (cost === undefined) return null;
  const status = field(cost, "throttleStatus");
  const maximum = asNumber(field(status, "maximumAvailable"));
  const available = asNumber(field(status, "currentlyAvailable"));
  const restoreRate = asNumber(field(status, "restoreRate"));
  if (maximum === undefined || available === undefined || restoreRate === undefined || maximum < 0 || available < 0 || restoreRate < 0) {
    ctx.ignore("extensions.cost.throttleStatus", JSON.stringify(status) ?? "undefined", "missing or non-numeric maximumAvailable/currentlyAvailable/restoreRate");
    return null;
  }
  return { requested: asNumber(field(cost, "requestedQueryCost")), maximum, available, restoreRate };
}

/** The points left; resetAt is when the bucket is full again at restoreRate points/s. */
function budgetOf(ctx: SignalContext, cost: Cost): Budget {
  const fullInMs = cost.restoreRate > 0 ? Math.ceil((Math.max(0, cost.maximum - cost.available) / cost.restoreRate) * 1000) : null;
  return {
    remaining: cost.available,
    limit: cost.maximum,
    resetAt: fullInMs === null ? null : isoAfter(ctx, fullInMs),
    source: "extensions.cost.throttleStatus",
    ...(cost.restoreRate > 0 ? { restorePerSecond: cost.restoreRate } : {}),
    ...(cost.requested !== undefined && cost.requested > 0 ? { requestUnits: cost.requested } : {}),
  };
}

function interpret(ctx: SignalContext): Interpretation {
  const signals = readStandardSignals(ctx, "auto");
  const cost = readCost(ctx);
  const budget = cost ? budgetOf(ctx, cost) : signals.budget;
  const throttledCode = asArray(field(ctx.body, "errors")).some((e) => asString(field(e, "extensions", "code")) === "THROTTLED");

  if (throttledCode) {
    if (cost && cost.requested !== undefined && cost.requested > cost.maximum) {
      // "will never resolve": the query costs more than the bucket can ever hold.
      return {
        throttled: false,
        retryable: false,
        limitType: "validation",
        minWaitMs: null,
        waitSource: null,
        scope: { code: "THROTTLED" },
        budget,
        reason: `Jobber THROTTLED: the query costs ${cost.requested} points, more than the bucket's maximum of ${cost.maximum}; it will never succeed as written, so reduce its cost.`,
      };
    }
    let waitMs: number | null = null;
    if (cost && cost.requested !== undefined && cost.restoreRate > 0) {
      // (requestedQueryCost - currentlyAvailable) / restoreRate seconds, rounded up to whole ms.
      waitMs = Math.ceil((Math.max(0, cost.requested - cost.available) / cost.restoreRate) * 1000);
    }
    const wait = signals.retryAfter ?? (waitMs === null ? null : { waitMs, source: "extensions.cost.throttleStatus" });
    return throttledBy("cost", wait, {
      scope: { code: "THROTTLED" },
      budget,
      reason: wait
        ? `Jobber THROTTLED: the query-cost bucket is short of points; retry after ${wait.waitMs} ms while it restores.`
        : "Jobber THROTTLED with no cost information; back off.",
    });
  }
  if (ctx.status === 429) {
    // The request limiter: 2,500 requests per 300 s per app and account; no wait is documented.
    const wait = impliedWait(signals);
    return throttledBy("burst", wait, {
      scope: { limiter: "requests" },
      budget,
      reason: wait
        ? `Jobber 429: the request limiter (2,500 per 300 s); retry after ${wait.waitMs} ms.`
        : "Jobber 429: the request limiter (2,500 requests per 300 s) with no wait given; back off.",
    });
  }
  const verdict = interpretStatus(ctx, { ...signals, budget });
  if (cost && verdict.limitType === "none" && ctx.status < 300) {
    return { ...verdict, reason: `${ctx.status}: not throttled; ${cost.available}/${cost.maximum} query-cost points left (restoring ${cost.restoreRate}/s).` };
  }
  return verdict;
}

export const jobber: Dialect = {
  id: "jobber",
  readsSuccesses: true,
  label: "Jobber",
  hosts: ["api.getjobber.com"],
  docs: ["https://developer.getjobber.com/docs/using_jobbers_api/api_rate_limits"],
  interpret,
};
