/**
 * Help Scout's Mailbox API 2.0 (api.helpscout.net/v2). One rate limit per account: "all users
 * associated with the same account count against the same rate limit", set by the account's plan
 * (the plans' figures are in Help Scout's help centre, not on the API page, so none is assumed
 * here); over it, a 429. "Write requests (POST, PUT, DELETE, PATCH) count as 2 requests toward the
 * rate limit." Answers carry X-RateLimit-Limit-Minute ("Maximum number of requests per interval"),
 * X-RateLimit-Remaining-Minute ("Number of requests remaining in the current rate limit interval")
 * and, "when a rate limit was reached", X-RateLimit-Retry-After: "how many seconds to wait until
 * the rate limit is refreshed" (RATE_DOC). Seconds to wait, a delta, not an epoch time.
 * https://developer.helpscout.com/mailbox-api/overview/rate-limiting/
 *
 * So the headers are the account's budget for its minute (windowMs, the interval the names give;
 * no reset instant is sent until a 429), a write spends 2 of it (requestUnits), and a 429 waits its
 * X-RateLimit-Retry-After. The retired API 1.0 sent the standard Retry-After instead (LEGACY_DOC);
 * it is read too, the longer wait winning, as both are floors. A 429 with neither waits the
 * minute the limit is counted over (doc:fixed-60s): the window is back by then.
 * https://developer.helpscout.com/help-desk-api
 *
 * 401 (credentials not "associated with an active, invited user in the Help Scout account",
 * AUTH_DOC, or a token no longer valid) and 403 ("Access denied": "the API is disabled for your
 * company, payment information is missing or you don't have access to features like Reports",
 * ERRORS_DOC) are access errors and stay final, whatever count the answer shows: Help Scout says
 * "slow down" with 429 only. 5xx are read as the generic dialect reads them (retried with backoff
 * when the request is safe to repeat); Help Scout documents no wait for them.
 * https://developer.helpscout.com/mailbox-api/overview/errors/
 * https://developer.helpscout.com/mailbox-api/overview/authentication/
 *
 * Help Scout's own PHP SDK reads none of these headers: it turns any 429 into a
 * RateLimitExceededException and leaves the waiting to the caller (SDK_SOURCE).
 * https://github.com/helpscout/helpscout-api-php/blob/master/src/Http/Handlers/RateLimitHandler.php
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readExplicitWaits, readLimitFamily } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://developer.helpscout.com/mailbox-api/overview/rate-limiting/";
const ERRORS_DOC = "https://developer.helpscout.com/mailbox-api/overview/errors/";
const AUTH_DOC = "https://developer.helpscout.com/mailbox-api/overview/authentication/";
const LEGACY_DOC = "https://developer.helpscout.com/help-desk-api";
const SDK_SOURCE = "https://github.com/helpscout/helpscout-api-php/blob/master/src/Http/Handlers/RateLimitHandler.php";

const NAMES = { limit: "x-ratelimit-limit-minute", remaining: "x-ratelimit-remaining-minute", reset: "x-ratelimit-retry-after" };
/** The limit is counted per minute: the headers name the interval (RATE_DOC). */
const WINDOW_SECONDS = 60;
/** "Write requests (POST, PUT, DELETE, PATCH) count as 2 requests toward the rate limit" (RATE_DOC). */
const WRITE_METHODS: ReadonlySet<string> = new Set(["POST", "PUT", "DELETE", "PATCH"]);
const WRITE_UNITS = 2;

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  // X-RateLimit-Retry-After is seconds until the limit is refreshed (RATE_DOC): the window's reset, as a delta.
  const family = readLimitFamily(ctx, NAMES, "delta-seconds");
  const budget = family.budget && { ...family.budget, windowMs: WINDOW_SECONDS * 1000, requestUnits: WRITE_METHODS.has(ctx.method) ? WRITE_UNITS : 1 };
  // No reset is passed on: a 401 or 403 that shows a spent minute is still an access error (ERRORS_DOC).
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget, reset: null });
  const wait = longestWait(retryAfter, family.reset) ?? docWait(WINDOW_SECONDS);
  const shown = budget ? ` (${budget.remaining}${budget.limit === null ? "" : ` of ${budget.limit}`} left)` : "";
  return throttledBy("burst", wait, {
    budget,
    reason: `Help Scout 429: the account's requests for this minute are spent${shown}, writes counting 2; ${describeWait(wait)}.`,
  });
}

export const helpscout: Dialect = {
  id: "helpscout",
  label: "Help Scout Mailbox API",
  hosts: ["api.helpscout.net"],
  docs: [RATE_DOC, ERRORS_DOC, AUTH_DOC, LEGACY_DOC, SDK_SOURCE],
  interpret,
};
