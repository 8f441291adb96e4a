/**
 * Reddit's Data API (oauth.reddit.com; www.reddit.com for the token endpoint and logged-out reads).
 * The rules ask clients to "Monitor the following response headers": X-Ratelimit-Used,
 * "Approximate number of requests used in this period"; X-Ratelimit-Remaining, "Approximate number
 * of requests left to use"; X-Ratelimit-Reset, "Approximate number of seconds to end of period"
 * (RULES_DOC). The period is a window of 10 minutes ("The window is currently set to 10 minutes",
 * HEADERS_POST, where the admin who added the headers also says "requests that are served cached
 * via our CDN will not include headers, and will not count against your total"). Since July 2023
 * the free tier is enforced per OAuth client id (FREE_TIER_POST; the Data API Wiki, DATA_API_DOC,
 * gives 100 queries per minute averaged over the window, a figure read here through secondary
 * copies: the wiki is not in the stored corpus). Nothing below rests on that figure: the counts
 * come from the headers.
 * https://github.com/reddit-archive/reddit/wiki/API
 * https://www.reddit.com/r/redditdev/comments/1yxrp7/formal_ratelimiting_headers/
 * https://www.reddit.com/r/redditdev/comments/13wsiks/api_update_enterprise_level_tier_for_large_scale/
 * https://support.reddithelp.com/hc/en-us/articles/16160319875092-Reddit-Data-API-Wiki
 *
 * X-Ratelimit-Remaining may be a decimal ("598.0", "0.6"): prawcore, the core of PRAW (the Python
 * client), reads it as a float, Used and Reset as integers, and sleeps to the reset once Remaining
 * is <= 0 (PRAWCORE_LIMITER, RateLimiter.update); the decimal form is known from that client code.
 * So Remaining is rounded down (0.6 is less than one request left), the limit is Used + Remaining,
 * and Reset is delta seconds counted down from the answer (a Reset only an epoch can be, past 1e9,
 * is read as one and recorded as a deviation, not as decades). A 429 waits the reset when the
 * count is spent, and Retry-After when sent (prawcore's TooManyRequests reads it, PRAWCORE_ERRORS);
 * the longer wins. The limit is the client's, across the API (no part in its scope).
 * https://github.com/praw-dev/prawcore/blob/main/prawcore/rate_limit.py
 * https://github.com/praw-dev/prawcore/blob/main/prawcore/exceptions.py
 *
 * Writes have their own, per-account limits, answered inside a 200 (api_type=json): {"json":
 * {"errors": [["RATELIMIT", "you are doing that too much. try again in 9 minutes.", "ratelimit"]],
 * "ratelimit": 512.2}} (ERRORS_SOURCE's message, JSON_SOURCE's `ratelimit` field, seconds). PRAW
 * sleeps the message's time and sends the write again (PRAW_SOURCE, _handle_rate_limit, which reads
 * "([0-9]{1,3}) (milliseconds?|seconds?|minutes?)"). So RATELIMIT is a throttle whose write was
 * refused (not done), waiting the longer of the field and the message; QUOTA_FILLED ("Please try
 * again in an hour") waits the hour, and SUBREDDIT_RATELIMIT ("try again later") backs off (both
 * codes from the archived source, kept in case they are still sent). These limits are the account's
 * on one kind of write, not the client's request budget, yet they are read as throttles: the
 * client sends again only a 2xx that is one, and the wait is then held for the client's other
 * calls too, a cost of minutes accepted to have the write retried at all.
 * https://github.com/reddit-archive/reddit/blob/master/r2/r2/lib/errors.py
 * https://github.com/reddit-archive/reddit/blob/master/r2/r2/lib/jsonresponse.py
 * https://github.com/praw-dev/praw/blob/main/praw/reddit.py
 *
 * 401 and 403 are final (prawcore raises InvalidToken, Forbidden or InsufficientScope, after one
 * token refresh for a 401, which is the caller's to do here). prawcore
 * retries 408, 500, 502, 503, 504, 520 and 522 (PRAWCORE_SESSIONS, RETRY_STATUSES): generic.ts
 * reads the first five so; 520 and 522 (CDN errors, a client's list rather than Reddit's docs) are
 * retried here too.
 * https://github.com/praw-dev/prawcore/blob/main/prawcore/sessions.py
 */
import type { SignalContext } from "../context";
import { asArray, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, longestWait, readCount, readReset, readRetryAfter, type ResetKind, type Wait } from "../signals";
import type { Budget, Interpretation } from "../types";
import { describeWait, docWait, retryableBy, secondsWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RULES_DOC = "https://github.com/reddit-archive/reddit/wiki/API";
const HEADERS_POST = "https://www.reddit.com/r/redditdev/comments/1yxrp7/formal_ratelimiting_headers/";
const FREE_TIER_POST = "https://www.reddit.com/r/redditdev/comments/13wsiks/api_update_enterprise_level_tier_for_large_scale/";
const DATA_API_DOC = "https://support.reddithelp.com/hc/en-us/articles/16160319875092-Reddit-Data-API-Wiki";
const PRAWCORE_LIMITER = "https://github.com/praw-dev/prawcore/blob/main/prawcore/rate_limit.py";
const PRAWCORE_ERRORS = "https://github.com/praw-dev/prawcore/blob/main/prawcore/exceptions.py";
const PRAWCORE_SESSIONS = "https://github.com/praw-dev/prawcore/blob/main/prawcore/sessions.py";
const ERRORS_SOURCE = "https://github.com/reddit-archive/reddit/blob/master/r2/r2/lib/errors.py";
const JSON_SOURCE = "https://github.com/reddit-archive/reddit/blob/master/r2/r2/lib/jsonresponse.py";
const PRAW_SOURCE = "https://github.com/praw-dev/praw/blob/main/praw/reddit.py";

const USED = "x-ratelimit-used";
const REMAINING = "x-ratelimit-remaining";
const RESET = "x-ratelimit-reset";
/** "The window is currently set to 10 minutes" (HEADERS_POST). */
const WINDOW_MS = 600_000;
const DECIMAL = /^\d{1,15}(?:\.\d{1,15})?$/;
/** A reset past this many seconds (about 31 years) is no count of seconds left: it is an epoch time. */
const EPOCH_SECONDS_FROM = 1e9;
/** The wait in a RATELIMIT message, as PRAW reads it (PRAW_SOURCE). */
const MESSAGE_WAIT = /(\d{1,4}) (milliseconds?|seconds?|minutes?)/i;
const UNIT_SECONDS: Readonly<Record<string, number>> = { millisecond: 0.001, second: 1, minute: 60 };
/** The action limits a write's JSON errors name (ERRORS_SOURCE); QUOTA_FILLED: "Please try again in an hour." */
const ACTION_LIMITS: ReadonlySet<string> = new Set(["RATELIMIT", "QUOTA_FILLED", "SUBREDDIT_RATELIMIT"]);
/** CDN errors prawcore retries beside the usual transient statuses (PRAWCORE_SESSIONS). */
const CDN_RETRIED: ReadonlySet<number> = new Set([520, 522]);

interface Counts {
  budget: Budget | null;
  reset: Wait | null;
}

/** X-Ratelimit-Remaining as prawcore reads it, a float, rounded down to whole requests. */
function readRemaining(ctx: SignalContext): number | null {
  const raw = ctx.header(REMAINING);
  if (raw === undefined) return null;
  const value = raw.trim();
  if (!DECIMAL.test(value)) {
    ctx.ignore(REMAINING, raw, "not a non-negative number");
    return null;
  }
  return Math.floor(Number(value));
}

/** X-Ratelimit-Reset is seconds to the period's end (RULES_DOC); a value only an epoch time can be is read as one, and said so. */
function resetKind(ctx: SignalContext): ResetKind {
  const raw = ctx.header(RESET)?.trim();
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < EPOCH_SECONDS_FROM) return "delta-seconds";
  ctx.deviate("x-ratelimit-reset read as epoch seconds (a UNIX time where the rules give seconds to the end of the period)");
  return "epoch-seconds";
}

function readCounts(ctx: SignalContext): Counts {
  const remainingRaw = ctx.header(REMAINING);
  const remaining = readRemaining(ctx);
  const used = readCount(ctx, USED);
  const kind = resetKind(ctx);
  const reset = readReset(ctx, RESET, kind);
  if (remaining === null) return { budget: null, reset };
  const limit = used === null ? null : Math.round(used + Number(remainingRaw));
  const budget: Budget = {
    remaining,
    limit,
    resetAt: reset ? isoAfter(ctx, reset.waitMs) : null,
    source: REMAINING,
    windowMs: WINDOW_MS,
    ...(reset && kind === "delta-seconds" ? { resetCountsDown: true } : {}),
  };
  return { budget, reset };
}

/** The first action limit among a write's JSON errors ([code, message, field]), or null. */
function actionLimit(ctx: SignalContext): { code: string; message: string } | null {
  for (const error of asArray(field(ctx.body, "json", "errors"))) {
    const code = asString(field(error, 0));
    if (code !== undefined && ACTION_LIMITS.has(code)) return { code, message: asString(field(error, 1)) ?? "" };
  }
  return null;
}

/** The wait in "try again in 9 minutes." (PRAW's reading), or null. */
function messageWait(message: string): Wait | null {
  const match = MESSAGE_WAIT.exec(message.slice(0, 512));
  if (!match) return null;
  const unit = match[2]!.toLowerCase().replace(/s$/, "");
  return { waitMs: Math.ceil(Number(match[1]) * (UNIT_SECONDS[unit] ?? 1) * 1000), source: "body:json.errors" };
}

/** A write refused by the account's action limit, inside a 200 (ERRORS_SOURCE, JSON_SOURCE). */
function actionThrottle(ctx: SignalContext, limit: { code: string; message: string }, budget: Budget | null): Interpretation {
  const wait =
    limit.code === "QUOTA_FILLED"
      ? docWait(3600)
      : limit.code === "RATELIMIT"
        ? longestWait(secondsWait(ctx, field(ctx.body, "json", "ratelimit"), "body:json.ratelimit"), messageWait(limit.message))
        : null;
  const shown = limit.message ? ` ("${limit.message.slice(0, 120)}")` : "";
  return throttledBy("burst", wait, {
    writeNotProcessed: true,
    scope: { limit: "account-actions" },
    budget,
    reason: `Reddit ${ctx.status} ${limit.code}${shown}: the account's limit on this kind of write is spent, not the client's request budget; the write was not done; ${describeWait(wait)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const counts = readCounts(ctx);
  if (ctx.status === 429) {
    const spent = counts.budget?.remaining === 0;
    const wait = longestWait(retryAfter, spent ? counts.reset : null);
    return throttledBy("burst", wait, {
      scope: {},
      budget: counts.budget,
      reason: `Reddit 429: ${spent ? "the client's requests for this 10-minute period are spent" : "too many requests"}; ${describeWait(wait)}.`,
    });
  }
  const limit = ctx.status < 500 ? actionLimit(ctx) : null;
  if (limit) return actionThrottle(ctx, limit, counts.budget);
  if (CDN_RETRIED.has(ctx.status)) {
    return retryableBy("server", retryAfter, {
      budget: counts.budget,
      reason: `${ctx.status}: a CDN error in front of Reddit, transient (prawcore retries it); retry if the request is safe to repeat; ${describeWait(retryAfter)}.`,
    });
  }
  // No reset: a 401/403 beside a spent count is still an access error (prawcore raises it at once).
  return interpretStatus(ctx, { retryAfter, budget: counts.budget, reset: null });
}

export const reddit: Dialect = {
  id: "reddit",
  label: "Reddit",
  // oauth.reddit.com and www.reddit.com, and any other subdomain.
  hosts: [".reddit.com"],
  docs: [RULES_DOC, HEADERS_POST, FREE_TIER_POST, DATA_API_DOC, PRAWCORE_LIMITER, PRAWCORE_ERRORS, PRAWCORE_SESSIONS, ERRORS_SOURCE, JSON_SOURCE, PRAW_SOURCE],
  interpret,
  readsSuccesses: true,
};
