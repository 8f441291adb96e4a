/**
 * Contentful's REST APIs: the Content Delivery API (cdn.contentful.com), the Content Management API
 * (api.contentful.com, and upload.contentful.com for its uploads), the Content Preview API
 * (preview.contentful.com), the GraphQL Content API (graphql.contentful.com), and their EU
 * data-residency hosts (cdn.eu., api.eu., preview.eu., graphql.eu., upload.eu.).
 * https://www.contentful.com/developers/docs/references/content-management-api/#/introduction/api-rate-limits
 * https://www.contentful.com/developers/docs/references/content-delivery-api/#/introduction/api-rate-limits
 * https://www.contentful.com/developers/api-changes/content-delivery-api-and-graphql-api-response-header/
 * https://www.contentful.com/developers/docs/references/errors/
 *
 * "Every request counts against a per second rate limit" (CMA_DOC: 7 per second by default, more by
 * plan; the CDA's requests that hit its CDN cache count against none, CDA_DOC). The CMA's answers
 * carry X-Contentful-RateLimit-Second-Limit, X-Contentful-RateLimit-Second-Remaining ("the remaining
 * amount of requests which can be made until the next secondly reset") and
 * X-Contentful-RateLimit-Reset, "the number of seconds until the next request can be made": delta
 * seconds, 0 while requests are allowed (CMA_DOC, Example 1). The CDA and GraphQL send the second's
 * limit on 200 and 429, and the reset on a 429 (CDA_HEADER_CHANGE). Over a limit, "the API responds
 * with the 429 Too Many Requests HTTP status code and sets the value X-Contentful-RateLimit-Reset
 * header to an integer specifying the time before the limit resets and another request will be
 * accepted"; per second it is 1, "which means the next second" (CMA_DOC). Contentful's own SDKs wait
 * that many seconds and retry (contentful-sdk-core src/rate-limit.ts, SDK_SOURCE), so does this.
 * https://github.com/contentful/contentful-sdk-core/blob/master/src/rate-limit.ts
 *
 * An hourly limit is counted too: CMA_DOC's Example 3, four 15-minute buckets of 9000 requests, is
 * answered "429, X-Contentful-RateLimit-Reset: 900 ... wait 15 minutes". Its counts,
 * X-Contentful-RateLimit-Hour-Limit and X-Contentful-RateLimit-Hour-Remaining, are not in the docs'
 * table: they are known only from public client code (contentful-management.java's RateLimits and
 * CMAHttpException read them, HOUR_SOURCE) and from CMA answers recorded in client test fixtures
 * (Hour-Limit 36000). So a 429 whose hour is spent (its count 0, or a reset longer than the
 * second's 1 s) is the hour's: still a rate window, the types' "burst" kind (like GitHub's hourly
 * budget), waited to the reset as the SDKs do (a wait past the client's inline limit is deferred by
 * plan()), in a scope of its own so that the held hour does not read as the second's window. The
 * reset decides the wait; where a 429 has none, the next second.
 * https://github.com/contentful/contentful-management.java/blob/master/src/main/java/com/contentful/java/cma/model/RateLimits.java
 *
 * The CMA's limits are the organization's: "All requests to environments in a space count against
 * the organizations rate limits bucket" (CMA_DOC), and the CDA's are configured "for your space"
 * (CDA_HEADER_CHANGE). Neither is known from a request, so the client's scope (host and credential)
 * stands for it.
 *
 * ERRORS_DOC: 401 AccessTokenInvalid and 403 AccessDenied are access errors, final; 502 Hibernated,
 * "the space has not been accessed for a long time ... This error should resolve on its own in a few
 * moments, once the space has been successfully awakened": a server failure worth retrying with
 * backoff, as the SDK retries every 5xx (SDK_SOURCE). Other statuses as the generic dialect reads them.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, longestWait, readCount, readExplicitWaits, readReset } from "../signals";
import type { Budget, Interpretation } from "../types";
import { describeWait, docWait, retryableBy, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const CMA_DOC = "https://www.contentful.com/developers/docs/references/content-management-api/#/introduction/api-rate-limits";
const CDA_DOC = "https://www.contentful.com/developers/docs/references/content-delivery-api/#/introduction/api-rate-limits";
const CDA_HEADER_CHANGE = "https://www.contentful.com/developers/api-changes/content-delivery-api-and-graphql-api-response-header/";
const ERRORS_DOC = "https://www.contentful.com/developers/docs/references/errors/";
const SDK_SOURCE = "https://github.com/contentful/contentful-sdk-core/blob/master/src/rate-limit.ts";
const HOUR_SOURCE = "https://github.com/contentful/contentful-management.java/blob/master/src/main/java/com/contentful/java/cma/model/RateLimits.java";

const RESET = "x-contentful-ratelimit-reset";
const SECOND_LIMIT = "x-contentful-ratelimit-second-limit";
const SECOND_REMAINING = "x-contentful-ratelimit-second-remaining";
const HOUR_LIMIT = "x-contentful-ratelimit-hour-limit";
const HOUR_REMAINING = "x-contentful-ratelimit-hour-remaining";
/** A per-second limit's 429 resets in 1 s, "the next second" (CMA_DOC). */
const SECOND_MS = 1000;

interface Budgets {
  second: Budget | null;
  hour: Budget | null;
}

function readBudgets(ctx: SignalContext): Budgets {
  const second = readCount(ctx, SECOND_REMAINING);
  const hour = readCount(ctx, HOUR_REMAINING);
  return {
    second: second === null ? null : { remaining: second, limit: readCount(ctx, SECOND_LIMIT), resetAt: null, source: SECOND_REMAINING, windowMs: SECOND_MS },
    // Four 15-minute buckets (CMA_DOC, Example 3): a rolling hour with no reset instant of its own.
    hour: hour === null ? null : { remaining: hour, limit: readCount(ctx, HOUR_LIMIT), resetAt: null, source: HOUR_REMAINING },
  };
}

function rateLimited(ctx: SignalContext, budgets: Budgets): Interpretation {
  // Read on the 429 only: on a success the reset is 0, "more requests are allowed" (CMA_DOC). A 429
  // waits at least the second it was refused in, whatever reset it shows (a 0 would retry at once).
  const reset = readReset(ctx, RESET, "delta-seconds");
  const wait = longestWait(reset, readExplicitWaits(ctx), docWait(1)) ?? docWait(1);
  const hourSpent = budgets.hour?.remaining === 0 || (reset !== null && reset.waitMs > SECOND_MS);
  if (hourSpent) {
    // The reset is when the hour's buckets let a request through again (CMA_DOC, Example 3).
    const hour: Budget = { ...(budgets.hour ?? { limit: null, source: RESET }), remaining: 0, resetAt: isoAfter(ctx, wait.waitMs) };
    return throttledBy("burst", wait, {
      scope: { limit: "hour" },
      budget: hour,
      reason: `Contentful 429: the hourly rate limit is spent (its 15-minute buckets free as they age out); ${describeWait(wait)}.`,
    });
  }
  return throttledBy("burst", wait, {
    scope: {},
    budget: budgets.second,
    reason: `Contentful 429: the per-second rate limit is spent; ${describeWait(wait)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const budgets = readBudgets(ctx);
  const errorId = asString(field(ctx.body, "sys", "id"));
  if (ctx.status === 429 || errorId === "RateLimitExceeded") return rateLimited(ctx, budgets);
  const retryAfter = readExplicitWaits(ctx);
  if (ctx.status === 502 && errorId === "Hibernated") {
    return retryableBy("server", retryAfter, {
      budget: null,
      reason: `Contentful 502 Hibernated: the space is being woken from hibernation and the error "should resolve on its own in a few moments"; retry with backoff (${describeWait(retryAfter)}).`,
    });
  }
  // The hour is shown once it is spent (nothing passes until its buckets age out); else the second paces.
  const budget = budgets.hour?.remaining === 0 ? budgets.hour : (budgets.second ?? budgets.hour);
  return interpretStatus(ctx, { retryAfter, budget, reset: null });
}

export const contentful: Dialect = {
  id: "contentful",
  label: "Contentful",
  hosts: [
    "cdn.contentful.com",
    "api.contentful.com",
    "preview.contentful.com",
    "graphql.contentful.com",
    "upload.contentful.com",
    "cdn.eu.contentful.com",
    "api.eu.contentful.com",
    "preview.eu.contentful.com",
    "graphql.eu.contentful.com",
    "upload.eu.contentful.com",
  ],
  docs: [CMA_DOC, CDA_DOC, CDA_HEADER_CHANGE, ERRORS_DOC, SDK_SOURCE, HOUR_SOURCE],
  interpret,
};
