/**
 * Zendesk.
 * https://developer.zendesk.com/api-reference/introduction/rate-limits/
 *
 * A 429 "also has a Retry-After header" (seconds); the body varies by endpoint and can be plain
 * text, so only the status and headers are read. X-Rate-Limit (the limit) and
 * X-Rate-Limit-Remaining give the account budget; ratelimit-reset, when sent, is delta seconds.
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { readCount, readRetryAfter, readReset, isoAfter } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://developer.zendesk.com/api-reference/introduction/rate-limits/";

function readBudget(ctx: SignalContext): { budget: Budget | null; reset: ReturnType<typeof readReset> } {
  const reset = readReset(ctx, "ratelimit-reset", "delta-seconds");
  const remaining = readCount(ctx, "x-rate-limit-remaining");
  if (remaining !== null) {
    const limit = readCount(ctx, "x-rate-limit");
    return { budget: { remaining, limit, resetAt: reset ? isoAfter(ctx, reset.waitMs) : null, source: "x-rate-limit-remaining" }, reset };
  }
  const ietfRemaining = readCount(ctx, "ratelimit-remaining");
  if (ietfRemaining !== null) {
    const limit = readCount(ctx, "ratelimit-limit");
    return { budget: { remaining: ietfRemaining, limit, resetAt: reset ? isoAfter(ctx, reset.waitMs) : null, source: "ratelimit-remaining" }, reset };
  }
  return { budget: null, reset };
}

function interpretZendesk(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const { budget, reset } = readBudget(ctx);
  // The subdomain is the account; plan limits are per account (some endpoints have their own).
  const scope: ScopeParts = ctx.host ? { account: ctx.host } : {};

  if (ctx.status === 429) {
    const wait = retryAfter ?? (budget?.remaining === 0 ? reset : null);
    return throttledBy("burst", wait, {
      scope,
      budget,
      reason: `Zendesk rate limit (429); ${describeWait(wait)}.`,
    });
  }
  return interpretStatus(ctx, { retryAfter, budget, reset }, scope);
}

export const zendesk: Dialect = {
  id: "zendesk",
  readsSuccesses: true,
  label: "Zendesk",
  hosts: [".zendesk.com"],
  docs: [RATE_DOC],
  interpret: interpretZendesk,
};
