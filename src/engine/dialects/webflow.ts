/**
 * Webflow's Data API (api.webflow.com/v2, and the retired /v1 paths). The limit is requests per
 * minute, set by the site's plan (Starter and Basic 60, CMS, eCommerce and Business 120,
 * Enterprise custom) and "applied on a per API key basis": "each API key is subject to its own
 * rate limit, independent of any other keys you may be using". Answers carry X-RateLimit-Limit
 * ("your current overall rate limit per minute") and X-RateLimit-Remaining ("the number of
 * available requests remaining in the current minute"); no reset instant is documented. Over the
 * limit, a 429 whose Retry-After tells "how long to wait before attempting new requests—typically,
 * this reset time is 60 seconds" (RATE_DOC); its body is {"code": "too_many_requests", ...}
 * (ERRORS_DOC). Webflow's own SDK retries 408, 429 and 5xx, after Retry-After where it is given
 * (SDK_SOURCE, requestWithRetries).
 * https://developers.webflow.com/data/reference/rate-limits
 * https://developers.webflow.com/data/v2.0.0/reference/error-handling
 * https://github.com/webflow/js-webflow-api/blob/master/src/core/fetcher/requestWithRetries.ts
 *
 * So the headers are the key's budget for its minute (windowMs, no reset instant), and a 429 waits
 * its Retry-After, or the minute where none is sent (doc:fixed-60s). The minute is a burst window,
 * retried in this run.
 *
 * "Site Publish operations are limited to one successful publish per minute" (RATE_DOC; "one
 * successful publish queue per minute", PUBLISH_DOC), beside the key's limit. A publish request
 * (POST /v2/sites/{site_id}/publish, and /beta/ and /v1 forms of it) is a scope of its own, known
 * from the path, so that a spent publish minute holds back publishes only. A publish 429 whose
 * X-RateLimit-Remaining shows requests left is that limit; one showing none, or no count, may be
 * the key's and holds every call of the key.
 * https://developers.webflow.com/data/reference/sites/publish
 *
 * api-cdn.webflow.com serves cached copies of the live-item reads; "for cached requests to the
 * content delivery API, there are effectively no rate limits. However, uncached requests to the
 * origin server count against your plan's rate limits" (RATE_DOC, CDN_DOC): its answers are read
 * the same way. 401 (not_authorized) and 403 (forbidden, missing scopes) are access errors and stay
 * final (ERRORS_DOC, interpretStatus); 500 (internal_error) is read as the generic dialect reads it.
 * https://developers.webflow.com/data/docs/cms-content-delivery
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { readLimitFamily, readRetryAfter } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://developers.webflow.com/data/reference/rate-limits";
const ERRORS_DOC = "https://developers.webflow.com/data/v2.0.0/reference/error-handling";
const PUBLISH_DOC = "https://developers.webflow.com/data/reference/sites/publish";
const CDN_DOC = "https://developers.webflow.com/data/docs/cms-content-delivery";
const SDK_SOURCE = "https://github.com/webflow/js-webflow-api/blob/master/src/core/fetcher/requestWithRetries.ts";

const NAMES = { limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining" };
/** Limits are "Request Per Minute", and a 429's reset "typically" 60 s (RATE_DOC). */
const WINDOW_SECONDS = 60;
/** Publish Site: POST /v2/sites/{site_id}/publish (PUBLISH_DOC), its beta twin and API v1's /sites/{site_id}/publish. */
const PUBLISH_PATH = /^(?:\/v2|\/beta)?\/sites\/[^/]+\/publish\/?$/;
const PUBLISH: ScopeParts = { endpoint: "site-publish" };
const NO_PARTS: ScopeParts = {};

function isPublish(method: string, path: string): boolean {
  return method === "POST" && PUBLISH_PATH.test(path.split("?")[0]!);
}

/** A publish is its own scope (one per minute, beside the key's limit); every other call is the key's. */
function requestParts(method: string, path: string): ScopeParts {
  return isPublish(method, path) ? PUBLISH : NO_PARTS;
}

function readBudget(ctx: SignalContext): Budget | null {
  const budget = readLimitFamily(ctx, NAMES, "delta-seconds").budget;
  return budget && { ...budget, windowMs: WINDOW_SECONDS * 1000 };
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const budget = readBudget(ctx);
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget, reset: null });
  const wait = retryAfter ?? docWait(WINDOW_SECONDS);
  // Requests left in the key's minute: the 429 is the publish endpoint's own limit, not the key's.
  const publishLimit = isPublish(ctx.method, ctx.path) && budget !== null && budget.remaining > 0;
  if (publishLimit) {
    return throttledBy("burst", wait, {
      scope: PUBLISH,
      budget,
      reason: `Webflow 429 on Publish Site with ${budget.remaining} requests left in the key's minute: the one successful publish per minute is spent; ${describeWait(wait)}.`,
    });
  }
  const shown = budget ? ` (${budget.remaining}${budget.limit === null ? "" : ` of ${budget.limit}`} left)` : "";
  return throttledBy("burst", wait, {
    scope: NO_PARTS,
    budget,
    reason: `Webflow 429: the API key's requests for this minute are spent${shown}; ${describeWait(wait)}.`,
  });
}

export const webflow: Dialect = {
  id: "webflow",
  label: "Webflow Data API",
  hosts: ["api.webflow.com", "api-cdn.webflow.com"],
  docs: [RATE_DOC, ERRORS_DOC, PUBLISH_DOC, CDN_DOC, SDK_SOURCE],
  interpret,
  requestScope: ({ method, path }) => requestParts(method, path),
};
