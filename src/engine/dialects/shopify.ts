/**
 * Shopify REST and GraphQL Admin.
 * https://shopify.dev/docs/api/usage/limits
 * https://shopify.dev/docs/api/admin-rest/usage/rate-limits
 * https://shopify.dev/docs/api/admin-graphql
 *
 * REST: a leaky bucket per app and store; a 429 carries Retry-After in decimal seconds ("2.0",
 * not RFC 9110-valid, read and recorded as a deviation) and X-Shopify-Shop-Api-Call-Limit is
 * used/limit. GraphQL: a calculated-cost bucket; a throttled query answers 200 with
 * errors[].extensions.code THROTTLED and extensions.cost.throttleStatus.
 */
import type { SignalContext } from "../context";
import { asArray, asNumber, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, parseUsedOfLimit, readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { budgetFromUsed, describeWait, longestWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://shopify.dev/docs/api/usage/limits";
const REST_DOC = "https://shopify.dev/docs/api/admin-rest/usage/rate-limits";

interface CostInfo {
  requested: number | undefined;
  available: number | undefined;
  maximum: number | undefined;
  restoreRate: number | undefined;
}

function readCost(body: unknown): CostInfo | null {
  const cost = field(body, "extensions", "cost");
  if (cost === undefined || cost === null || typeof cost !== "object") return null;
  return {
    requested: asNumber(field(cost, "requestedQueryCost")),
    available: asNumber(field(cost, "throttleStatus", "currentlyAvailable")),
    maximum: asNumber(field(cost, "throttleStatus", "maximumAvailable")),
    restoreRate: asNumber(field(cost, "throttleStatus", "restoreRate")),
  };
}

/** restoreRate is points per second (LIMITS_DOC); the bucket is full again after (max - available) / rate s. */
function costBudget(ctx: SignalContext, cost: CostInfo | null): Budget | null {
  if (!cost || cost.available === undefined) return null;
  const refillMs =
    cost.maximum !== undefined && cost.restoreRate !== undefined && cost.restoreRate > 0
      ? Math.ceil((Math.max(0, cost.maximum - cost.available) / cost.restoreRate) * 1000)
      : null;
  return {
    remaining: cost.available,
    limit: cost.maximum ?? null,
    resetAt: refillMs === null || !Number.isSafeInteger(refillMs) ? null : isoAfter(ctx, refillMs),
    source: "extensions.cost",
    ...(cost.restoreRate !== undefined && cost.restoreRate > 0 ? { restorePerSecond: cost.restoreRate } : {}),
    // What the query asked for is what the next similar query will take (LIMITS_DOC: the
    // requested cost is deducted up front, the difference to the actual cost refunded after).
    ...(cost.requested !== undefined && cost.requested > 0 ? { requestUnits: cost.requested } : {}),
  };
}

function callLimitBudget(ctx: SignalContext): Budget | null {
  const raw = ctx.header("x-shopify-shop-api-call-limit");
  if (raw === undefined) return null;
  const parsed = parseUsedOfLimit(raw);
  if (!parsed) {
    ctx.ignore("x-shopify-shop-api-call-limit", raw, "not used/limit");
    return null;
  }
  // used/limit of the leaky bucket (REST_DOC); it drains continuously, so no reset instant is shown.
  // The leak rate is not sent. REST_DOC gives 2/s for the standard 40-request bucket, and the
  // larger plans' buckets grow with their rates (4/s, 20/s), so limit / 20 per second is used: an
  // estimate for pacing only: the governor shortens it where the count comes back faster (a custom
  // app's or a plan's faster rate), and a 429's Retry-After still sets the floor if it is too fast.
  // No plan's bucket leaks slower than the Standard plan's 2 per s (REST_DOC), so a bucket shown
  // smaller than 40 (a proxy's or another API's count behind the same header) starts at that rate.
  return { ...budgetFromUsed(parsed.used, parsed.limit, "x-shopify-shop-api-call-limit"), restorePerSecond: parsed.limit / 20, restoreEstimated: true, restoreFloorPerSecond: 2 };
}

/** A GraphQL query THROTTLED by the cost bucket: its wait from the cost extension, or never if it is larger than the bucket. */
function graphqlThrottled(base: { scope: ScopeParts; budget: Budget | null }, cost: CostInfo | null, retryAfter: Wait | null): Interpretation {
  if (cost?.requested !== undefined && cost.maximum !== undefined && cost.requested > cost.maximum) {
    // A query that costs more than the whole bucket can never be admitted: no wait restores more than maximumAvailable (LIMITS_DOC).
    return {
      ...base,
      throttled: true,
      retryable: false,
      limitType: "validation",
      minWaitMs: null,
      waitSource: null,
      reason: `THROTTLED, but the query costs ${cost.requested} points and the bucket holds at most ${cost.maximum}; waiting will never be enough.`,
    };
  }
  // Wait = (requestedQueryCost - currentlyAvailable) / restoreRate seconds (LIMITS_DOC).
  let costWait: Wait | null = null;
  if (cost && cost.requested !== undefined && cost.available !== undefined && cost.restoreRate !== undefined && cost.restoreRate > 0) {
    const waitMs = Math.ceil((Math.max(0, cost.requested - cost.available) / cost.restoreRate) * 1000);
    if (Number.isSafeInteger(waitMs)) costWait = { waitMs, source: "extensions.cost" };
  }
  const wait = longestWait(retryAfter, costWait);
  return {
    ...base,
    throttled: true,
    retryable: true,
    limitType: "cost",
    // The requested cost is computed by static analysis before the query runs, and a THROTTLED
    // response rejects the whole operation at that point (LIMITS_DOC, "calculated query cost"):
    // a throttled mutation was not executed, so repeating it cannot duplicate the write.
    writeNotProcessed: true,
    minWaitMs: wait?.waitMs ?? null,
    waitSource: wait?.source ?? null,
    reason: cost
      ? `GraphQL cost limit (THROTTLED): ${cost.requested ?? "?"} points requested, ${cost.available ?? "?"} available, restoring ${cost.restoreRate ?? "?"}/s; ${describeWait(wait)}.`
      : `GraphQL cost limit (THROTTLED) with no cost extension; ${describeWait(wait)}.`,
  };
}

function interpretShopify(ctx: SignalContext): Interpretation {
  const isGraphql = /\/graphql(?:\.json)?\/?$/.test(ctx.path);
  const scope: ScopeParts = ctx.host ? { store: ctx.host, api: isGraphql ? "graphql" : "rest" } : { api: isGraphql ? "graphql" : "rest" };
  const retryAfter = readRetryAfter(ctx);
  const cost = readCost(ctx.body);
  const budget = costBudget(ctx, cost) ?? callLimitBudget(ctx);
  const errors = asArray(field(ctx.body, "errors"));
  const codes = errors.map((e) => asString(field(e, "extensions", "code")));
  const base = { scope, budget };

  // A single query over the 1,000-point maximum can never run (LIMITS_DOC, "Maximum single query cost").
  if (codes.includes("MAX_COST_EXCEEDED")) {
    const over = errors.find((e) => field(e, "extensions", "code") === "MAX_COST_EXCEEDED");
    const queryCost = asNumber(field(over, "extensions", "cost")) ?? cost?.requested;
    const maxCost = asNumber(field(over, "extensions", "maxCost"));
    return {
      ...base,
      throttled: false,
      retryable: false,
      limitType: "validation",
      minWaitMs: null,
      waitSource: null,
      reason: `The query costs ${queryCost ?? "more"} points, over the single-query maximum${maxCost === undefined ? "" : ` of ${maxCost}`} (MAX_COST_EXCEEDED); it can never succeed as written.`,
    };
  }
  if (codes.includes("THROTTLED")) return graphqlThrottled(base, cost, retryAfter);
  if (ctx.status === 429) {
    // REST_DOC: 429 with Retry-After (decimal seconds, e.g. "2.0").
    return throttledBy("burst", retryAfter, {
      ...base,
      reason: `Shopify request bucket full for this app and store (429); ${describeWait(retryAfter)}.`,
    });
  }
  if (ctx.status === 423) {
    // REST_DOC: 423 Locked "shop unavailable" can follow repeated abuse; it is not retryable.
    return {
      ...base,
      throttled: false,
      retryable: false,
      limitType: "permission",
      minWaitMs: null,
      waitSource: null,
      reason: "423 Locked: the shop is unavailable (locked, possibly after repeated abuse); retrying will not help.",
    };
  }
  const generic = interpretStatus(ctx, { retryAfter, budget, reset: null });
  if (budget?.source === "extensions.cost" && generic.limitType === "none" && ctx.status < 300) {
    return { ...generic, scope, reason: `${ctx.status}: not throttled; ${budget.remaining}/${budget.limit ?? "?"} query-cost points available.` };
  }
  return { ...generic, scope };
}

export const shopify: Dialect = {
  id: "shopify",
  readsSuccesses: true,
  label: "Shopify REST and GraphQL Admin",
  hosts: [".myshopify.com"],
  docs: [LIMITS_DOC, REST_DOC],
  interpret: interpretShopify,
};
