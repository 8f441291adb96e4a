/**
 * Anthropic.
 * https://docs.anthropic.com/en/api/rate-limits
 * https://docs.anthropic.com/en/api/errors
 *
 * 429 rate_limit_error: RPM / input- and output-tokens-per-minute windows, retry-after in seconds;
 * anthropic-ratelimit-*-reset are RFC 3339 instants. 529 overloaded_error: API-wide overload,
 * not the client's quota, but still back-pressure: throttled, retryable. A 429 with
 * error.details.error_code enforced_spend_limit_reached is a monthly spend cap (UNCONFIRMED:
 * documented by Microsoft Dev Proxy, not Anthropic) and is not retried.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { applyServerRetryVerdict, describeWait, readBooleanHeader, readDimensionBudgets, throttledBy, tightestBudget, withBudgetReason } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://docs.anthropic.com/en/api/rate-limits";
const ERRORS_DOC = "https://docs.anthropic.com/en/api/errors";

const DIMENSIONS = ["requests", "tokens", "input-tokens", "output-tokens"] as const;

function readDimensions(ctx: SignalContext): { budgets: Budget[]; exhaustedReset: Wait | null } {
  return readDimensionBudgets(ctx, DIMENSIONS, (d) => ({ limit: `anthropic-ratelimit-${d}-limit`, remaining: `anthropic-ratelimit-${d}-remaining`, reset: `anthropic-ratelimit-${d}-reset` }), "iso");
}

function interpretAnthropicRules(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const { budgets, exhaustedReset } = readDimensions(ctx);
  const budget = tightestBudget(budgets);
  const type = asString(field(ctx.body, "error", "type"));
  const detailCode = asString(field(ctx.body, "error", "details", "error_code"));
  const organization = ctx.header("anthropic-organization-id");
  const scope: ScopeParts = organization ? { organization } : {};

  if (detailCode === "enforced_spend_limit_reached") {
    return throttledBy("quota", retryAfter, {
      retryable: false,
      scope,
      budget,
      reason: "Anthropic spend limit reached (enforced_spend_limit_reached, a monthly cap): not retried in this run.",
    });
  }
  if (ctx.status === 529 || type === "overloaded_error") {
    // ERRORS_DOC: 529 overloaded_error, "the API is temporarily overloaded".
    return throttledBy("server", retryAfter, {
      scope,
      budget,
      reason: `Anthropic's API is overloaded (${ctx.status} overloaded_error), not the account's limit; ${describeWait(retryAfter)}.`,
    });
  }
  if (ctx.status === 429 || type === "rate_limit_error") {
    // RATE_DOC: retry-after says how long to wait; else the reset of the spent dimension.
    const wait = retryAfter ?? exhaustedReset;
    return throttledBy("burst", wait, {
      scope,
      budget,
      reason: `Anthropic rate limit (${type ?? ctx.status}); ${describeWait(wait)}.`,
    });
  }
  return withBudgetReason(ctx, interpretStatus(ctx, { retryAfter, budget, reset: null }, scope));
}

function interpretAnthropic(ctx: SignalContext): Interpretation {
  return applyServerRetryVerdict(ctx, interpretAnthropicRules(ctx), readBooleanHeader(ctx, "x-should-retry"), "x-should-retry");
}

export const anthropic: Dialect = {
  id: "anthropic",
  label: "Anthropic",
  hosts: ["api.anthropic.com"],
  docs: [RATE_DOC, ERRORS_DOC],
  interpret: interpretAnthropic,
};
