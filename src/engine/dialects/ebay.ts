/**
 * eBay's RESTful APIs (api.ebay.com, and api.sandbox.ebay.com for the Sandbox). eBay limits "the
 * total calls and the rate at which the calls can be made", per API and per application (some per
 * user), and its default limits are calls per day: Browse 5,000 a day, Account 25,000, Analytics
 * 5,000 and so on (LIMITS_DOC, SELL_LIMITS_DOC); the OAuth token endpoint has its own per-day
 * limits by grant type (OAUTH_DOC). "Each application can make a set number of requests to any one
 * resource for an eBay-specified time window", and the Analytics API's getRateLimits reports, per
 * resource, limit, remaining, reset ("The date and time the limit and remaining values are reset")
 * and timeWindow ("expressed in seconds"): its documented example is a limit of 5000, timeWindow
 * 86400, reset "2018-08-06T07:00:00.000Z", that is midnight Pacific (daylight) time (ANALYTICS_DOC,
 * ANALYTICS_SPEC). The legacy rules say the same of the day: "The day starts at midnight, 00:00:00
 * PST (not GMT)" (ACCESS_RULES_DOC).
 * https://developer.ebay.com/develop/get-started/api-call-limits
 * https://developer.ebay.com/develop/api/sell/api_call_limits
 * https://developer.ebay.com/api-docs/static/oauth-rate-limits.html
 * https://developer.ebay.com/api-docs/developer/analytics/overview.html
 * https://developer.ebay.com/api-docs/master/developer/analytics/openapi/2/developer_analytics_v1_beta_oas2.json
 * https://metacpan.org/pod/eBay::API::XML::DataType::ApiAccessRuleType
 *
 * Over a resource's limit, the common error for every REST API: HTTP 429, errors[] with errorId
 * 2001, domain ACCESS, category REQUEST, "Too many requests" / "The request limit has been reached
 * for the resource." (ERRORS_DOC: the common errors' "HTTP 429: Too Many Requests" table, and the
 * ErrorType every REST API's errors[] uses; the long message as live answers quoted in public
 * client code show it). The answer names no reset (no header documented; getRateLimits is a separate call), so a spent call limit is a
 * quota: not retried in this run, deferred to the next midnight Pacific time on the server's clock,
 * observing daylight saving time as the documented reset instant does. A Retry-After, if one is
 * sent, is still a floor (classify's wait floor).
 * https://developer.ebay.com/develop/api/sell/error_codes
 *
 * The scope is the API a path names (/buy/browse/v1/... is buy.browse, /sell/inventory/v1/... is
 * sell.inventory; /identity/v1/oauth2/token is identity): the limits are set per API, so one API's
 * spent day does not hold back the others. A 429 without errorId 2001 names no daily limit and is
 * read as a short-window throttle, after its Retry-After or with backoff. 401 (an invalid or missing access
 * token) and 403 (access denied, insufficient permissions) are
 * access errors and stay final (interpretStatus), as do 400s. A 5xx is eBay's side ("System"
 * errors: "An application can retry the request as-is a reasonable number of times (eBay recommends
 * twice)", SYSTEM_ERRORS_DOC): retryable with backoff, as the generic reading has it.
 * https://developer.ebay.com/devzone/merchandising/docs/CallRef/types/ErrorCategory.html
 *
 * Not read: getRateLimits' body (it reports every resource's quota, none of which is the budget of
 * that answer itself), and the legacy Trading API's XML errors on HTTP 200 (their call-limit codes
 * were not found in the stored docs).
 */
import type { SignalContext } from "../context";
import { asArray, asNumber, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, throttledBy, untilDailyReset } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://developer.ebay.com/develop/get-started/api-call-limits";
const SELL_LIMITS_DOC = "https://developer.ebay.com/develop/api/sell/api_call_limits";
const OAUTH_DOC = "https://developer.ebay.com/api-docs/static/oauth-rate-limits.html";
const ANALYTICS_DOC = "https://developer.ebay.com/api-docs/developer/analytics/overview.html";
const ANALYTICS_SPEC = "https://developer.ebay.com/api-docs/master/developer/analytics/openapi/2/developer_analytics_v1_beta_oas2.json";
const ACCESS_RULES_DOC = "https://metacpan.org/pod/eBay::API::XML::DataType::ApiAccessRuleType";
const ERRORS_DOC = "https://developer.ebay.com/develop/api/sell/error_codes";
const SYSTEM_ERRORS_DOC = "https://developer.ebay.com/devzone/merchandising/docs/CallRef/types/ErrorCategory.html";

/** "Too many requests": "The request limit has been reached for the resource." (ERRORS_DOC, HTTP 429). */
const CALL_LIMIT_REACHED = 2001;
const CALL_LIMIT_SOURCE = "body:errors[].errorId=2001";
const RESET_SOURCE = "doc:daily-reset-midnight-pacific";

const HOUR_MS = 3_600_000;
/** A path segment that is a version (v1, v1_beta, v2), not an API's name. */
const VERSION = /^v\d/i;

/** The API a path names: its context and name (buy.browse, sell.inventory), or the context alone before a version. */
export function ebayApiOf(rawPath: string): string {
  const [context, name] = rawPath.split("?")[0]!.split("/").filter((s) => s !== "");
  if (context === undefined) return "/";
  if (context === "ws") return "trading";
  return name === undefined || VERSION.test(name) ? context : `${context}.${name}`;
}

function apiScope(path: string): ScopeParts {
  return { api: ebayApiOf(path) };
}

/** The nth Sunday (n >= 1) of a UTC month, as a day of the month. */
function nthSunday(year: number, month: number, n: number): number {
  const firstWeekday = new Date(Date.UTC(year, month, 1)).getUTCDay();
  return 1 + ((7 - firstWeekday) % 7) + (n - 1) * 7;
}

/**
 * Pacific time's offset behind UTC at an instant: 7 h in daylight time (from the second Sunday of
 * March, 2:00 PST = 10:00 UTC, to the first Sunday of November, 2:00 PDT = 09:00 UTC), else 8 h.
 * The documented reset instant (07:00Z in August, ANALYTICS_SPEC) is midnight in daylight time.
 */
export function pacificOffsetMs(utcMs: number): number {
  const year = new Date(utcMs).getUTCFullYear();
  const start = Date.UTC(year, 2, nthSunday(year, 2, 2), 10);
  const end = Date.UTC(year, 10, nthSunday(year, 10, 1), 9);
  return utcMs >= start && utcMs < end ? 7 * HOUR_MS : 8 * HOUR_MS;
}

/** Whether the body's errors[] holds errorId 2001, the spent call limit. */
function callLimitReached(ctx: SignalContext): boolean {
  return asArray(field(ctx.body, "errors")).some((error) => {
    const id = field(error, "errorId");
    return asNumber(id) === CALL_LIMIT_REACHED || asString(id)?.trim() === String(CALL_LIMIT_REACHED);
  });
}

/** A resource's spent call limit: deferred to the next midnight Pacific time, not retried in this run. */
function callLimitQuota(ctx: SignalContext): Interpretation {
  const wait: Wait = untilDailyReset(ctx, pacificOffsetMs(ctx.serverNowMs), RESET_SOURCE);
  const scope = apiScope(ctx.path);
  const budget: Budget = { remaining: 0, limit: null, resetAt: isoAfter(ctx, wait.waitMs), source: CALL_LIMIT_SOURCE };
  return throttledBy("quota", wait, {
    retryable: false,
    scope,
    budget,
    reason: `eBay ${ctx.status} errorId ${CALL_LIMIT_REACHED}: the application's call limit for ${scope.api} is reached; the limits are per day and reset at midnight Pacific time, so the work waits for that (${describeWait(wait)}) and is not retried in this run.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  if (ctx.status >= 400 && callLimitReached(ctx)) return callLimitQuota(ctx);
  const retryAfter = readRetryAfter(ctx);
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
  return throttledBy("burst", retryAfter, {
    scope: apiScope(ctx.path),
    reason: `eBay 429 without errorId ${CALL_LIMIT_REACHED}: no daily call limit is named, read as a short-window throttle; ${describeWait(retryAfter)}.`,
  });
}

export const ebay: Dialect = {
  id: "ebay",
  label: "eBay",
  hosts: ["api.ebay.com", "api.sandbox.ebay.com"],
  docs: [LIMITS_DOC, SELL_LIMITS_DOC, OAUTH_DOC, ANALYTICS_DOC, ANALYTICS_SPEC, ACCESS_RULES_DOC, ERRORS_DOC, SYSTEM_ERRORS_DOC],
  interpret,
  requestScope: ({ path }) => apiScope(path),
};
