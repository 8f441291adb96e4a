/**
 * Pipedrive's API (api.pipedrive.com and each company's {company}.pipedrive.com). Two kinds of limit
 * (RATE_DOC):
 * - A burst limit per token (api_token or OAuth access_token, not per company) over a 2-second
 *   window, by plan (20 to 120 requests per 2 s with an api_token, 80 to 480 with OAuth), and 10
 *   per 2 s for the Search API on every plan. Every answer shows it: x-ratelimit-limit (the
 *   requests per 2-second window), x-ratelimit-remaining (those left in it) and x-ratelimit-reset
 *   ("the remaining window before the rate limit resets": seconds, the documented example is 2;
 *   "the number of seconds until the current rate-limiting period is over", RESET_UNIT). Over it, 429.
 * - A daily budget: "each request consumes a certain number of tokens from a set daily allowance
 *   ... Once this budget is exhausted, further requests will be temporarily blocked until the
 *   budget resets at the start of the next day" (RATE_DOC); the budget is the company's, shared by
 *   every user and integration (USAGE_DOC). Its answers carry x-daily-ratelimit-token-remaining and
 *   -token-limit: names RATE_DOC does not list (seen on Pipedrive's answers and read by its API
 *   clients), read only as what they say, the tokens left of the day's. The doc names no zone for
 *   "the next day", so a spent budget waits the latest its reset can be, 24 h (as HubSpot's daily).
 *   Older, and beside it: x-daily-requests-left, "how many requests you can still make to POST/PUT
 *   endpoints during the ongoing day (calculated in UTC)", for api_token requests (RATE_DOC), a
 *   fair-usage limit of 10,000 writes a day "reset at midnight in UTC" (WRITES_DOC). It counts
 *   writes only (POST and PUT, and PATCH, API v2's update), so a read's 429 is never from it.
 * https://pipedrive.readme.io/docs/core-api-concepts-rate-limiting
 * https://pipedrive.readme.io/docs/guide-for-optimizing-api-usage
 * https://developers.pipedrive.com/changelog/post/daily-api-limit-for-postput-endpoints
 * https://github.com/DavidRouyer/pipedrive-dotnet/issues/36
 *
 * So a 429 with a day's count at 0 is a quota: not retried in this run, deferred to that count's
 * reset (midnight UTC for the writes, 24 h for the token budget). Any other 429 is the burst
 * window: its reset (or Retry-After, the longer) is the wait, and the 2-second window where neither
 * is shown (doc:fixed-2s). The Search API's own limit is its own scope, known from the path, so
 * that spent searches do not hold back other calls. A 401, or a 403 that shows no spent window,
 * is an access error and stays final (interpretStatus).
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, longestWait, readCount, readLimitFamily, readRetryAfter, type ResetKind, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, docWait, throttledBy, untilDailyReset } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://pipedrive.readme.io/docs/core-api-concepts-rate-limiting";
const USAGE_DOC = "https://pipedrive.readme.io/docs/guide-for-optimizing-api-usage";
const WRITES_DOC = "https://developers.pipedrive.com/changelog/post/daily-api-limit-for-postput-endpoints";
const RESET_UNIT = "https://github.com/DavidRouyer/pipedrive-dotnet/issues/36";
/** "The Pipedrive API rate limit window duration is 2 seconds" (RATE_DOC). */
const WINDOW_SECONDS = 2;
/** The token budget resets "at the start of the next day" in a zone the doc does not name: 24 h at the latest. */
const TOKEN_RESET_AT_THE_LATEST: Wait = { waitMs: 24 * 3_600_000, source: "doc:daily-reset-within-24h" };
/** The Search API (itemSearch, {entity}/search) has its own 10 per 2 s (RATE_DOC). */
const SEARCH_PATH = /\/(?:itemSearch|search)(?:\/|$)/i;
/** The methods x-daily-requests-left counts: POST/PUT (WRITES_DOC), and PATCH, which API v2 updates with. */
const WRITE_METHODS = new Set(["POST", "PUT", "PATCH"]);
/** A reset past this many seconds (about 31 years) is no delta: it is an epoch time. */
const EPOCH_SECONDS_FROM = 1e9;

interface Budgets {
  burst: Budget | null;
  burstReset: Wait | null;
  tokens: Budget | null;
  /** x-daily-requests-left; its budget (reset at midnight UTC) is made only for a 429 that it explains. */
  writesLeft: number | null;
}

/** The scope a request's burst limit is counted in: the Search API's own, or the token's. */
function endpointScope(path: string): ScopeParts {
  return { endpoint: SEARCH_PATH.test(path) ? "search" : "api" };
}

/** x-ratelimit-reset is documented as seconds; a value only an epoch time can be is read as one, and said so. */
function resetKind(ctx: SignalContext): ResetKind {
  const raw = ctx.header("x-ratelimit-reset")?.trim();
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < EPOCH_SECONDS_FROM) return "delta-seconds";
  ctx.deviate("x-ratelimit-reset read as epoch seconds (a UNIX time where the docs give seconds left in the window)");
  return "epoch-seconds";
}

function readBudgets(ctx: SignalContext): Budgets {
  const family = readLimitFamily(ctx, { limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining", reset: "x-ratelimit-reset" }, resetKind(ctx));
  const tokensLeft = readCount(ctx, "x-daily-ratelimit-token-remaining");
  return {
    burst: family.budget && { ...family.budget, windowMs: WINDOW_SECONDS * 1000 },
    burstReset: family.reset,
    tokens: tokensLeft === null ? null : { remaining: tokensLeft, limit: readCount(ctx, "x-daily-ratelimit-token-limit"), resetAt: null, source: "x-daily-ratelimit-token-remaining" },
    writesLeft: readCount(ctx, "x-daily-requests-left"),
  };
}

/** A 429 while a day's count is spent: the token budget (24 h at the latest) or the day's writes (midnight UTC). */
function dailyQuota(ctx: SignalContext, budgets: Budgets): Interpretation | null {
  const tokensSpent = budgets.tokens?.remaining === 0;
  const writesSpent = budgets.writesLeft === 0 && WRITE_METHODS.has(ctx.method);
  if (!tokensSpent && !writesSpent) return null;
  const midnightUtc = writesSpent ? untilDailyReset(ctx, 0, "doc:daily-reset-midnight-utc") : null;
  const wait = longestWait(tokensSpent ? TOKEN_RESET_AT_THE_LATEST : null, midnightUtc);
  const what = tokensSpent ? "the company's daily token budget is spent; it resets at the start of the next day, in a zone the docs do not name" : "the day's POST/PUT requests are spent; they reset at midnight UTC";
  return throttledBy("quota", wait, {
    retryable: false,
    scope: { limit: tokensSpent ? "daily-tokens" : "daily-writes" },
    budget: tokensSpent || midnightUtc === null ? budgets.tokens : { remaining: 0, limit: null, resetAt: isoAfter(ctx, midnightUtc.waitMs), source: "x-daily-requests-left" },
    reason: `Pipedrive 429: ${what}, so the work waits for that (${describeWait(wait)}) and is not retried in this run.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const budgets = readBudgets(ctx);
  if (ctx.status === 429) {
    const quota = dailyQuota(ctx, budgets);
    if (quota) return quota;
    const wait = longestWait(retryAfter, budgets.burstReset) ?? docWait(WINDOW_SECONDS);
    const search = endpointScope(ctx.path).endpoint === "search";
    return throttledBy("burst", wait, {
      scope: search ? { endpoint: "search" } : { limit: "token-burst" },
      budget: budgets.burst,
      reason: `Pipedrive 429: ${search ? "the Search API's 10 requests per 2 s" : "the token's requests per 2-second window"} are spent; ${describeWait(wait)}.`,
    });
  }
  // The burst window paces; the day's tokens are shown instead once they are spent (every request
  // is refused until their reset). The writes' count is a fair-usage one (going over it "on
  // multiple occasions" may get writes blocked, WRITES_DOC) that counts no reads: shown as the
  // budget, a spent one would hold the reads until midnight.
  const budget = budgets.tokens?.remaining === 0 ? budgets.tokens : (budgets.burst ?? budgets.tokens);
  return interpretStatus(ctx, { retryAfter, budget, reset: budgets.burstReset });
}

export const pipedrive: Dialect = {
  id: "pipedrive",
  label: "Pipedrive",
  hosts: ["api.pipedrive.com", ".pipedrive.com"],
  docs: [RATE_DOC, USAGE_DOC, WRITES_DOC, RESET_UNIT],
  interpret,
  requestScope: ({ path }) => endpointScope(path),
};
