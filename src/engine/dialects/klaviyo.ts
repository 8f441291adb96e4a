/**
 * Klaviyo's REST API (a.klaviyo.com: the server-side /api/ and the client-side /client/ endpoints).
 * https://developers.klaviyo.com/en/docs/rate_limits_and_error_handling
 *
 * Every endpoint is "rate limited on a per-account basis" with "a fixed-window rate limiting
 * algorithm with two distinct windows: burst (1-second window) and steady (1-minute window)", and a
 * request over either gets a 429 (LIMITS_DOC). The limits are the endpoint's own, listed on its API
 * reference page (tiers XS 1/s and 15/m up to XL 350/s and 3500/m), and an OAuth app has "its own
 * rate limit quota per installed app instance (i.e., per account per app)" where private keys share
 * the account's (LIMITS_DOC). So a request's scope is its endpoint, known from its method and path
 * (ids taken out as the reference writes them), under the credential's base scope.
 *
 * "All non-rate-limited (i.e., non 429) responses" carry RateLimit-Limit, RateLimit-Remaining ("the
 * approximate number of requests remaining within a window") and RateLimit-Reset ("Number of seconds
 * remaining before current window resets"), for the steady window; they "are not returned when you
 * actually hit a HTTP 429 error", which carries a Retry-After instead (LIMITS_DOC). These are the
 * old IETF draft's fields, a delta in seconds, read as the steady window's budget with its 1-minute
 * length.
 *
 * The 429's JSON:API body says so too: errors[].code "throttled", and a detail "Request was
 * throttled. Expected available in 1 second." (THROTTLED_BODY, a 429 quoted in Klaviyo's own SDK
 * issues; the same wording with "0 seconds" and no Retry-After in THROTTLED_NO_RETRY_AFTER). That
 * count of seconds is the server's wait too and is read as one, the longer of it and Retry-After
 * winning; it is whole seconds, so a stated 0 (or anything under a second) waits the 1-second burst
 * window rather than coming straight back into it.
 *
 * Some endpoints add a daily limit beside the two windows: the Reporting API's Query Campaign Values
 * lists "burst 1/s, steady 2/m, daily 225/d" (REPORTING_DOC). Neither documented window can ask for
 * more than a minute, so a 429 whose stated wait is longer is that day's limit: a quota, not retried
 * in this run, deferred by its wait.
 *
 * Klaviyo's own SDKs retry 429, 503 and 504 (SDK_NODE, RETRY_CODES) and the Python one 524 as well,
 * the Cloudflare "a timeout occurred" that Klaviyo's edge answers with (SDK_PYTHON, _RETRY_CODES):
 * 524 is read as a transient server failure, the other 5xx as the generic dialect reads them. 401
 * and 403 are access errors and stay final, whatever the window shows (LIMITS_DOC).
 * https://developers.klaviyo.com/en/reference/query_campaign_values
 * https://github.com/klaviyo/klaviyo-api-node/issues/66
 * https://github.com/klaviyo/klaviyo-api-python/issues/15
 * https://github.com/klaviyo/klaviyo-api-node/blob/main/api/apis.ts
 * https://github.com/klaviyo/klaviyo-api-python/blob/main/klaviyo_api/wrapper.py
 */
import type { SignalContext } from "../context";
import { asArray, asNumber, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readExplicitWaits, readIetfRateLimit, readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, docWait, retryableBy, secondsWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://developers.klaviyo.com/en/docs/rate_limits_and_error_handling";
const REPORTING_DOC = "https://developers.klaviyo.com/en/reference/query_campaign_values";
const THROTTLED_BODY = "https://github.com/klaviyo/klaviyo-api-node/issues/66";
const THROTTLED_NO_RETRY_AFTER = "https://github.com/klaviyo/klaviyo-api-python/issues/15";
const SDK_NODE = "https://github.com/klaviyo/klaviyo-api-node/blob/main/api/apis.ts";
const SDK_PYTHON = "https://github.com/klaviyo/klaviyo-api-python/blob/main/klaviyo_api/wrapper.py";

/** The burst window, seconds: the shortest a spent window can take to reopen (LIMITS_DOC). */
const BURST_WINDOW_SECONDS = 1;
/** The steady window, the one the RateLimit-* fields describe (LIMITS_DOC). */
const STEADY_WINDOW_MS = 60_000;
const BODY_WAIT = "body:errors[].detail";
/** "Request was throttled. Expected available in 1 second." (THROTTLED_BODY); "56.0 seconds" in older answers. */
const EXPECTED_AVAILABLE = /expected available in (\d{1,9}(?:\.\d{1,6})?) seconds?/i;
/** Cloudflare's "A timeout occurred", retried by Klaviyo's Python SDK (SDK_PYTHON). */
const EDGE_TIMEOUT = 524;
/** The API's path roots: the server-side API and the client-side (public key) API. */
const ROOTS: ReadonlySet<string> = new Set(["api", "client"]);

/**
 * The endpoint a request counts against, as "METHOD /api/resource/{id}/relationships/related":
 * Klaviyo's JSON:API paths put an id right after the resource, then a related resource or
 * "relationships" and one (LIMITS_DOC; each operation's reference page lists its own limits).
 */
export function klaviyoEndpointOf(method: string, rawPath: string): string {
  const segments = rawPath.split("?")[0]!.split("/").filter((s) => s !== "");
  const verb = method === "HEAD" ? "GET" : method;
  // The retired v1/v2 APIs (/api/v2/list/{id}/members) and anything else keep their path as sent.
  if (segments.length < 3 || !ROOTS.has(segments[0]!) || /^v\d+$/.test(segments[1]!)) return `${verb} /${segments.join("/")}`;
  return `${verb} /${[segments[0], segments[1], "{id}", ...segments.slice(3)].join("/")}`;
}

function endpointScope(method: string, path: string): ScopeParts {
  return { endpoint: klaviyoEndpointOf(method, path) };
}

/** The steady window's budget from the RateLimit-* fields, with the window's documented length. */
function steadyWindow(ctx: SignalContext): Budget | null {
  const { budget } = readIetfRateLimit(ctx);
  return budget && { ...budget, windowMs: STEADY_WINDOW_MS };
}

/** The seconds a throttled error's detail names ("Expected available in 1 second."), or null. */
function bodyWait(ctx: SignalContext): Wait | null {
  for (const error of asArray(field(ctx.body, "errors"))) {
    const throttled = asString(field(error, "code")) === "throttled" || asNumber(field(error, "status")) === 429;
    const detail = asString(field(error, "detail"));
    if (!throttled || detail === undefined) continue;
    const match = EXPECTED_AVAILABLE.exec(detail.slice(0, 256));
    if (match) return secondsWait(ctx, Number(match[1]), BODY_WAIT);
  }
  return null;
}

/** A 429: the burst or steady window of the endpoint (retried after the wait), or a daily limit (deferred). */
function rateLimited(ctx: SignalContext): Interpretation {
  const stated = longestWait(readRetryAfter(ctx), bodyWait(ctx));
  const scope = endpointScope(ctx.method, ctx.path);
  if (stated !== null && stated.waitMs > STEADY_WINDOW_MS) {
    return throttledBy("quota", stated, {
      retryable: false,
      scope: { ...scope, limit: "daily" },
      budget: null,
      reason: `Klaviyo 429: a wait longer than the 1-minute steady window (${describeWait(stated)}) can only be the endpoint's daily limit (the Reporting API's 225 a day), so the work is deferred, not retried in this run.`,
    });
  }
  // Whole seconds: "0 seconds" means less than one, still inside the burst window.
  const wait = stated !== null && stated.waitMs < BURST_WINDOW_SECONDS * 1000 ? docWait(BURST_WINDOW_SECONDS) : stated;
  return throttledBy("burst", wait, {
    scope,
    budget: null,
    reason: `Klaviyo 429 throttled: the endpoint's burst (1 s) or steady (1 min) window for this account is spent; ${describeWait(wait)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  if (ctx.status === 429) return rateLimited(ctx);
  const retryAfter = readExplicitWaits(ctx);
  const budget = steadyWindow(ctx);
  // An answer that shows no window names no scope, as a plain success does (classify.ts quietSuccess).
  const scope = budget === null ? undefined : endpointScope(ctx.method, ctx.path);
  if (ctx.status === EDGE_TIMEOUT) {
    return retryableBy("server", retryAfter, {
      scope,
      budget,
      reason: "524: Klaviyo's edge timed out waiting for the API, a transient failure its SDK retries; retry with backoff if the request is safe to repeat.",
    });
  }
  // No reset is passed: a 401 or 403 showing a spent window is still an access error (only 429 throttles).
  return interpretStatus(ctx, { retryAfter, budget, reset: null }, scope);
}

export const klaviyo: Dialect = {
  id: "klaviyo",
  label: "Klaviyo",
  hosts: ["a.klaviyo.com"],
  docs: [LIMITS_DOC, REPORTING_DOC, THROTTLED_BODY, THROTTLED_NO_RETRY_AFTER, SDK_NODE, SDK_PYTHON],
  interpret,
  requestScope: ({ method, path }) => endpointScope(method, path),
};
