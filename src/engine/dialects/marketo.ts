/**
 * Marketo (Adobe Marketo Engage) REST. Every limit answers HTTP 200: the body has success false
 * and an errors array of { code, message }, the code a quoted integer (ERRORS_DOC, "Response-Level
 * Errors"). So a throttle is read from the body of a success, and read as one however the status
 * looks.
 * https://experienceleague.adobe.com/en/docs/marketo-developer/marketo/rest/error-codes
 * https://experienceleague.adobe.com/en/docs/marketo-developer/marketo/rest/marketo-integration-best-practices
 *
 * Per instance (the Munchkin id's host, <munchkin>.mktorest.com), LIMITS_DOC documents:
 * - 606 "Max rate limit '100' exceeded with in '20' secs": more than 100 calls in the past 20 s, a
 *   rolling window; the message names the limit and the window, no reset is sent.
 * - 615 "Concurrent access limit reached": more than ten calls in flight at once.
 * - 607 "Daily quota reached": the subscription's calls per day (50,000 by default), reset daily
 *   at 12:00 AM CST. 1029 with "Export daily quota exceeded" is the bulk extract's daily quota.
 * - 6xx codes mean the request failed completely and was not executed (ERRORS_DOC), so a write so
 *   answered may be sent again; 604 (timed out) and 608 (temporarily unavailable) are transient.
 * - 601 and 602 are an invalid or expired access token, 603 a permission the API user lacks: not
 *   limits, and not retried as such.
 */
import type { SignalContext } from "../context";
import { asArray, asNumber, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readRetryAfter } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, retryableBy, throttledBy, untilDailyReset } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const ERRORS_DOC = "https://experienceleague.adobe.com/en/docs/marketo-developer/marketo/rest/error-codes";
const LIMITS_DOC = "https://experienceleague.adobe.com/en/docs/marketo-developer/marketo/rest/marketo-integration-best-practices";

/** LIMITS_DOC: "100 calls per 20 seconds", the figures a 606 without readable ones falls back to. */
const DOCUMENTED_RATE = { limit: 100, windowMs: 20_000 };
/**
 * The daily quotas reset "at 12:00AM CST" (LIMITS_DOC): 06:00 UTC. Read as US Central time, the
 * reset is an hour earlier while daylight saving time holds (05:00 UTC); the later instant is the
 * one sure to be past it.
 */
const DAILY_RESET_UTC_OFFSET_MS = 6 * 3_600_000;

interface MarketoError {
  code: string;
  message: string;
}

/** The errors of a response-level failure ({ success: false, errors: [...] }); none otherwise. */
function readErrors(ctx: SignalContext): MarketoError[] {
  if (field(ctx.body, "success") !== false) return [];
  const errors: MarketoError[] = [];
  for (const item of asArray(field(ctx.body, "errors"))) {
    const raw = field(item, "code");
    // The code is a quoted integer ("606"); a bare number reads the same.
    const code = typeof raw === "number" ? asNumber(raw) : asString(raw)?.trim();
    if (code !== undefined) errors.push({ code: String(code), message: asString(field(item, "message")) ?? "" });
  }
  return errors;
}

/** 606's message names the limit and the window: "Max rate limit '100' exceeded with in '20' secs". */
function rateFromMessage(ctx: SignalContext, message: string): { limit: number; windowMs: number } {
  const m = /'(\d+)'[^']*'(\d+)'\s*sec/i.exec(message);
  const limit = m ? Number(m[1]) : 0;
  const windowMs = m ? Number(m[2]) * 1000 : 0;
  if (limit > 0 && windowMs > 0) return { limit, windowMs };
  ctx.ignore("errors[].message", message, "606 without the limit and window in it; Marketo's documented 100 per 20 s is used");
  return DOCUMENTED_RATE;
}

function dailyQuota(ctx: SignalContext, error: MarketoError, scope: ScopeParts, what: string): Interpretation {
  const wait = untilDailyReset(ctx, DAILY_RESET_UTC_OFFSET_MS, "doc:daily-reset-12am-cst");
  return throttledBy("quota", wait, {
    retryable: false,
    scope: { ...scope, limit: "daily" },
    writeNotProcessed: true,
    reason: `Marketo ${error.code} (${error.message || what}): the ${what} is spent; it resets daily at 12:00 AM CST, so the work waits for that (${describeWait(wait)}) and is not retried in this run.`,
  });
}

function interpretError(ctx: SignalContext, error: MarketoError, scope: ScopeParts): Interpretation | null {
  const retryAfter = readRetryAfter(ctx);
  switch (error.code) {
    case "606": {
      // A rolling window gives back every call it counted within its own length: waiting that long
      // is sure to find room, as HubSpot's SDK does for its 10-second rolling limit (hubspot.ts).
      const rate = rateFromMessage(ctx, error.message);
      const wait = retryAfter ?? { waitMs: rate.windowMs, source: "body:errors[].message" };
      const budget: Budget = { remaining: 0, limit: rate.limit, resetAt: null, source: "body:errors[].message", windowMs: rate.windowMs };
      return throttledBy("burst", wait, {
        scope,
        budget,
        writeNotProcessed: true,
        reason: `Marketo 606: more than ${rate.limit} calls in the past ${rate.windowMs / 1000} s (a rolling window); ${describeWait(wait)}.`,
      });
    }
    case "615":
      return throttledBy("concurrency", retryAfter, {
        scope,
        writeNotProcessed: true,
        reason: `Marketo 615 (${error.message || "Concurrent access limit reached"}): more calls in flight than the instance allows (ten, LIMITS_DOC); a place frees when an answer comes, so ${describeWait(retryAfter)}.`,
      });
    case "607":
      return dailyQuota(ctx, error, scope, "daily API quota");
    case "1029":
      // "Too many jobs in queue", "Export daily quota exceeded" or "Job already queued" (bulk extract, ERRORS_DOC).
      if (/quota/i.test(error.message)) return dailyQuota(ctx, error, scope, "bulk extract's daily quota");
      return null;
    case "604":
    case "608":
      return retryableBy("server", retryAfter, {
        writeNotProcessed: true,
        scope,
        reason: `Marketo ${error.code} (${error.message || (error.code === "604" ? "Request timed out" : "API Temporarily Unavailable")}): transient, and the request was not executed; retry with backoff.`,
      });
    case "601":
    case "602":
      return { throttled: false, retryable: false, limitType: "none", minWaitMs: null, waitSource: null, writeNotProcessed: true, scope, reason: `Marketo ${error.code} (${error.message || "access token invalid or expired"}): not a limit; the access token must be renewed before the request is sent again.` };
    case "603":
      return { throttled: false, retryable: false, limitType: "permission", minWaitMs: null, waitSource: null, writeNotProcessed: true, scope, reason: `Marketo 603 (${error.message || "Access denied"}): the API user lacks the permission, or the instance allows API calls from listed IPs only; not a limit.` };
    default:
      return null;
  }
}

function interpretMarketo(ctx: SignalContext): Interpretation {
  // The limits are per instance, and the instance is the host: the base scope already holds it.
  const scope: ScopeParts = {};
  const errors = readErrors(ctx);
  // The first error that names a limit speaks for the response; the others are listed in its order.
  for (const error of errors) {
    const read = interpretError(ctx, error, scope);
    if (read !== null) return read;
  }
  return interpretStatus(ctx, { retryAfter: readRetryAfter(ctx), budget: null, reset: null });
}

export const marketo: Dialect = {
  id: "marketo",
  // Its limits answer 200 (ERRORS_DOC): every success is read.
  readsSuccesses: true,
  label: "Marketo REST",
  hosts: [".mktorest.com"],
  docs: [ERRORS_DOC, LIMITS_DOC],
  interpret: interpretMarketo,
};
