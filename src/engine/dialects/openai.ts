/**
 * OpenAI.
 * https://platform.openai.com/docs/guides/rate-limits
 * https://platform.openai.com/docs/guides/error-codes
 * https://github.com/openai/openai-node (src/client.ts: retry-after-ms, retry-after, x-should-retry)
 *
 * A 429 is either a rate limit (error.code rate_limit_exceeded, type requests/tokens: RPM/TPM
 * windows, retryable) or insufficient_quota (billing: not retryable). The wait is retry-after-ms
 * (observed and preferred by openai-node), then retry-after, then the reset of the exhausted
 * dimension; x-ratelimit-reset-{requests,tokens} are Go durations ("6m0s", "20ms").
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readDecimalHeader, readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation } from "../types";
import { applyServerRetryVerdict, describeWait, readBooleanHeader, readDimensionBudgets, throttledBy, tightestBudget, withBudgetReason } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://platform.openai.com/docs/guides/rate-limits";
const ERRORS_DOC = "https://platform.openai.com/docs/guides/error-codes";

const DIMENSIONS = ["requests", "tokens"] as const;

function readDimensions(ctx: SignalContext): { budgets: Budget[]; exhaustedReset: Wait | null } {
  return readDimensionBudgets(ctx, DIMENSIONS, (d) => ({ limit: `x-ratelimit-limit-${d}`, remaining: `x-ratelimit-remaining-${d}`, reset: `x-ratelimit-reset-${d}` }), "duration");
}

function interpretOpenaiRules(ctx: SignalContext): Interpretation {
  // openai-node: retry-after-ms first, then retry-after (seconds or HTTP-date).
  const retryAfter = readDecimalHeader(ctx, "retry-after-ms", 1) ?? readRetryAfter(ctx);
  const { budgets, exhaustedReset } = readDimensions(ctx);
  const budget = tightestBudget(budgets);
  const code = asString(field(ctx.body, "error", "code"));
  const type = asString(field(ctx.body, "error", "type"));
  const scope: Record<string, string> = {};
  const organization = ctx.header("openai-organization");
  const project = ctx.header("openai-project");
  if (organization) scope.organization = organization;
  if (project) scope.project = project;

  if (code === "insufficient_quota" || type === "insufficient_quota") {
    // ERRORS_DOC: "You exceeded your current quota, please check your plan and billing details": not retryable.
    return throttledBy("quota", null, {
      retryable: false,
      scope,
      budget,
      reason: "OpenAI billing quota exhausted (insufficient_quota); no retry helps until the plan or credits change.",
    });
  }
  const message = asString(field(ctx.body, "error", "message")) ?? "";
  // Per-day windows (RPD, TPD) are named only in the message: "... on requests per day (RPD):
  // Limit 200, Used 200 ...". RATE_DOC lists RPD/TPD beside RPM/TPM; a day is a quota (LimitType in
  // ../types.ts), not retried in this run, its wait reported for a scheduler.
  if ((ctx.status === 429 || code === "rate_limit_exceeded") && /\((?:RPD|TPD)\)|\bper day\b/.test(message.slice(0, 2048))) {
    const wait = retryAfter ?? exhaustedReset;
    return throttledBy("quota", wait, {
      retryable: false,
      scope,
      budget,
      reason: `OpenAI daily limit (${/\(TPD\)|tokens per day/.test(message) ? "tokens per day, TPD" : "requests per day, RPD"}) reached; not retried in this run; ${describeWait(wait)}.`,
    });
  }
  if (ctx.status === 429 || code === "rate_limit_exceeded") {
    const wait = retryAfter ?? exhaustedReset;
    return throttledBy("burst", wait, {
      scope,
      budget,
      reason: `OpenAI rate limit${type === "tokens" || type === "requests" ? ` on ${type}` : ""} (${code ?? ctx.status}); ${describeWait(wait)}.`,
    });
  }
  return withBudgetReason(ctx, interpretStatus(ctx, { retryAfter, budget, reset: null }, scope));
}

function interpretOpenai(ctx: SignalContext): Interpretation {
  return applyServerRetryVerdict(ctx, interpretOpenaiRules(ctx), readBooleanHeader(ctx, "x-should-retry"), "x-should-retry");
}

export const openai: Dialect = {
  id: "openai",
  label: "OpenAI",
  hosts: ["api.openai.com"],
  docs: [RATE_DOC, ERRORS_DOC],
  interpret: interpretOpenai,
};
