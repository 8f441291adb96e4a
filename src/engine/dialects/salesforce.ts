/**
 * Salesforce REST.
 * https://developer.salesforce.com/docs/atlas.en-us.salesforce_app_limits_cheatsheet.meta/salesforce_app_limits_cheatsheet/salesforce_app_limits_platform_api.htm
 * https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/headers_api_usage.htm
 * https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/errorcodes.htm
 *
 * Both the org's rolling 24-hour allocation (TotalRequests) and the long-running concurrency cap
 * (ConcurrentRequests) answer 403 [{errorCode:"REQUEST_LIMIT_EXCEEDED"}]; the message prefix tells
 * them apart. Every other 403 errorCode (INSUFFICIENT_ACCESS..., API_DISABLED_FOR_ORG) is an
 * access error. No wait is ever supplied. Sforce-Limit-Info "api-usage=used/limit" is the budget.
 * UNABLE_TO_LOCK_ROW ("unable to obtain exclusive access to this record") is record-lock
 * contention: another transaction holds the row, and "other clients have to wait until the
 * transaction completes" (LOCKING_DOC); retried with backoff, like Stripe's lock_timeout.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readRetryAfter } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { budgetFromUsed, describeWait } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC =
  "https://developer.salesforce.com/docs/atlas.en-us.salesforce_app_limits_cheatsheet.meta/salesforce_app_limits_cheatsheet/salesforce_app_limits_platform_api.htm";
const USAGE_DOC = "https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/headers_api_usage.htm";
const LOCKING_DOC = "https://developer.salesforce.com/docs/platform/apex-dev/references/apex-dev/langcon-apex-locking-records.html";

/** Sforce-Limit-Info: api-usage=18/5000 (optionally also per-app-api-usage=17/250(appName=x)) (USAGE_DOC). */
function limitInfoBudget(ctx: SignalContext): Budget | null {
  const raw = ctx.header("sforce-limit-info");
  if (raw === undefined) return null;
  const m = /(?:^|[\s,;])api-usage=(\d+)\s*\/\s*(\d+)/i.exec(raw);
  if (!m || Number(m[2]) <= 0) {
    ctx.ignore("sforce-limit-info", raw, "no api-usage=used/limit");
    return null;
  }
  // A rolling 24-hour window: there is no single reset instant.
  return budgetFromUsed(Number(m[1]), Number(m[2]), "sforce-limit-info");
}

function errorItems(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  return body && typeof body === "object" ? [body] : [];
}

function interpretSalesforce(ctx: SignalContext): Interpretation {
  const budget = limitInfoBudget(ctx);
  const retryAfter = readRetryAfter(ctx);
  const scope: ScopeParts = ctx.host ? { org: ctx.host } : {};
  const items = errorItems(ctx.body);
  const codes = items.map((item) => asString(field(item, "errorCode"))).filter((c): c is string => c !== undefined);
  const limitItem = items.find((item) => field(item, "errorCode") === "REQUEST_LIMIT_EXCEEDED");
  const base = { scope, budget, minWaitMs: null, waitSource: null };

  if (limitItem !== undefined) {
    const message = asString(field(limitItem, "message")) ?? "";
    // "ConcurrentRequests (Concurrent API Requests) Limit exceeded." (also ConcurrentPerOrgLongTxn):
    // too many long-running requests in flight; they finish, so a retry after backoff is right (LIMITS_DOC).
    if (/^\s*Concurrent/i.test(message)) {
      return {
        ...base,
        minWaitMs: retryAfter?.waitMs ?? null,
        waitSource: retryAfter?.source ?? null,
        throttled: true,
        retryable: true,
        limitType: "concurrency",
        reason: `Salesforce concurrent long-running request limit (REQUEST_LIMIT_EXCEEDED, ${message.trim()}); ${describeWait(retryAfter)}.`,
      };
    }
    // "TotalRequests Limit exceeded.": the org's rolling 24-hour API allocation (LIMITS_DOC).
    return {
      ...base,
      throttled: true,
      retryable: false,
      limitType: "quota",
      reason: `Salesforce org API allocation spent (REQUEST_LIMIT_EXCEEDED${message ? `, ${message.trim()}` : ""}); a rolling 24-hour limit with no reset time given, so not retried in this run.`,
    };
  }
  if (codes.includes("UNABLE_TO_LOCK_ROW")) {
    return {
      ...base,
      minWaitMs: retryAfter?.waitMs ?? null,
      waitSource: retryAfter?.source ?? null,
      throttled: false,
      retryable: true,
      limitType: "contention",
      reason: `Salesforce ${ctx.status} UNABLE_TO_LOCK_ROW: another transaction holds the record's lock; retry with backoff once it completes.`,
    };
  }
  if (ctx.status === 403) {
    return {
      ...base,
      throttled: false,
      retryable: false,
      limitType: "permission",
      reason: `403 ${codes.length ? codes.join(", ") : "without REQUEST_LIMIT_EXCEEDED"}: an access error, not a rate limit.`,
    };
  }
  return interpretStatus(ctx, { retryAfter, budget, reset: null }, scope);
}

export const salesforce: Dialect = {
  id: "salesforce",
  readsSuccesses: true,
  label: "Salesforce REST",
  hosts: [".salesforce.com", ".force.com"],
  docs: [USAGE_DOC, LIMITS_DOC, LOCKING_DOC],
  interpret: interpretSalesforce,
};
