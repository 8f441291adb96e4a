/**
 * ActiveCampaign API v3, one base URL per account ({account}.api-us1.com/api/3, URL_DOC).
 * https://developers.activecampaign.com/reference/rate-limits
 * https://developers.activecampaign.com/reference/url
 * https://developers.activecampaign.com/reference/errors
 *
 * "Our API has a rate limit of 5 requests per second per account." Over it, "a 429 Too Many
 * Requests response" whose headers give "a duration in seconds (ex. Retry-After: 30) in order to
 * pause the existing requests. Once paused, you may resume sending traffic"; answers also carry
 * "RateLimit-Limit: 5" and "RateLimit-Remaining: 3" (LIMITS_DOC), the old IETF draft names, with
 * no reset named. So the limit is a per-second burst window shared by every API key of the account
 * (each user has a key of their own, all in one account's budget): the Retry-After is the wait,
 * and where a 429 carries none, the documented one-second window is (doc:fixed-1s).
 *
 * The budget is RateLimit-Remaining of RateLimit-Limit over a 1 s window (no reset instant is sent,
 * so the window's length is what a pacer has). The account is the host, so no scope part is named.
 *
 * Other errors are final (ERRORS_DOC): 402 "account payment issues" (billing, not a rate), 403
 * "could not be authenticated or the authenticated user is not authorized", 404 and 422; a 403
 * stays an access error even with RateLimit-Remaining 0, as the docs throttle with 429 only. A
 * client library's issue reports 503s once the 5 per second was reached (mediatoolkit/
 * activecampaign-v3-php#18, client code, not ActiveCampaign's docs): a 503 is read as the generic
 * dialect reads it (retried with backoff, or after its Retry-After), which covers that case too.
 * https://github.com/mediatoolkit/activecampaign-v3-php/issues/18
 *
 * Only the api-us1.com domain is documented; URL_DOC warns that it is "explicitly not a guarantee"
 * for every account (outside the United States especially): such hosts get the generic dialect
 * unless the caller names provider "activecampaign".
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readIetfRateLimit, readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://developers.activecampaign.com/reference/rate-limits";
const URL_DOC = "https://developers.activecampaign.com/reference/url";
const ERRORS_DOC = "https://developers.activecampaign.com/reference/errors";
const LIBRARY_ISSUE = "https://github.com/mediatoolkit/activecampaign-v3-php/issues/18";

/** "5 requests per second per account" (LIMITS_DOC): the window is one second. */
const WINDOW_SECONDS = 1;

/**
 * RateLimit-Remaining of RateLimit-Limit, over the documented one-second window. No reset is
 * documented; one sent anyway (RateLimit-Reset, or the current draft's t=) is read as the draft
 * defines it and kept as a floor on a 429's wait.
 */
function readBudget(ctx: SignalContext): { budget: Budget | null; reset: Wait | null } {
  const { budget, reset } = readIetfRateLimit(ctx);
  if (!budget) return { budget: null, reset };
  return { budget: budget.windowMs === undefined ? { ...budget, windowMs: WINDOW_SECONDS * 1000 } : budget, reset };
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const { budget, reset } = readBudget(ctx);
  // ActiveCampaign throttles with 429 only (LIMITS_DOC): a 401/403 showing remaining 0 is still
  // an access error, so no reset is passed for interpretStatus to read it as a spent window.
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget, reset: null });
  const wait = longestWait(retryAfter, reset) ?? docWait(WINDOW_SECONDS);
  const shown = budget ? ` (${budget.remaining} of ${budget.limit ?? "?"} left)` : "";
  return throttledBy("burst", wait, {
    scope: {},
    budget,
    reason: `ActiveCampaign 429: the account's 5 requests per second are spent${shown}, whichever API key sent them; ${describeWait(wait)}.`,
  });
}

export const activecampaign: Dialect = {
  id: "activecampaign",
  label: "ActiveCampaign",
  hosts: [".api-us1.com"],
  docs: [LIMITS_DOC, URL_DOC, ERRORS_DOC, LIBRARY_ISSUE],
  interpret,
};
