/**
 * Vimeo's API (api.vimeo.com, the API 3.x; OPENAPI_SPEC's one server). Rate limits are "the maximum
 * number of requests that can be made per minute to the API by a user"; over them, "they are
 * returned a 429 error and temporarily prevented from making requests for up to a minute", and
 * developers "should ... cease making requests to the API when a 429 error is returned" (HELP_DOC,
 * BEST_PRACTICES_DOC: "until the rate limit ban has been lifted").
 * https://help.vimeo.com/hc/en-us/articles/12427783954065-Rate-limits
 * https://vimeo.zendesk.com/hc/en-us/articles/360042882251-API-Best-Practices
 * https://developer.vimeo.com/guidelines/rate-limiting
 *
 * Every answer carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset. The reset
 * is no number: it is the "date/time the rate limit resets in UTC, formatted per ISO 8601", and on
 * a 429 "the date/time the ban will be lifted" (Vimeo's notice of August 2016 that started the
 * enforcement, quoted in NOTICE_ISSUE and VIMEO_DOTNET_ISSUE). Vimeo's own Python client prints
 * that value as the time the limit "will reset on" (PY_CLIENT, APIRateLimitExceededFailure), and a
 * third-party .NET client parses it as a date (DOTNET_CLIENT, DateTime.Parse). The older Advanced
 * API (v2, vimeo.com/api/rest) showed a UNIX time there (1369058397, the stored RATE_DOC of that
 * API): a value only an epoch time can be is still read as one, and said so.
 * https://github.com/vimeo/vimeo.py/issues/86
 * https://github.com/mfilippov/vimeo-dot-net/issues/59
 * https://github.com/vimeo/vimeo.py/blob/master/vimeo/exceptions.py
 * https://github.com/mfilippov/vimeo-dot-net/blob/fc4e17f2486233dcda465ff5e908dafb3bd1b132/src/VimeoDotNet/VimeoClient_RateLimit.cs
 *
 * So a 429 waits until X-RateLimit-Reset (a longer Retry-After still wins, classify's floor), and
 * the documented minute where no reset is shown. The per-minute window is a burst, retried after
 * its wait; a reset that lies far ahead (the notice's bans of about an hour) is deferred rather
 * than slept when the run cannot wait that long, and is still no quota.
 *
 * Two documented error codes speak of limits (OPENAPI_SPEC, Vimeo's OpenAPI description of the API,
 * whose error body is {error, developer_message, error_code, link}):
 * - 429 error_code 9006, "The authenticated user is rate-limited from following other users": a
 *   limit of that one action, not of the user's requests, so its wait is Retry-After or the
 *   documented minute, never the reset of the request budget shown beside it.
 * - 403 error_code 4102, "The authenticated user's allotted quota has been reached", and 4101,
 *   "The authenticated user's maximum disk space has been reached", on the upload endpoints: the
 *   upload quota is periodic (upload_quota.periodic.reset_date, shown only on the user's own record,
 *   not in the error) and the disk space is the plan's, freed only by deleting videos or upgrading.
 *   Both are quotas, never retried in this run, and with no reset in the answer they are not
 *   deferred to one either.
 * https://github.com/vimeo/openapi/blob/master/api.yaml
 *
 * Other 401 and 403 answers are access errors (8003 "The user credentials are invalid", 3417 "The
 * authenticated user can't follow other users") and stay final: Vimeo's throttle is the 429, so a
 * 403 is not read as one even beside a spent budget. 5xx are read as the generic dialect reads them.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readLimitFamily, readRetryAfter, type ResetKind, type Wait } from "../signals";
import type { Budget, Interpretation } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const HELP_DOC = "https://help.vimeo.com/hc/en-us/articles/12427783954065-Rate-limits";
const BEST_PRACTICES_DOC = "https://vimeo.zendesk.com/hc/en-us/articles/360042882251-API-Best-Practices";
const RATE_DOC = "https://developer.vimeo.com/guidelines/rate-limiting";
const NOTICE_ISSUE = "https://github.com/vimeo/vimeo.py/issues/86";
const VIMEO_DOTNET_ISSUE = "https://github.com/mfilippov/vimeo-dot-net/issues/59";
const PY_CLIENT = "https://github.com/vimeo/vimeo.py/blob/master/vimeo/exceptions.py";
const DOTNET_CLIENT = "https://github.com/mfilippov/vimeo-dot-net/blob/fc4e17f2486233dcda465ff5e908dafb3bd1b132/src/VimeoDotNet/VimeoClient_RateLimit.cs";
const OPENAPI_SPEC = "https://github.com/vimeo/openapi/blob/master/api.yaml";

const NAMES = { limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining", reset: "x-ratelimit-reset" };
/** "prevented from making requests for up to a minute" (HELP_DOC): the wait where no reset is shown. */
const BAN_SECONDS = 60;
/** 429: "The authenticated user is rate-limited from following other users" (OPENAPI_SPEC). */
const FOLLOW_LIMITED = 9006;
/** 403 on uploads: 4102 "allotted quota has been reached", 4101 "maximum disk space has been reached" (OPENAPI_SPEC). */
const UPLOAD_QUOTA = 4102;
const DISK_SPACE = 4101;
/** A reset past this many seconds since 1970 (about 31 years) is an epoch time, not a date-time. */
const EPOCH_SECONDS_FROM = 1e9;

/** error_code of Vimeo's error body, a number in the spec (also read when sent as a string of digits). */
function errorCode(ctx: SignalContext): number | null {
  const raw = field(ctx.body, "error_code");
  if (typeof raw === "number" && Number.isInteger(raw)) return raw;
  const text = asString(raw)?.trim();
  return text !== undefined && /^\d{1,9}$/.test(text) ? Number(text) : null;
}

/** X-RateLimit-Reset is an ISO 8601 date-time; a whole number that only an epoch time can be is read as one, and said so. */
function resetKind(ctx: SignalContext): ResetKind {
  const raw = ctx.header(NAMES.reset)?.trim();
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < EPOCH_SECONDS_FROM) return "iso";
  ctx.deviate("x-ratelimit-reset read as epoch seconds (a UNIX time, as the v2 API sent, where API 3.x sends an ISO 8601 date-time)");
  return "epoch-seconds";
}

/** A spent upload quota or disk space: a quota with no reset in the answer, so not retried and not deferred. */
function uploadQuota(ctx: SignalContext, code: number, budget: Budget | null): Interpretation {
  const what =
    code === UPLOAD_QUOTA
      ? "the user's upload quota for the period is spent (its reset date is on the user's own record, upload_quota.periodic.reset_date, not in this answer)"
      : "the user's maximum disk space is reached (it frees only when videos are deleted or the plan is upgraded)";
  return throttledBy("quota", null, {
    retryable: false,
    scope: { limit: code === UPLOAD_QUOTA ? "upload-quota" : "disk-space" },
    budget,
    reason: `Vimeo ${ctx.status} error_code ${code}: ${what}; not retried in this run.`,
  });
}

function rateLimited(ctx: SignalContext, code: number | null, retryAfter: Wait | null, budget: Budget | null, reset: Wait | null): Interpretation {
  if (code === FOLLOW_LIMITED) {
    // A limit of following users: the request budget's reset says nothing of it.
    const wait = retryAfter ?? docWait(BAN_SECONDS);
    return throttledBy("burst", wait, {
      scope: { limit: "following" },
      budget,
      reason: `Vimeo 429 error_code ${FOLLOW_LIMITED}: the user is rate-limited from following other users (a limit of that action, not of the user's requests); ${describeWait(wait)}.`,
    });
  }
  const wait = longestWait(retryAfter, reset) ?? docWait(BAN_SECONDS);
  const shown = budget ? ` (${budget.remaining} of ${budget.limit ?? "?"} left)` : "";
  return throttledBy("burst", wait, {
    budget,
    reason: `Vimeo 429: the user's request rate limit is exceeded${shown} and requests are refused until the ban is lifted; ${describeWait(wait)}${wait.source === NAMES.reset ? ", when X-RateLimit-Reset says the ban lifts" : ""}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const family = readLimitFamily(ctx, NAMES, resetKind(ctx));
  const code = errorCode(ctx);
  if (ctx.status === 429) return rateLimited(ctx, code, retryAfter, family.budget, family.reset);
  if (ctx.status >= 400 && ctx.status < 500 && (code === UPLOAD_QUOTA || code === DISK_SPACE)) return uploadQuota(ctx, code, family.budget);
  // The reset is not passed on: Vimeo refuses with a 429, so a 401 or 403 beside a spent budget is
  // still an access error (interpretStatus would read it as a throttle until the reset).
  return interpretStatus(ctx, { retryAfter, budget: family.budget, reset: null });
}

export const vimeo: Dialect = {
  id: "vimeo",
  label: "Vimeo",
  hosts: ["api.vimeo.com"],
  docs: [HELP_DOC, BEST_PRACTICES_DOC, RATE_DOC, NOTICE_ISSUE, VIMEO_DOTNET_ISSUE, PY_CLIENT, DOTNET_CLIENT, OPENAPI_SPEC],
  interpret,
};
