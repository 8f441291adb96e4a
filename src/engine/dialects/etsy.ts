/**
 * Etsy Open API v3 (api.etsy.com/v3/application, and openapi.etsy.com, the base v3 launched on).
 * Two limits, "Queries Per Second (QPS)" and "Queries Per Day (QPD)", per API key for public
 * (api key) requests and per OAuth access token for private ones (LIMITS_DOC): the credential, so
 * the client's own scope (provider, host, credential) is already the limit's.
 * https://developer.etsy.com/documentation/essentials/rate-limits
 * https://developers.etsy.com/documentation/essentials/rate-limits
 *
 * Every successful answer carries x-limit-per-second, x-remaining-this-second ("the remaining
 * number of calls your application can make in the current second"), x-limit-per-day and
 * x-remaining-today ("within the current 24-hour sliding window"). The doc's table spells the
 * second's count x-remaining-this-secon; Etsy's answers (ISSUE_QPS, ISSUE_QPD) and the doc's older
 * text say x-remaining-this-second, so both are read, the full name first. No reset instant is sent
 * for either window.
 *
 * "Rate limits are evaluated in order: QPS first, then QPD. If either limit is exceeded, an error
 * status 429 is returned, along with the retry-after header", "the estimated time (in seconds) the
 * client should wait" (LIMITS_DOC). The 429 does not otherwise say which limit it was, except in its
 * body and counts, as Etsy's answers show:
 * - the per-second window: {"error":"Exceeded per second rate limit"} with x-remaining-this-second
 *   0 (ISSUE_QPS, sent before retry-after was added: the current second is then the wait, 1 s);
 * - the day: x-remaining-today 0 and retry-after 86400 (ISSUE_QPD), or the error "Exceeded daily
 *   rate limit" (ISSUE_DAILY_TEXT).
 * The QPD is no midnight-to-midnight day but a sliding window of buckets, and "the quota consumed by
 * the requests in the exiting bucket is immediately freed up" (LIMITS_DOC). A spent day is a quota:
 * deferred to the retry-after (not retried in a loop, every call until then would be refused too),
 * or, where none is sent, to the next bucket: the page's earlier text made the buckets two hours
 * long, "you'll only need to wait for at most two more hours" (LIMITS_DOC_2021); the current text
 * names no length. A retry-after longer than a minute can only be the day's (the other window is a
 * second long), so it is read as the day's too.
 * https://github.com/etsy/open-api/issues/198
 * https://github.com/etsy/open-api/issues/256
 * https://github.com/etsy/open-api/issues/620
 *
 * 401 (invalid_token) and 403 are access errors and stay final; 5xx are read as the generic dialect
 * reads them (interpretStatus).
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, longestWait, readCount, readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://developer.etsy.com/documentation/essentials/rate-limits";
/** The same page on the older host, as it read in 2021 (12 two-hour blocks); the stored copy keeps that text. */
const LIMITS_DOC_2021 = "https://developers.etsy.com/documentation/essentials/rate-limits";
const ISSUE_QPS = "https://github.com/etsy/open-api/issues/198";
const ISSUE_QPD = "https://github.com/etsy/open-api/issues/256";
const ISSUE_DAILY_TEXT = "https://github.com/etsy/open-api/issues/620";

const PER_SECOND_LIMIT = "x-limit-per-second";
const PER_SECOND_REMAINING = "x-remaining-this-second";
/** LIMITS_DOC's table spelling; Etsy's answers use the full name. */
const PER_SECOND_REMAINING_AS_DOCUMENTED = "x-remaining-this-secon";
const PER_DAY_LIMIT = "x-limit-per-day";
const PER_DAY_REMAINING = "x-remaining-today";
/** The per-second window: "the current second" (LIMITS_DOC). */
const SECOND_MS = 1000;
/** No per-second window asks for more than this; a longer retry-after is the day's. */
const PER_SECOND_WAIT_AT_MOST_MS = 60_000;
/** A spent sliding day frees its oldest bucket within two hours at most (LIMITS_DOC_2021). */
const NEXT_BUCKET_AT_THE_LATEST: Wait = { waitMs: 2 * 3_600_000, source: "doc:qpd-bucket-within-2h" };

interface Budgets {
  second: Budget | null;
  day: Budget | null;
}

/** x-remaining-this-second, or the doc's x-remaining-this-secon when only that is sent. */
function secondRemaining(ctx: SignalContext): { remaining: number | null; source: string } {
  if (ctx.header(PER_SECOND_REMAINING) !== undefined) return { remaining: readCount(ctx, PER_SECOND_REMAINING), source: PER_SECOND_REMAINING };
  const remaining = readCount(ctx, PER_SECOND_REMAINING_AS_DOCUMENTED);
  if (remaining !== null) ctx.deviate(`${PER_SECOND_REMAINING_AS_DOCUMENTED} read as ${PER_SECOND_REMAINING} (the docs' table spells it so)`);
  return { remaining, source: PER_SECOND_REMAINING_AS_DOCUMENTED };
}

function readBudgets(ctx: SignalContext): Budgets {
  const second = secondRemaining(ctx);
  const dayRemaining = readCount(ctx, PER_DAY_REMAINING);
  return {
    second: second.remaining === null ? null : { remaining: second.remaining, limit: readCount(ctx, PER_SECOND_LIMIT), resetAt: null, source: second.source, windowMs: SECOND_MS },
    // A sliding 24 h of buckets: no reset instant, and no window a pacer could spread the day over.
    day: dayRemaining === null ? null : { remaining: dayRemaining, limit: readCount(ctx, PER_DAY_LIMIT), resetAt: null, source: PER_DAY_REMAINING },
  };
}

/** The 429 is the day's: its count is spent, its body says so, or its wait is longer than a second's window could be. */
function dayIsSpent(ctx: SignalContext, budgets: Budgets, retryAfter: Wait | null): boolean {
  if (budgets.day?.remaining === 0) return true;
  if (/daily|per day/i.test(asString(field(ctx.body, "error")) ?? "")) return true;
  return retryAfter !== null && retryAfter.waitMs > PER_SECOND_WAIT_AT_MOST_MS;
}

function dayQuota(ctx: SignalContext, budgets: Budgets, retryAfter: Wait | null): Interpretation {
  const wait = retryAfter ?? NEXT_BUCKET_AT_THE_LATEST;
  const budget: Budget = { ...(budgets.day ?? { limit: null, source: PER_DAY_REMAINING }), remaining: 0, resetAt: isoAfter(ctx, wait.waitMs) };
  return throttledBy("quota", wait, {
    retryable: false,
    scope: { limit: "per-day" },
    budget,
    reason: `Etsy 429: the queries per day (a sliding 24 h window) are spent; every call is refused until its oldest requests leave it, so the work waits for that (${describeWait(wait)}) and is not retried in this run.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const budgets = readBudgets(ctx);
  if (ctx.status === 429) {
    if (dayIsSpent(ctx, budgets, retryAfter)) return dayQuota(ctx, budgets, retryAfter);
    const wait = longestWait(retryAfter, docWait(1));
    return throttledBy("burst", wait, {
      scope: {},
      budget: budgets.second,
      reason: `Etsy 429: the queries per second are spent (QPS is evaluated first); ${describeWait(wait)}.`,
    });
  }
  // The second paces; the day is shown instead once it is spent (every call is refused until it frees).
  const budget = budgets.day?.remaining === 0 ? budgets.day : (budgets.second ?? budgets.day);
  return interpretStatus(ctx, { retryAfter, budget, reset: null });
}

export const etsy: Dialect = {
  id: "etsy",
  label: "Etsy Open API v3",
  hosts: ["api.etsy.com", "openapi.etsy.com"],
  docs: [LIMITS_DOC, LIMITS_DOC_2021, ISSUE_QPS, ISSUE_QPD, ISSUE_DAILY_TEXT],
  interpret,
};
