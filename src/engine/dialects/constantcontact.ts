/**
 * Constant Contact's V3 API (https://api.cc.email/v3/..., OVERVIEW_DOC). "You can use your API key to
 * send up to 10,000 requests per day and 4 requests per second. The request limit resets each day at
 * UTC 00:00:00" (LIMITS_DOC): both limits are the API key's (the application's), shared by every
 * account and access token it serves. "All requests that exceed a rate limit return a 429 'Too Many
 * Requests' error code", told apart only by the body's error_key (LIMITS_DOC):
 * - {"error_key": "quota_exceeded", "error_message": "Limit Exceeded"}: the 10,000 a day are spent;
 * - {"error_key": "throttled", "error_message": "Too Many Requests"}: over 4 per second.
 * No rate-limit header is documented, nor Retry-After (one is read all the same, as RFC 9110 has it:
 * a server's wait is a floor). Errors come as a JSON array of {error_key, error_message}
 * (RESPONSES_DOC, the OpenAPI's APIErrorSchema), LIMITS_DOC shows a bare object: both are read.
 * https://developer.constantcontact.com/api_guide/rate_limits.html
 * https://developer.constantcontact.com/api_guide/glossary_responses.html
 * https://developer.constantcontact.com/api_guide/v3_technical_overview.html
 *
 * So quota_exceeded is a quota: every call until midnight UTC would be refused too, so it is not
 * retried in this run but deferred to that reset (read on the server's clock), and it holds back the
 * whole API. throttled is the per-second burst: the second is its wait (doc:fixed-1s), and it too
 * spans the whole API. A 429 naming neither key (the OpenAPI's "You exceeded the request rate limit"
 * on some endpoints, whose own limits LIMITS_DOC mentions but does not give) backs off, with no wait
 * named. 401 (an invalid or expired token) and 403 (missing scopes or privileges, a deactivated
 * application) are access errors and stay final; 500 and 503 ("Our internal service is temporarily
 * unavailable") are transient and retried with backoff (interpretStatus).
 *
 * The bulk activity endpoints (POST /v3/activities/...) create background jobs placed in a queue
 * (BULK_DOC); Constant Contact's OpenAPI gives them one more 429: "Too many requests. You exceeded
 * 1,000 queued activities for this user account" (SPEC; its error_key is not documented, so the
 * message is what is read). No rate is spent: a place frees when a queued activity finishes, so it is
 * read as a limit on work in flight (concurrency) of the activities only, with no wait named (backoff),
 * and the request's scope tells activity creations from the rest so that a full queue holds back no
 * other call.
 * https://developer.constantcontact.com/api_guide/bulk_activities.html
 * https://github.com/constantcontact/constant-contact-v3api-client-csharp/blob/main/api/openapi.yaml
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, readRetryAfter, type Wait } from "../signals";
import type { Interpretation, ScopeParts } from "../types";
import { describeWait, docWait, longestWait, sameCode, throttledBy, untilDailyReset } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://developer.constantcontact.com/api_guide/rate_limits.html";
const RESPONSES_DOC = "https://developer.constantcontact.com/api_guide/glossary_responses.html";
const OVERVIEW_DOC = "https://developer.constantcontact.com/api_guide/v3_technical_overview.html";
const BULK_DOC = "https://developer.constantcontact.com/api_guide/bulk_activities.html";
const SPEC = "https://github.com/constantcontact/constant-contact-v3api-client-csharp/blob/main/api/openapi.yaml";

const QUOTA_KEY = "quota_exceeded";
const THROTTLED_KEY = "throttled";
const KEY_SOURCE = "body:error_key";
/** "4 requests per second" (LIMITS_DOC): the window a throttled request waits out. */
const SECOND = 1;
/** "You exceeded 1,000 queued activities for this user account" (SPEC). */
const QUEUE_FULL = /queued activit/i;
/** The endpoints that create activities: POST /v3/activities/{kind} (SPEC, BULK_DOC). */
const ACTIVITY_CREATION = /^\/v3\/activities\/[^/]+\/?$/;

interface ApiError {
  key: string | undefined;
  message: string | undefined;
}

/** The body's errors: an array of {error_key, error_message} (RESPONSES_DOC), or one such object (LIMITS_DOC). */
function errorsOf(ctx: SignalContext): ApiError[] {
  const items = Array.isArray(ctx.body) ? ctx.body : [ctx.body];
  return items.map((item) => ({ key: asString(field(item, "error_key"))?.trim(), message: asString(field(item, "error_message")) }));
}

function endpointScope(method: string, path: string): ScopeParts {
  return { endpoint: method === "POST" && ACTIVITY_CREATION.test(path) ? "activities" : "api" };
}

/** The 10,000 requests a day are spent: deferred to midnight UTC, when they reset (LIMITS_DOC). */
function dailyQuota(ctx: SignalContext, retryAfter: Wait | null): Interpretation {
  const wait = longestWait(retryAfter, untilDailyReset(ctx, 0, "doc:daily-reset-midnight-utc"));
  return throttledBy("quota", wait, {
    retryable: false,
    scope: { limit: "daily" },
    // The limit is 10,000 for a standard key, more for a partner's: the answer does not say which.
    budget: { remaining: 0, limit: null, resetAt: wait ? isoAfter(ctx, wait.waitMs) : null, source: KEY_SOURCE },
    reason: `Constant Contact 429 ${QUOTA_KEY}: the API key's requests for the day are spent; they reset at 00:00 UTC, so the work waits for that (${describeWait(wait)}) and is not retried in this run.`,
  });
}

function rateLimited(ctx: SignalContext, retryAfter: Wait | null): Interpretation {
  const errors = errorsOf(ctx);
  if (errors.some((e) => sameCode(e.key, QUOTA_KEY))) return dailyQuota(ctx, retryAfter);
  if (errors.some((e) => sameCode(e.key, THROTTLED_KEY))) {
    const wait = longestWait(retryAfter, docWait(SECOND));
    return throttledBy("burst", wait, {
      scope: { limit: "per-second" },
      budget: null,
      reason: `Constant Contact 429 ${THROTTLED_KEY}: the API key's 4 requests per second are spent; ${describeWait(wait)}.`,
    });
  }
  if (errors.some((e) => e.message !== undefined && QUEUE_FULL.test(e.message)) || QUEUE_FULL.test(ctx.bodyText.slice(0, 2048))) {
    return throttledBy("concurrency", retryAfter, {
      scope: { endpoint: "activities" },
      budget: null,
      reason: `Constant Contact 429: the account's 1,000 queued bulk activities are reached; a place frees when one finishes, so only activity creations wait; ${describeWait(retryAfter)}.`,
    });
  }
  const key = errors.find((e) => e.key !== undefined)?.key;
  return throttledBy("burst", retryAfter, {
    scope: endpointScope(ctx.method, ctx.path),
    budget: null,
    reason: `Constant Contact 429${key ? ` ${key}` : ""}: a rate limit the body does not name (neither the day's nor the second's); ${describeWait(retryAfter)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  if (ctx.status === 429) return rateLimited(ctx, retryAfter);
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
}

export const constantContact: Dialect = {
  id: "constantcontact",
  label: "Constant Contact V3",
  hosts: ["api.cc.email"],
  docs: [LIMITS_DOC, RESPONSES_DOC, OVERVIEW_DOC, BULK_DOC, SPEC],
  interpret,
  requestScope: ({ method, path }) => endpointScope(method, path),
};
