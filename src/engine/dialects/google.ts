/**
 * Google APIs. Two error shapes:
 * - legacy: 403 or 429 with error.errors[].reason; userRateLimitExceeded / rateLimitExceeded mean
 *   "back off exponentially", dailyLimitExceeded means "Do not retry without fixing the problem",
 *   insufficientPermissions is an access error on the same 403
 *   (https://developers.google.com/workspace/drive/api/guides/handle-errors);
 * - AIP-193: error.status RESOURCE_EXHAUSTED with google.rpc.ErrorInfo (reason RATE_LIMIT_EXCEEDED,
 *   metadata quota_limit / quota_metric), google.rpc.QuotaFailure and google.rpc.RetryInfo
 *   (https://cloud.google.com/docs/quotas/troubleshoot ; https://google.aip.dev/193).
 * A per-day quota is not retryable, a per-minute / per-100-seconds one is
 * (https://developers.google.com/bid-manager/quotas). Google rarely sends a wait.
 */
import type { SignalContext } from "../context";
import { asArray, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { parseGoDuration, type Wait } from "../signals";
import type { Interpretation } from "../types";
import { interpretStatus, readStandardSignals } from "./generic";

const BURST_REASONS = new Set(["userRateLimitExceeded", "rateLimitExceeded", "RATE_LIMIT_EXCEEDED"]);
// dailyLimitExceeded: "Do not retry without fixing the problem" (Drive); quotaExceeded: a spent
// daily allowance (YouTube units); QUOTA_EXCEEDED: a Compute Engine allocation quota;
// sharingRateLimitExceeded: Drive's sharing limit ("The user has reached a sharing limit").
const QUOTA_REASONS = new Set(["dailyLimitExceeded", "dailyLimitExceededUnreg", "quotaExceeded", "QUOTA_EXCEEDED", "sharingRateLimitExceeded"]);
const PERMISSION_REASONS = new Set([
  "insufficientPermissions",
  "forbidden",
  "accessNotConfigured",
  "authError",
  "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
  "IAM_PERMISSION_DENIED",
  "SERVICE_DISABLED",
  "API_KEY_INVALID",
]);
const TYPE_PREFIX = "type.googleapis.com/google.rpc.";

interface GoogleError {
  reasons: string[];
  status: string | undefined;
  scope: Record<string, string>;
  /** Quota identifiers (ErrorInfo quota_limit, QuotaFailure quotaId): names, not prose. */
  quotaIds: string[];
  retryDelay: string | undefined;
}

function readError(body: unknown): GoogleError {
  const error = field(body, "error");
  const reasons: string[] = [];
  const scope: Record<string, string> = {};
  const quotaIds: string[] = [];
  let retryDelay: string | undefined;
  for (const item of asArray(field(error, "errors"))) {
    const reason = asString(field(item, "reason"));
    if (reason) reasons.push(reason);
    const domain = asString(field(item, "domain"));
    if (domain && scope.domain === undefined) scope.domain = domain;
  }
  for (const detail of asArray(field(error, "details"))) {
    const type = asString(field(detail, "@type")) ?? "";
    if (type === `${TYPE_PREFIX}ErrorInfo`) {
      const reason = asString(field(detail, "reason"));
      if (reason) reasons.push(reason);
      const domain = asString(field(detail, "domain"));
      if (domain) scope.domain = domain;
      for (const key of ["service", "consumer", "quota_metric", "quota_limit", "quota_location", "quota_unit"]) {
        const value = asString(field(detail, "metadata", key));
        if (value) scope[key] = value;
      }
      for (const key of ["quota_limit", "quota_id", "quota_unit"]) {
        const value = asString(field(detail, "metadata", key));
        if (value) quotaIds.push(value);
      }
    } else if (type === `${TYPE_PREFIX}QuotaFailure`) {
      for (const violation of asArray(field(detail, "violations"))) {
        const quotaId = asString(field(violation, "quotaId"));
        if (quotaId) {
          quotaIds.push(quotaId);
          scope.quota_id ??= quotaId;
        }
        const metric = asString(field(violation, "quotaMetric"));
        if (metric) scope.quota_metric ??= metric;
      }
    } else if (type === `${TYPE_PREFIX}RetryInfo`) {
      retryDelay = asString(field(detail, "retryDelay"));
    }
  }
  if (reasons.length > 0) scope.reason = reasons[0]!;
  quotaIds.push(...quotaNamesInMessages(error));
  return { reasons, status: asString(field(error, "status")), scope, quotaIds, retryDelay };
}

/**
 * The quota names Google quotes in its messages: "Quota exceeded for quota metric 'Queries' and
 * limit 'Queries per day' of service ..." (Cloud quotas) and "... for quota group 'ReadGroup' and
 * limit 'Read requests per user per 100 seconds' ..." (the legacy form). These are names, the only
 * place some errors say which window was spent (https://cloud.google.com/docs/quotas/troubleshoot).
 * The quoted name is bounded, so the scan stays linear on any message.
 */
function quotaNamesInMessages(error: unknown): string[] {
  const messages = [asString(field(error, "message")), ...asArray(field(error, "errors")).map((e) => asString(field(e, "message")))];
  const names: string[] = [];
  for (const message of messages) {
    if (message === undefined) continue;
    for (const m of message.slice(0, 4096).matchAll(/(?:quota group|quota metric|limit) '([^']{1,200})'/g)) names.push(m[1]!);
  }
  return names;
}

/**
 * A per-day (or longer) quota named by its identifier or display name: "...PerDay...",
 * "Queries per day", quota_unit "1/d/{project}", "per month".
 */
function isDailyQuota(ids: readonly string[]): boolean {
  return ids.some((id) => /per[ _-]?day|daily|per[ _-]?month|monthly|\/d\//i.test(id));
}

function readRetryInfo(ctx: SignalContext, value: string | undefined): Wait | null {
  if (value === undefined) return null;
  const ms = parseGoDuration(value);
  if (ms === null || !Number.isFinite(ms)) {
    ctx.ignore("error.details.RetryInfo.retryDelay", value, "not a duration such as 30s");
    return null;
  }
  return { waitMs: Math.ceil(ms), source: "retryinfo" };
}

function interpret(ctx: SignalContext): Interpretation {
  const signals = readStandardSignals(ctx, "auto");
  const error = readError(ctx.body);
  const wait = signals.retryAfter ?? readRetryInfo(ctx, error.retryDelay);
  const base = {
    minWaitMs: wait?.waitMs ?? null,
    waitSource: wait?.source ?? null,
    scope: error.scope,
    budget: signals.budget,
  };
  const has = (set: ReadonlySet<string>): string | undefined => error.reasons.find((r) => set.has(r));

  const exhausted = error.status === "RESOURCE_EXHAUSTED";
  const burstReason = has(BURST_REASONS);
  const quotaReason = has(QUOTA_REASONS);
  const daily = isDailyQuota(error.quotaIds);

  // Per-day quotas: not retryable in this run, even when a wait is known (Bid Manager, Drive docs).
  if (quotaReason || ((burstReason || exhausted) && daily)) {
    return {
      ...base,
      throttled: true,
      retryable: false,
      limitType: "quota",
      reason: `Google ${ctx.status} ${quotaReason ?? burstReason ?? "RESOURCE_EXHAUSTED"}: a daily or allocation quota is spent; do not retry until it resets or the quota is raised.`,
    };
  }
  // userRateLimitExceeded / rateLimitExceeded / RATE_LIMIT_EXCEEDED: back off exponentially and retry.
  if (burstReason || (exhausted && (ctx.status === 429 || ctx.status === 403))) {
    return {
      ...base,
      throttled: true,
      retryable: true,
      limitType: "burst",
      reason: wait
        ? `Google ${ctx.status} ${burstReason ?? "RESOURCE_EXHAUSTED"}: a per-minute or per-user rate quota; retry after ${wait.waitMs} ms (${wait.source}).`
        : `Google ${ctx.status} ${burstReason ?? "RESOURCE_EXHAUSTED"}: a per-minute or per-user rate quota; retry with exponential backoff.`,
    };
  }
  const permission = has(PERMISSION_REASONS);
  if (permission || error.status === "PERMISSION_DENIED" || error.status === "UNAUTHENTICATED") {
    return {
      ...base,
      throttled: false,
      retryable: false,
      limitType: "permission",
      reason: `Google ${ctx.status} ${permission ?? error.status}: an access error, not a rate limit; retrying will not help.`,
    };
  }
  if (ctx.status === 429) {
    // A bare 429 from a Google front end: still a rate limit, backed off exponentially.
    return { ...interpretStatus(ctx, signals), scope: error.scope, minWaitMs: base.minWaitMs, waitSource: base.waitSource };
  }
  return interpretStatus(ctx, signals, error.scope);
}

export const google: Dialect = {
  id: "google",
  label: "Google APIs",
  hosts: [".googleapis.com"],
  docs: [
    "https://developers.google.com/workspace/drive/api/guides/handle-errors",
    "https://cloud.google.com/docs/quotas/troubleshoot",
    "https://google.aip.dev/193",
    "https://developers.google.com/bid-manager/quotas",
  ],
  interpret,
};
