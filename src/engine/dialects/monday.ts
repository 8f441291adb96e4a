/**
 * monday.com's GraphQL API. Its limits answer with an error in the body, whose status_code says 429
 * whether or not the HTTP status does (RATE_DOC; CHANGELOG_DOC): errors[].extensions.code names the limit
 * and retry_in_seconds the wait; the API versions before 2025 wrote the complexity limit as
 * { error_code: "ComplexityException", error_message: "... reset in N seconds" } instead.
 * - COMPLEXITY_BUDGET_EXHAUSTED / ComplexityException: the per-minute budget of complexity points
 *   (a sliding minute), a cost limit.
 * - Rate Limit Exceeded (RATE_LIMIT_EXCEEDED): the minute's call limit, with a Retry-After header.
 * - maxConcurrencyExceeded: calls in flight at once.
 * - IP_RATE_LIMIT_EXCEEDED: 5,000 requests per 10 s from one IP.
 * - DAILY_LIMIT_EXCEEDED: the account's calls per day, reset at midnight UTC: a quota.
 * The complexity figures an error may carry are points, which no count of requests follows, so
 * they go to the reason and not to a budget.
 * https://developer.monday.com/api-reference/docs/rate-limits
 * https://support.monday.com/hc/en-us/articles/26471164460690-API-Rate-Limits
 * https://developer.monday.com/api-reference/changelog/breaking-change-updated-complexity-budget-exhausted-error
 */
import type { SignalContext } from "../context";
import { asArray, asNumber, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readRetryAfter, type Wait } from "../signals";
import type { Interpretation, LimitType } from "../types";
import { describeWait, longestWait, throttledBy, untilDailyReset } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://developer.monday.com/api-reference/docs/rate-limits";
const SUPPORT_DOC = "https://support.monday.com/hc/en-us/articles/26471164460690-API-Rate-Limits";
const CHANGELOG_DOC = "https://developer.monday.com/api-reference/changelog/breaking-change-updated-complexity-budget-exhausted-error";

interface MondayLimit {
  limitType: LimitType;
  what: string;
}

/** The limits by the code monday.com writes (extensions.code, error_code or the message itself). */
const LIMITS: ReadonlyArray<[RegExp, MondayLimit]> = [
  [/^(COMPLEXITY_BUDGET_EXHAUSTED|ComplexityException)$/i, { limitType: "cost", what: "the minute's complexity budget is spent" }],
  [/^(RATE_LIMIT_EXCEEDED|Rate Limit Exceeded)$/i, { limitType: "burst", what: "the minute's call limit is reached" }],
  [/^maxConcurrencyExceeded$/i, { limitType: "concurrency", what: "too many calls in flight at once" }],
  [/^IP_RATE_LIMIT_EXCEEDED$/i, { limitType: "burst", what: "the IP's 5,000 requests per 10 s are spent" }],
  [/^DAILY_LIMIT_EXCEEDED$/i, { limitType: "quota", what: "the account's daily call limit is reached" }],
];

interface Found {
  limit: MondayLimit;
  code: string;
  retryInSeconds: number | undefined;
  message: string;
}

function limitOf(code: string | undefined): MondayLimit | undefined {
  if (code === undefined) return undefined;
  return LIMITS.find(([pattern]) => pattern.test(code.trim()))?.[1];
}

/** The first error that names a limit: in errors[] (extensions.code, else the message), or the legacy top-level error_code. */
function findLimit(ctx: SignalContext): Found | null {
  for (const item of asArray(field(ctx.body, "errors"))) {
    const extensions = field(item, "extensions");
    const code = asString(field(extensions, "code"));
    const message = asString(field(item, "message")) ?? (typeof item === "string" ? item : "");
    const limit = limitOf(code) ?? limitOf(message);
    if (limit) return { limit, code: code ?? message, retryInSeconds: asNumber(field(extensions, "retry_in_seconds")), message };
  }
  const legacyCode = asString(field(ctx.body, "error_code"));
  const legacy = limitOf(legacyCode);
  if (legacy && legacyCode !== undefined) {
    const message = asString(field(ctx.body, "error_message")) ?? "";
    // "... reset in 3 seconds" (the pre-2025 ComplexityException, CHANGELOG_DOC's predecessor).
    const m = /reset in (\d+(?:\.\d+)?) seconds?/i.exec(message);
    return { limit: legacy, code: legacyCode, retryInSeconds: m ? Number(m[1]) : undefined, message };
  }
  return null;
}

function waitOf(ctx: SignalContext, found: Found): Wait | null {
  if (found.limit.limitType === "quota") {
    // "Wait until the limit resets at midnight UTC" (SUPPORT_DOC), on the server's clock.
    return untilDailyReset(ctx, 0, "doc:daily-reset-midnight-utc");
  }
  const seconds = found.retryInSeconds;
  const bodyWait = seconds !== undefined && seconds >= 0 ? { waitMs: Math.ceil(seconds * 1000), source: "body:retry_in_seconds" } : null;
  return longestWait(readRetryAfter(ctx), bodyWait);
}

function interpretMonday(ctx: SignalContext): Interpretation {
  const found = findLimit(ctx);
  if (found === null) return interpretStatus(ctx, { retryAfter: readRetryAfter(ctx), budget: null, reset: null });
  const wait = waitOf(ctx, found);
  const quota = found.limit.limitType === "quota";
  return throttledBy(found.limit.limitType, wait, {
    retryable: !quota,
    scope: { limit: found.code.toLowerCase().replace(/\s+/g, "_") },
    reason: `monday.com ${found.code}: ${found.limit.what}${quota ? "; it resets at midnight UTC, so the work is not retried in this run" : ""}; ${describeWait(wait)}.`,
  });
}

export const monday: Dialect = {
  id: "monday",
  // A limit's error may come with HTTP 200 (its status_code 429 is in the body): every success is read.
  readsSuccesses: true,
  label: "monday.com",
  hosts: ["api.monday.com"],
  docs: [RATE_DOC, SUPPORT_DOC, CHANGELOG_DOC],
  interpret: interpretMonday,
};
