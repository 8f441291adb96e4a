/**
 * Docusign's eSignature REST API on the docusign.net hosts: demo.docusign.net (the developer
 * environment), www, na1 to na4, eu, au and ca.docusign.net (production accounts' base URIs), and
 * api(-d).docusign.net (the Admin API): "Unless otherwise documented, Docusign APIs share the same
 * resource limits as the eSignature REST API" (LIMITS_DOC).
 * https://developers.docusign.com/platform/resource-limits
 * https://developers.docusign.com/docs/esign-rest-api/esign101/rules-and-limits/
 * https://developers.docusign.com/docs/esign-rest-api/esign101/rules-and-limits/responses
 * https://developers.docusign.com/docs/esign-rest-api/esign101/error-codes/
 *
 * Two limits per account, each counting every app of the account (LIMITS_DOC):
 * - An hourly quota, 3,000 calls by default (raised per account, LIMIT_MANAGEMENT_DOC): "Hourly API
 *   usage refreshes at the top of each hour"; over it, "you will receive an exception for each
 *   additional call until the start of the next hour" with errorCode HOURLY_APIINVOCATION_LIMIT_EXCEEDED
 *   and "The maximum number of hourly API invocations has been exceeded" (TRENCHES_BLOG). Every answer
 *   shows it: X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset, "The timestamp when the
 *   rate limit will reset" (LIMITS_DOC). The timestamp is epoch seconds: Docusign's own code examples
 *   read it as `new Date(Number(reset) * 1000)` (EXAMPLE_SOURCE); the blog's wording, "the remaining
 *   window before the rate limit resets" (TRENCHES_BLOG), is why a value no epoch time can be (an hour
 *   of seconds or less) is read as seconds left, and said so.
 * - A burst limit over 30 seconds, "200 in the developer environment, or 500 in the production
 *   environment", shown in X-BurstLimit-Limit and X-BurstLimit-Remaining, with no reset header
 *   (LIMITS_DOC); over it, errorCode BURST_APIINVOCATION_LIMIT_EXCEEDED.
 * The error codes' status: the error-code list gives "429 Too Many Requests: API limit was reached"
 * (ERRORS_DOC), but public client code that met them on real accounts finds them on HTTP 400 ("DocuSign
 * returns this as HTTP 400 today and is mid-migration to 429", STATUS_SOURCE, a connector's comment,
 * not Docusign's word). So the errorCode decides, whatever the 4xx.
 *
 * So a spent hour is a quota: not retried in this run, deferred to X-RateLimit-Reset (the top of the
 * next hour on the server's clock where the answer shows no reset). A spent burst is retried after
 * the 30-second window. Both are the account's (the path's accounts/{accountId}): a token that reaches
 * several accounts spends each one's own limits.
 *
 * Envelope limits (RULES_DOC, ENVELOPE_BLOG): GETs and PUTs of one envelope and its objects are limited
 * "on both a sliding 30 second window and on an hourly basis", answered with a 400 whose errorCode is
 * Hourly_Envelope_Polling_Limit_Exceeded, Burst_Envelope_Polling_Limit_Exceeded,
 * Hourly_APIInvocation_Envelope_Limit_Exceeded or Burst_APIInvocation_Envelope_Limit_Exceeded (the
 * codes' case varies between pages, so codes are compared upper-cased). They hold back that envelope
 * only: read as retryable (after 30 s, or an hour, the latest an hourly window of undisclosed alignment
 * can end) without holding the account's other calls, as Dropbox's namespace lock is.
 * https://developers.docusign.com/tools/api-usage-center/limit-management
 * https://www.docusign.com/blog/developers/dsdev-from-the-trenches-api-rate-limits
 * https://www.docusign.com/blog/developers/service-protection-new-api-errors-excessive-polling-and-envelope-updates
 * https://github.com/docusign/code-examples-node/blob/master/lib/eSignature/examples/envelopeInfo.js
 * https://github.com/ConductorOne/baton-docusign/blob/main/pkg/client/helper.go
 *
 * Other answers as the generic dialect reads them: 401 and 403 ("user lacks permission to complete
 * this action", RESPONSES_DOC) are final even where the hour's count shows 0 (the limit has its own
 * error code), a 400 with another errorCode is a bad request.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readCount, readExplicitWaits, readLimitFamily, waitUntil, type ResetKind, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, docWait, retryableBy, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://developers.docusign.com/platform/resource-limits";
const RULES_DOC = "https://developers.docusign.com/docs/esign-rest-api/esign101/rules-and-limits/";
const RESPONSES_DOC = "https://developers.docusign.com/docs/esign-rest-api/esign101/rules-and-limits/responses";
const ERRORS_DOC = "https://developers.docusign.com/docs/esign-rest-api/esign101/error-codes/";
const LIMIT_MANAGEMENT_DOC = "https://developers.docusign.com/tools/api-usage-center/limit-management";
const TRENCHES_BLOG = "https://www.docusign.com/blog/developers/dsdev-from-the-trenches-api-rate-limits";
const ENVELOPE_BLOG = "https://www.docusign.com/blog/developers/service-protection-new-api-errors-excessive-polling-and-envelope-updates";
const EXAMPLE_SOURCE = "https://github.com/docusign/code-examples-node/blob/master/lib/eSignature/examples/envelopeInfo.js";
const STATUS_SOURCE = "https://github.com/ConductorOne/baton-docusign/blob/main/pkg/client/helper.go";

const HOURLY = { limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining", reset: "x-ratelimit-reset" };
const BURST_LIMIT = "x-burstlimit-limit";
const BURST_REMAINING = "x-burstlimit-remaining";
const HOUR_MS = 3_600_000;
/** "a 30-second burst limit" (LIMITS_DOC); no reset is sent, so the whole window is the wait. */
const BURST_WINDOW_SECONDS = 30;

const HOURLY_CODE = "HOURLY_APIINVOCATION_LIMIT_EXCEEDED";
const BURST_CODE = "BURST_APIINVOCATION_LIMIT_EXCEEDED";
/** The envelope limits' codes (RULES_DOC, ENVELOPE_BLOG), upper-cased. */
const ENVELOPE_HOURLY_CODES: ReadonlySet<string> = new Set(["HOURLY_ENVELOPE_POLLING_LIMIT_EXCEEDED", "HOURLY_APIINVOCATION_ENVELOPE_LIMIT_EXCEEDED"]);
const ENVELOPE_BURST_CODES: ReadonlySet<string> = new Set(["BURST_ENVELOPE_POLLING_LIMIT_EXCEEDED", "BURST_APIINVOCATION_ENVELOPE_LIMIT_EXCEEDED"]);
/** A limit code in a body that is not JSON (the API answers XML too, RESPONSES_DOC): bounded, so the scan stays linear. */
const CODE_IN_TEXT = /\b(?:HOURLY|BURST)_[A-Z_]{1,40}_LIMIT_EXCEEDED\b/i;
/** The hourly limit's message, for an answer whose code is missing (TRENCHES_BLOG). */
const HOURLY_MESSAGE = /maximum number of hourly API invocations/i;
const TEXT_SCAN_CHARS = 2048;
/** An envelope limit's window is hourly, its alignment undisclosed (ENVELOPE_BLOG): an hour is the latest it can end. */
const ENVELOPE_HOUR_AT_THE_LATEST: Wait = { waitMs: HOUR_MS, source: "doc:hourly-window-at-the-latest" };

const ACCOUNT_IN_PATH = /\/accounts\/([^/]+)/i;
const ENVELOPE_IN_PATH = /\/envelopes\/([^/]+)/i;

/** The account a request spends: both limits are counted per account (LIMITS_DOC). */
function accountScope(path: string): ScopeParts {
  const account = ACCOUNT_IN_PATH.exec(path)?.[1];
  return account ? { account: account.toLowerCase() } : {};
}

/** The errorCode of a 4xx or 5xx: the JSON field, else a limit code or the hourly message in the text (an XML body). */
function errorCode(ctx: SignalContext): string | undefined {
  if (ctx.status < 400) return undefined;
  const code = asString(field(ctx.body, "errorCode"))?.trim();
  if (code) return code.toUpperCase();
  const text = ctx.bodyText.length > TEXT_SCAN_CHARS ? ctx.bodyText.slice(0, TEXT_SCAN_CHARS) : ctx.bodyText;
  const inText = CODE_IN_TEXT.exec(text)?.[0];
  if (inText) return inText.toUpperCase();
  return HOURLY_MESSAGE.test(text) ? HOURLY_CODE : undefined;
}

/** X-RateLimit-Reset is epoch seconds (EXAMPLE_SOURCE); a value of an hour of seconds or less can only be the seconds left. */
function resetKind(ctx: SignalContext): ResetKind {
  const raw = ctx.header(HOURLY.reset)?.trim();
  if (raw === undefined || !/^\d{1,4}$/.test(raw) || Number(raw) > HOUR_MS / 1000) return "epoch-seconds";
  ctx.deviate(`${HOURLY.reset} ${raw} read as seconds left in the hour (documented as a timestamp, but no epoch time is that small)`);
  return "delta-seconds";
}

interface Limits {
  hourly: Budget | null;
  hourlyReset: Wait | null;
  burst: Budget | null;
}

function readLimits(ctx: SignalContext): Limits {
  const family = readLimitFamily(ctx, HOURLY, resetKind(ctx));
  const burstLeft = readCount(ctx, BURST_REMAINING);
  return {
    hourly: family.budget && { ...family.budget, windowMs: HOUR_MS },
    hourlyReset: family.reset,
    burst: burstLeft === null ? null : { remaining: burstLeft, limit: readCount(ctx, BURST_LIMIT), resetAt: null, source: BURST_REMAINING, windowMs: BURST_WINDOW_SECONDS * 1000 },
  };
}

/** The hour paces; the burst window is shown instead while it is spent (it binds for those 30 s). */
function pacingBudget(limits: Limits): Budget | null {
  return limits.burst?.remaining === 0 ? limits.burst : (limits.hourly ?? limits.burst);
}

/** "Hourly API usage refreshes at the top of each hour" (LIMITS_DOC), on the server's clock. */
function untilTopOfHour(ctx: SignalContext): Wait {
  const nextHourMs = (Math.floor(ctx.serverNowMs / HOUR_MS) + 1) * HOUR_MS;
  return { waitMs: waitUntil(ctx, nextHourMs), source: "doc:hourly-reset-top-of-hour" };
}

function hourlyQuota(ctx: SignalContext, limits: Limits, what: string): Interpretation {
  // A reset already past while the server still refuses says nothing of when the hour turns: the clock does.
  const wait = limits.hourlyReset && limits.hourlyReset.waitMs > 0 ? limits.hourlyReset : untilTopOfHour(ctx);
  return throttledBy("quota", wait, {
    retryable: false,
    scope: accountScope(ctx.path),
    budget: limits.hourly,
    reason: `Docusign ${ctx.status} ${what}: the account's hourly API calls are spent (every app of the account counts them); they come back at the top of the hour, so the work waits for that (${describeWait(wait)}) and is not retried in this run.`,
  });
}

function burstThrottle(ctx: SignalContext, limits: Limits, what: string): Interpretation {
  const wait = docWait(BURST_WINDOW_SECONDS);
  return throttledBy("burst", wait, {
    scope: accountScope(ctx.path),
    budget: limits.burst,
    reason: `Docusign ${ctx.status} ${what}: the account's 30-second burst limit is spent; ${describeWait(wait)}.`,
  });
}

/** One envelope polled or updated too often: that envelope waits, the account's other calls do not. */
function envelopeLimit(ctx: SignalContext, code: string): Interpretation {
  const hourly = ENVELOPE_HOURLY_CODES.has(code);
  const wait = hourly ? ENVELOPE_HOUR_AT_THE_LATEST : docWait(BURST_WINDOW_SECONDS);
  const envelope = ENVELOPE_IN_PATH.exec(ctx.path)?.[1];
  return retryableBy(hourly ? "quota" : "burst", wait, {
    scope: { ...accountScope(ctx.path), ...(envelope ? { envelope: envelope.toLowerCase() } : {}) },
    budget: null,
    reason: `Docusign ${ctx.status} ${code}: this envelope was ${code.includes("POLLING") ? "polled" : "updated"} too often ${hourly ? "in the last hour" : "in the last 30 s"}; only its own calls wait (${describeWait(wait)}), not the account's others.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const limits = readLimits(ctx);
  const code = errorCode(ctx);
  if (code === HOURLY_CODE) return hourlyQuota(ctx, limits, code);
  if (code === BURST_CODE) return burstThrottle(ctx, limits, code);
  if (code !== undefined && (ENVELOPE_HOURLY_CODES.has(code) || ENVELOPE_BURST_CODES.has(code))) return envelopeLimit(ctx, code);
  const retryAfter = readExplicitWaits(ctx);
  if (ctx.status === 429) {
    // No limit code: the counts tell which limit it was.
    if (limits.hourly?.remaining === 0) return hourlyQuota(ctx, limits, "with X-RateLimit-Remaining 0");
    if (limits.burst?.remaining === 0) return burstThrottle(ctx, limits, "with X-BurstLimit-Remaining 0");
    return throttledBy("burst", retryAfter, {
      scope: accountScope(ctx.path),
      budget: pacingBudget(limits),
      reason: `Docusign 429${code ? ` ${code}` : ""}: an API limit was reached, neither count shows which; ${describeWait(retryAfter)}.`,
    });
  }
  // No reset is passed: a 401 or 403 that shows the hour spent is still an access error (the limit has its code).
  const budget = pacingBudget(limits);
  return interpretStatus(ctx, { retryAfter, budget, reset: null }, budget === null ? undefined : accountScope(ctx.path));
}

export const docusign: Dialect = {
  id: "docusign",
  label: "Docusign eSignature",
  hosts: [".docusign.net"],
  docs: [LIMITS_DOC, RULES_DOC, RESPONSES_DOC, ERRORS_DOC, LIMIT_MANAGEMENT_DOC, TRENCHES_BLOG, ENVELOPE_BLOG, EXAMPLE_SOURCE, STATUS_SOURCE],
  interpret,
  requestScope: ({ path }) => accountScope(path),
};
