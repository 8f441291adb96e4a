/**
 * Jira Cloud. Three independent limits since March 2026: a points-based hourly quota, per-second
 * burst limits per tenant + endpoint + method, and per-issue write limits; RateLimit-Reason names
 * which one was hit. A 429 "may be accompanied by Retry-After and X-RateLimit-Reset"; Retry-After
 * is seconds, X-RateLimit-Reset is ISO 8601 with minute precision (yyyy-MM-ddTHH:mmZ). A 503 with
 * Retry-After "may be returned when a resource limit has been reached".
 * https://developer.atlassian.com/cloud/jira/platform/rate-limiting/
 * https://developer.atlassian.com/cloud/jira/platform/build-an-app-that-respects-rate-limits/
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, readCount, readIetfRateLimit, readRateLimitField, readReset, readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation, LimitType } from "../types";
import { interpretStatus } from "./generic";

/** The reason header: documented name first, then the beta names seen during the 2026 rollout. */
function readReason(ctx: SignalContext): string | undefined {
  for (const name of ["ratelimit-reason", "x-ratelimit-reason", "x-beta-ratelimit-reason", "beta-ratelimit-reason"]) {
    const value = ctx.header(name)?.trim();
    if (value) return value;
  }
  return undefined;
}

/**
 * Beta-RateLimit: "tenant-app-quota";r=17842;t=2107 with Beta-RateLimit-Policy: "tenant-app-quota";q=100100;w=3600,
 * the IETF draft shape under a beta name (UNCONFIRMED, seen in the wild). t is delta seconds. Read
 * with the same Structured Field parser as RateLimit, so a hostile value cannot make it backtrack.
 */
function readBetaRateLimit(ctx: SignalContext): { budget: Budget; reset: Wait | null } | null {
  return readRateLimitField(ctx, "beta-ratelimit", "beta-ratelimit-policy");
}

function tenantOf(ctx: SignalContext): string | undefined {
  const cloud = /^\/ex\/jira\/([^/]+)/.exec(ctx.path);
  if (cloud) return cloud[1];
  return ctx.host || undefined;
}

function issueOf(path: string): string | undefined {
  const m = /\/rest\/api\/(?:2|3|latest)\/issue\/([^/]+)/.exec(path);
  return m ? decodeURIComponent(m[1]!) : undefined;
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  // X-RateLimit-Reset is an ISO 8601 instant, "request timestamp plus the Retry-After period".
  let reset = readReset(ctx, "x-ratelimit-reset", "iso") ?? readReset(ctx, "x-beta-ratelimit-reset", "iso");
  if (reset && reset.waitMs === 0) {
    // Minute precision: a reset already past says nothing about the remaining wait.
    ctx.ignore(reset.source, ctx.header(reset.source) ?? "", "already past (minute precision); not used as a wait");
    reset = null;
  }
  const remaining = readCount(ctx, "x-ratelimit-remaining");
  const beta = readBetaRateLimit(ctx);
  const ietf = readIetfRateLimit(ctx);
  let budget: Budget | null = null;
  if (remaining !== null) {
    budget = {
      remaining,
      limit: readCount(ctx, "x-ratelimit-limit"),
      resetAt: reset ? isoAfter(ctx, reset.waitMs) : null,
      source: "x-ratelimit-remaining",
    };
  } else if (ietf.budget) budget = ietf.budget;
  else if (beta) budget = beta.budget;

  const reason = readReason(ctx);
  const status = ctx.status;
  const throttled = status === 429 || (status === 503 && retryAfter !== null);
  if (!throttled) {
    return interpretStatus(ctx, { retryAfter, budget, reset });
  }

  let limitType: LimitType;
  let what: string;
  const scope: Record<string, string> = {};
  const tenant = tenantOf(ctx);
  if (tenant) scope.tenant = tenant;
  if (reason) scope.reason = reason;
  if (reason === "jira-per-issue-on-write") {
    // Per-issue write limit: "Space out writes to that issue" (build-an-app-that-respects-rate-limits).
    limitType = "burst";
    what = "the per-issue write limit";
    const issue = issueOf(ctx.path);
    if (issue) scope.issue = issue;
  } else if (reason !== undefined && /quota/i.test(reason)) {
    // The points-based quota is an hourly budget of points: a "cost" limit, retryable after its
    // reset (LimitType in ../types.ts: per-hour limits are retried). "quota" would say a daily or
    // monthly allowance that is not retried in this run, which this is not.
    limitType = "cost";
    what = "the hourly points quota";
  } else if (reason === "jira-burst-based" || status === 429) {
    // Burst limit: one tenant, one endpoint, one HTTP method.
    limitType = "burst";
    what = reason === "jira-burst-based" ? "the per-second burst limit of this endpoint" : "a rate limit";
    scope.endpoint = `${ctx.method} ${ctx.path}`;
  } else {
    // https://developer.atlassian.com/cloud/jira/platform/rate-limiting/ : 503 + Retry-After when a resource limit is reached.
    limitType = "server";
    what = "a resource limit (503 with Retry-After)";
  }

  const wait: Wait | null =
    retryAfter ?? reset ?? (limitType === "cost" && beta?.reset ? beta.reset : null) ?? (ietf.budget?.remaining === 0 ? ietf.reset : null);
  return {
    throttled: true,
    retryable: true,
    limitType,
    minWaitMs: wait?.waitMs ?? null,
    waitSource: wait?.source ?? null,
    scope,
    budget,
    reason: wait
      ? `Jira ${status}: ${what}${reason ? ` (${reason})` : ""}; retry after ${wait.waitMs} ms (${wait.source}).`
      : `Jira ${status}: ${what}${reason ? ` (${reason})` : ""} with no wait given; back off.`,
  };
}

export const jira: Dialect = {
  id: "jira",
  label: "Jira Cloud",
  hosts: [".atlassian.net", "api.atlassian.com"],
  docs: [
    "https://developer.atlassian.com/cloud/jira/platform/rate-limiting/",
    "https://developer.atlassian.com/cloud/jira/platform/build-an-app-that-respects-rate-limits/",
  ],
  interpret,
};
