/**
 * ClickUp's API (api.clickup.com, /api/v2 and /api/v3). One limit: requests per minute per token,
 * personal (pk_...) or OAuth alike, set by the plan of the Workspace that hosts the token: 100 per
 * minute on Free Forever, Unlimited and Business, 1,000 on Business Plus, 10,000 on Enterprise.
 * Over it, a 429 whose headers give X-RateLimit-Limit ("current rate limit for the token"),
 * X-RateLimit-Remaining ("requests remaining in the current rate limit window") and
 * X-RateLimit-Reset ("time when the rate limit will reset, in Unix timestamp format") (LIMITS_DOC,
 * ERRORS_DOC "Rate limit reached"). The docs list the headers for the 429 only; public clients read
 * them from every answer and take the reset as epoch seconds (clickupython, CLIENT_SOURCE: the
 * value goes to datetime.fromtimestamp), so a success shows the token's budget too.
 * https://developer.clickup.com/docs/rate-limits
 * https://developer.clickup.com/docs/common_errors
 * https://github.com/Imzachjohnson/clickupython/pull/61
 *
 * The 429's body is { "err": "Rate limit reached", "ECODE": "APP_002" }: the message is ERRORS_DOC's
 * heading, the code is not in ClickUp's docs and is known only from public client code that quotes
 * it, so it is read as the same limit whatever the status it comes with.
 *
 * So a 429 (or APP_002) is the token's minute window: wait until X-RateLimit-Reset (or a
 * Retry-After, the longer), else the documented minute (doc:fixed-60s). The token is the scope, and
 * the client's scope already holds the credential, so no part is named. Every other answer keeps
 * its status's meaning: the OAUTH_* codes (missing, revoked or unauthorized tokens, ERRORS_DOC) are
 * 401s that stay final even when the minute's count shows 0, since ClickUp says its limit with a 429.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readLimitFamily, readRetryAfter, type ResetKind } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://developer.clickup.com/docs/rate-limits";
const ERRORS_DOC = "https://developer.clickup.com/docs/common_errors";
const CLIENT_SOURCE = "https://github.com/Imzachjohnson/clickupython/pull/61";

const NAMES = { limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining", reset: "x-ratelimit-reset" };
/** "100 requests per minute per token" and the plans above it count per minute too (LIMITS_DOC). */
const WINDOW_SECONDS = 60;
/** The body's code of the rate-limit 429, as public client code quotes it (not in ClickUp's docs). */
const RATE_LIMIT_CODE = "APP_002";
/** A Unix time this large (about 2001-09 in ms, or the year 33658 in s) can only be milliseconds. */
const EPOCH_MS_FROM = 1e12;

/**
 * X-RateLimit-Reset is a Unix timestamp (LIMITS_DOC), seconds as the clients read it. A value only
 * milliseconds can be (some write-ups call it ms) is read as such, and said so, rather than put in
 * tens of thousands of years ahead.
 */
function resetKind(ctx: SignalContext): ResetKind {
  const raw = ctx.header(NAMES.reset)?.trim();
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < EPOCH_MS_FROM) return "epoch-seconds";
  ctx.deviate("x-ratelimit-reset read as epoch milliseconds (a Unix time in ms where the docs give a Unix timestamp)");
  return "epoch-ms";
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const family = readLimitFamily(ctx, NAMES, resetKind(ctx));
  const budget = family.budget;
  // A fresh object: the window's length is set on it, not spread into a copy (a per-answer path).
  if (budget) budget.windowMs = WINDOW_SECONDS * 1000;
  const code = asString(field(ctx.body, "ECODE"))?.trim().toUpperCase();
  if (ctx.status !== 429 && code !== RATE_LIMIT_CODE) {
    // No reset is passed on: a 401 or 403 with the minute's count at 0 is an access error here
    // (OAUTH_* codes, ERRORS_DOC), not generic's "spent budget" throttle; ClickUp throttles with 429.
    return interpretStatus(ctx, { retryAfter, budget, reset: null });
  }
  const wait = longestWait(retryAfter, family.reset) ?? docWait(WINDOW_SECONDS);
  const shown = budget ? ` (${budget.remaining} of ${budget.limit ?? "?"} left)` : "";
  return throttledBy("burst", wait, {
    scope: {},
    budget,
    reason: `ClickUp ${ctx.status}${code ? ` ${code}` : ""}: the token's requests per minute are spent${shown}; ${describeWait(wait)}.`,
  });
}

export const clickup: Dialect = {
  id: "clickup",
  label: "ClickUp",
  hosts: ["api.clickup.com"],
  docs: [LIMITS_DOC, ERRORS_DOC, CLIENT_SOURCE],
  interpret,
};
