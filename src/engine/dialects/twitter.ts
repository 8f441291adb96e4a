/**
 * The X (formerly Twitter) API, v2 and what is left of v1.1 (api.x.com and api.twitter.com).
 * https://docs.x.com/x-api/fundamentals/rate-limits
 * https://developer.x.com/en/docs/twitter-api/rate-limits
 *
 * Limits are per endpoint ("Each endpoint has its own limits"), per user with a user token and per
 * app with an app-only Bearer token, in windows of "usually 15 minutes or 24 hours": the tables give
 * limits "per 15 minutes unless otherwise noted (e.g., "/24hrs" or "/sec")" (RATE_DOC). Answers
 * carry x-rate-limit-limit, x-rate-limit-remaining and x-rate-limit-reset, the last "Unix timestamp
 * when window resets": epoch seconds, measured against the answer's Date (RATE_DOC). A request's
 * scope is its endpoint, known from its method and path (ids taken out as the tables write them,
 * /2/tweets/:id); user and app limits are told apart by the credential's base scope.
 *
 * A 429 is "Returned when a request cannot be served due to the App's rate limit or Post cap having
 * been exhausted" (ERRORS_DOC), in v1.1 with error code 88 "Rate limit exceeded" (RATE_DOC):
 * - With x-rate-limit-remaining 0 the endpoint's window is spent: wait until its reset. A reset
 *   further off than the 15-minute window belongs to one of the "/24hrs" windows: a quota, deferred
 *   to that reset, not retried in this run.
 * - Posting endpoints also send daily counts of the user's and the app's, x-user-limit-24hour-* and
 *   x-app-limit-24hour-* (limit, remaining, reset in epoch seconds). The docs name only the 24-hour
 *   windows; the header names and their unit are known from public client code (DAILY_HEADERS, the
 *   twapi-v2 crate's header list, reset read as a UNIX timestamp). A 429 with one of them at 0 is
 *   the day's limit: a quota, deferred to its reset.
 * - A body of the problem type usage-capped (title UsageCapExceeded, "Usage cap exceeded: Monthly
 *   product cap") is the Project's monthly Post cap (POST_CAP_DOC; ERRORS_DOC's "Post cap"): a
 *   quota whose reset day the answer does not give, so no wait, never retried in this run.
 * v1.1's error 185 "User is over daily status update limit" comes with a 403, "thrown whenever a
 * posting limitation has been reached. Posting allowances have roaming windows of time of
 * unspecified duration" (ERROR_CODES_DOC): a quota too, not an access error. Every other 401 and 403
 * is an access error and stays final, whatever the window shows; 503 ("over capacity", code 130)
 * and the other 5xx are read as the generic dialect reads them.
 * https://docs.x.com/x-api/fundamentals/response-codes-and-errors
 * https://developer.x.com/en/support/x-api/error-troubleshooting
 * https://developer.twitter.com/en/docs/twitter-api/tweet-caps
 * https://docs.rs/crate/twapi-v2/latest/source/maker/header/header.yaml
 */
import type { SignalContext } from "../context";
import { asArray, asNumber, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readExplicitWaits, readLimitFamily, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://docs.x.com/x-api/fundamentals/rate-limits";
const LEGACY_RATE_DOC = "https://developer.x.com/en/docs/twitter-api/rate-limits";
const ERRORS_DOC = "https://docs.x.com/x-api/fundamentals/response-codes-and-errors";
const ERROR_CODES_DOC = "https://developer.x.com/en/support/x-api/error-troubleshooting";
const POST_CAP_DOC = "https://developer.twitter.com/en/docs/twitter-api/tweet-caps";
const DAILY_HEADERS = "https://docs.rs/crate/twapi-v2/latest/source/maker/header/header.yaml";

const WINDOW = { limit: "x-rate-limit-limit", remaining: "x-rate-limit-remaining", reset: "x-rate-limit-reset" };
const USER_DAY = { limit: "x-user-limit-24hour-limit", remaining: "x-user-limit-24hour-remaining", reset: "x-user-limit-24hour-reset" };
const APP_DAY = { limit: "x-app-limit-24hour-limit", remaining: "x-app-limit-24hour-remaining", reset: "x-app-limit-24hour-reset" };
/** The usual window (RATE_DOC), plus the second an epoch reset read against a Date can be off by. */
const WINDOW_MS = 15 * 60_000;
const WINDOW_SLACK_MS = 1000;
/** A spent day whose reset is not shown reopens within its 24 hours at the latest. */
const DAY_AT_THE_LATEST: Wait = { waitMs: 24 * 3_600_000, source: "doc:24h-window-at-the-latest" };
/** The Post cap's problem type, under either host's name (ERRORS_DOC). */
const USAGE_CAPPED = /\/2\/problems\/usage-capped$/;
/** v1.1: "User is over daily status update limit", with a 403 (ERROR_CODES_DOC). */
const POSTING_LIMIT_CODE = 185;

interface Limits {
  window: { budget: Budget | null; reset: Wait | null };
  userDay: { budget: Budget | null; reset: Wait | null };
  appDay: { budget: Budget | null; reset: Wait | null };
}

/**
 * The endpoint as the rate-limit tables write it, "METHOD /2/users/:id/following": numeric ids
 * (posts, users, lists, media) and v1.1's "123.json" become :id, a username after by/username
 * becomes :username, and a Space's alphanumeric id becomes :id.
 */
export function xEndpointOf(method: string, rawPath: string): string {
  const segments = rawPath.split("?")[0]!.split("/").filter((s) => s !== "");
  const shaped = segments.map((segment, i) => {
    const before = segments[i - 1];
    // The first segment is the version ("2", "1.1"), never an id.
    if (i === 0) return segment;
    if (/^\d+$/.test(segment)) return ":id";
    if (/^\d+\.json$/.test(segment)) return ":id.json";
    if (before === "username") return ":username";
    if (before === "spaces" && i === 2 && segment !== "search" && segment !== "by") return ":id";
    return segment;
  });
  return `${method === "HEAD" ? "GET" : method} /${shaped.join("/")}`;
}

function endpointScope(method: string, path: string): ScopeParts {
  return { endpoint: xEndpointOf(method, path) };
}

function readLimits(ctx: SignalContext): Limits {
  return {
    window: readLimitFamily(ctx, WINDOW, "epoch-seconds"),
    userDay: readLimitFamily(ctx, USER_DAY, "epoch-seconds"),
    appDay: readLimitFamily(ctx, APP_DAY, "epoch-seconds"),
  };
}

/** The Post cap: the problem type usage-capped, or its title (POST_CAP_DOC, ERRORS_DOC). */
function usageCapped(ctx: SignalContext): Interpretation | null {
  const type = asString(field(ctx.body, "type"));
  if (!(type !== undefined && USAGE_CAPPED.test(type)) && asString(field(ctx.body, "title")) !== "UsageCapExceeded") return null;
  const period = asString(field(ctx.body, "period"));
  return throttledBy("quota", null, {
    retryable: false,
    scope: { limit: "usage-cap" },
    budget: null,
    reason: `X ${ctx.status} UsageCapExceeded: the Project's ${period ? `${period.toLowerCase()} ` : ""}Post cap is spent; it resets with the billing cycle, which the answer does not give, so it is not retried in this run.`,
  });
}

/** A spent day of the user's or the app's (x-*-limit-24hour-remaining 0), with the wait to the later reset. */
function spentDay(limits: Limits): { wait: Wait; budget: Budget; who: string } | null {
  const user = limits.userDay.budget?.remaining === 0 ? limits.userDay : null;
  const app = limits.appDay.budget?.remaining === 0 ? limits.appDay : null;
  const spent = user ?? app;
  if (spent === null || spent.budget === null) return null;
  const wait = longestWait(user?.reset, app?.reset) ?? DAY_AT_THE_LATEST;
  return { wait, budget: spent.budget, who: user && app ? "the user's and the app's" : user ? "the user's" : "the app's" };
}

function dailyQuota(ctx: SignalContext, day: { wait: Wait; budget: Budget; who: string }, what: string): Interpretation {
  return throttledBy("quota", day.wait, {
    retryable: false,
    scope: { ...endpointScope(ctx.method, ctx.path), limit: "24hour" },
    budget: day.budget,
    reason: `X ${ctx.status}: ${what}; ${day.who} 24-hour limit for this endpoint is spent, so the work waits for its reset (${describeWait(day.wait)}) and is not retried in this run.`,
  });
}

/** A 429 of the endpoint's window: spent 15-minute windows are waited out, a spent 24-hour one is deferred. */
function windowSpent(ctx: SignalContext, limits: Limits): Interpretation {
  const scope = endpointScope(ctx.method, ctx.path);
  const budget = limits.window.budget;
  // Only a spent window's reset is the wait: with requests left, some other limit answered.
  const reset = budget === null || budget.remaining === 0 ? limits.window.reset : null;
  const wait = longestWait(readExplicitWaits(ctx), reset);
  if (reset !== null && reset.waitMs > WINDOW_MS + WINDOW_SLACK_MS) {
    return throttledBy("quota", wait, {
      retryable: false,
      scope,
      budget,
      reason: `X 429: the endpoint's window resets more than 15 minutes ahead, so it is one of the 24-hour windows; the work waits for it (${describeWait(wait)}) and is not retried in this run.`,
    });
  }
  return throttledBy("burst", wait, {
    scope,
    budget,
    reason: `X 429 Too Many Requests: the endpoint's rate limit window is spent; ${describeWait(wait)}.`,
  });
}

/**
 * v1.1's 403 with error 185: a posting allowance is spent, in "roaming windows of time of
 * unspecified duration" (ERROR_CODES_DOC). Its wait is a spent day's reset where one is shown, and
 * none otherwise: the docs give no duration to defer by.
 */
function postingLimit(ctx: SignalContext, day: { wait: Wait; budget: Budget; who: string } | null): Interpretation {
  if (day) return dailyQuota(ctx, day, "error 185, the user is over a posting limit");
  return throttledBy("quota", null, {
    retryable: false,
    scope: { ...endpointScope(ctx.method, ctx.path), limit: "posting" },
    budget: null,
    reason: "X 403 error 185: the user is over a posting limit (a window of unspecified duration), not an access error; not retried in this run.",
  });
}

/** v1.1's error codes in errors[].code. */
function hasErrorCode(ctx: SignalContext, code: number): boolean {
  return asArray(field(ctx.body, "errors")).some((error) => asNumber(field(error, "code")) === code);
}

function interpret(ctx: SignalContext): Interpretation {
  const limits = readLimits(ctx);
  if (ctx.status >= 400) {
    const capped = usageCapped(ctx);
    if (capped) return capped;
  }
  const day = spentDay(limits);
  if (ctx.status === 429) return day ? dailyQuota(ctx, day, "429 Too Many Requests") : windowSpent(ctx, limits);
  if (ctx.status === 403 && hasErrorCode(ctx, POSTING_LIMIT_CODE)) return postingLimit(ctx, day);
  // A spent day is shown rather than the window: every request is refused until its reset.
  const budget = day?.budget ?? limits.window.budget ?? limits.userDay.budget ?? limits.appDay.budget;
  // An answer that shows no count names no scope, as a plain success does (classify.ts quietSuccess).
  // No reset is passed: a 401 or 403 showing a spent window is still an access error.
  return interpretStatus(ctx, { retryAfter: readExplicitWaits(ctx), budget, reset: null }, budget === null ? undefined : endpointScope(ctx.method, ctx.path));
}

export const twitter: Dialect = {
  id: "twitter",
  label: "X (Twitter) API",
  hosts: ["api.x.com", "api.twitter.com"],
  docs: [RATE_DOC, LEGACY_RATE_DOC, ERRORS_DOC, ERROR_CODES_DOC, POST_CAP_DOC, DAILY_HEADERS],
  interpret,
  requestScope: ({ method, path }) => endpointScope(method, path),
};
