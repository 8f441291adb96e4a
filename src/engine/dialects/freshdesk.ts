/**
 * Freshdesk's API v2. The calls an account may make are set by its plan and counted per minute for
 * the whole account, "irrespective of the number of agents you have or IP addresses used to make
 * the calls" (Growth 200, Pro 400, Enterprise 700 a minute; trial accounts 50), with lower
 * maximums inside that for a few endpoints (ticket create and update, tickets list, contacts list).
 * Accounts were moved from a per-hour limit to the per-minute one in batches (LIMITS_DOC).
 * https://support.freshdesk.com/support/solutions/articles/225439-what-are-the-rate-limits-for-the-api-calls-to-freshdesk
 *
 * Every answer shows the account's budget: X-RateLimit-Total (the calls allowed in the window),
 * X-RateLimit-Remaining (those left in it) and X-RateLimit-Used-CurrentRequest (the calls this
 * request cost: embedding more in an answer costs more than one). No header gives the window's
 * reset. Over the limit, a 429 whose Retry-After gives the seconds to wait; invalid requests count
 * towards the limit too (API_DOC).
 * https://developers.freshdesk.com/api/#ratelimit
 *
 * So Total is the budget's limit, Remaining what is left, the minute its window (windowMs, with no
 * reset instant: a pacer learns the window's length, not its end), and Used-CurrentRequest the
 * units a request spends. A 429 waits its Retry-After; with none, the minute, after which the
 * window's calls are back (doc:fixed-60s). No answer says whether a 429 met the account's minute
 * or an endpoint's maximum inside it, so no request scope is split off: a 429 holds the account.
 * 401 and 403 are access errors and stay final (interpretStatus).
 *
 * Freshservice ({domain}.freshservice.com), Freshworks' service desk, limits its API v2 the same way:
 * per minute for the whole account, by plan, with sub-limits for some operations (FS_LIMITS_DOC),
 * and answers with the same X-RateLimit-Total, X-RateLimit-Remaining,
 * X-RateLimit-Used-CurrentRequest and Retry-After (FS_HEADERS_DOC, FS_CHANGE_DOC). Accounts created
 * before 2020-09-01 keep an hourly limit until migrated (FS_LIMITS_DOC); their 429's Retry-After
 * still gives the wait.
 * https://support.freshservice.com/en/support/solutions/articles/50000000293-what-is-the-rate-limit-for-apis-across-all-plans-
 * https://support.freshservice.com/en/support/solutions/articles/50000000308-how-can-i-check-the-available-api-limit-
 * https://community.freshworks.dev/t/change-alert-action-required-freshservice-v2-api-changing-from-per-hour-to-per-minute-api-rate-limiting-model/1101
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { readCount, readRetryAfter } from "../signals";
import type { Budget, Interpretation } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://support.freshdesk.com/support/solutions/articles/225439-what-are-the-rate-limits-for-the-api-calls-to-freshdesk";
const API_DOC = "https://developers.freshdesk.com/api/#ratelimit";
const FS_LIMITS_DOC = "https://support.freshservice.com/en/support/solutions/articles/50000000293-what-is-the-rate-limit-for-apis-across-all-plans-";
const FS_HEADERS_DOC = "https://support.freshservice.com/en/support/solutions/articles/50000000308-how-can-i-check-the-available-api-limit-";
const FS_CHANGE_DOC = "https://community.freshworks.dev/t/change-alert-action-required-freshservice-v2-api-changing-from-per-hour-to-per-minute-api-rate-limiting-model/1101";
/** The limits are "calls per minute" (LIMITS_DOC). */
const WINDOW_SECONDS = 60;

/** The account's budget for the minute: Remaining of Total, and what this request cost. */
function readBudget(ctx: SignalContext): Budget | null {
  const remaining = readCount(ctx, "x-ratelimit-remaining");
  if (remaining === null) return null;
  const used = readCount(ctx, "x-ratelimit-used-currentrequest");
  return {
    remaining,
    limit: readCount(ctx, "x-ratelimit-total"),
    resetAt: null,
    source: "x-ratelimit-remaining",
    windowMs: WINDOW_SECONDS * 1000,
    ...(used !== null && used > 0 ? { requestUnits: used } : {}),
  };
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const budget = readBudget(ctx);
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget, reset: null });
  const wait = retryAfter ?? docWait(WINDOW_SECONDS);
  const shown = budget ? ` (${budget.remaining}${budget.limit === null ? "" : `/${budget.limit}`} left)` : "";
  return throttledBy("burst", wait, {
    budget,
    reason: `${ctx.host.endsWith("freshservice.com") ? "Freshservice" : "Freshdesk"} 429: the account's calls for this minute, or an endpoint's share of them, are spent${shown}; ${describeWait(wait)}.`,
  });
}

export const freshdesk: Dialect = {
  id: "freshdesk",
  label: "Freshdesk and Freshservice",
  hosts: [".freshdesk.com", ".freshservice.com"],
  docs: [LIMITS_DOC, API_DOC, FS_LIMITS_DOC, FS_HEADERS_DOC, FS_CHANGE_DOC],
  interpret,
};
