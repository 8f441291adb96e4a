/**
 * Stripe.
 * https://docs.stripe.com/rate-limits
 * https://docs.stripe.com/error-low-level (Stripe-Should-Retry)
 * https://docs.stripe.com/error-codes/lock-timeout
 *
 * A 429 from a rate limiter carries Stripe-Rate-Limited-Reason; "If a request returns a 429 ...
 * without these headers, it wasn't the result of a rate limiter (for example, it may be a lock
 * timeout)". Stripe-Should-Retry is the server's own verdict and wins (stripe-node obeys it first).
 * Stripe documents no wait and no budget headers; Retry-After is read if it ever appears.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readRetryAfter } from "../signals";
import type { Interpretation, ScopeParts } from "../types";
import { applyServerRetryVerdict, describeWait, readBooleanHeader, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_LIMITS_DOC = "https://docs.stripe.com/rate-limits";

/** Documented values: global-concurrency, global-rate, endpoint-concurrency, endpoint-rate, resource-specific (RATE_LIMITS_DOC). */
function limiterScope(ctx: SignalContext, reason: string): ScopeParts {
  if (reason.startsWith("endpoint-")) return { limiter: reason, endpoint: `${ctx.method} ${ctx.path}` };
  if (reason === "resource-specific") return { limiter: reason, resource: ctx.path };
  return { limiter: reason };
}

function interpretStripeRules(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const limiterReason = ctx.header("stripe-rate-limited-reason")?.trim().toLowerCase();
  const code = asString(field(ctx.body, "error", "code"));
  const type = asString(field(ctx.body, "error", "type"));
  const wait = { minWaitMs: retryAfter?.waitMs ?? null, waitSource: retryAfter?.source ?? null };

  if (ctx.status === 429 && limiterReason) {
    const concurrency = limiterReason.includes("concurrency");
    return {
      ...wait,
      throttled: true,
      retryable: true,
      limitType: concurrency ? "concurrency" : "burst",
      scope: limiterScope(ctx, limiterReason),
      budget: null,
      reason: `Stripe rate limiter ${limiterReason} rejected the request (429); ${describeWait(retryAfter)}.`,
    };
  }
  if (code === "lock_timeout" || ctx.status === 429) {
    // Not a rate limiter: object lock contention; retry with backoff, reusing the Idempotency-Key
    // (https://docs.stripe.com/error-codes/lock-timeout, RATE_LIMITS_DOC).
    if (code === "rate_limit" || type === "rate_limit_error") {
      return throttledBy("burst", retryAfter, {
        scope: {},
        budget: null,
        reason: `Stripe rate limit (${code ?? type}) without a Stripe-Rate-Limited-Reason header; ${describeWait(retryAfter)}.`,
      });
    }
    return {
      ...wait,
      throttled: false,
      retryable: true,
      limitType: "contention",
      scope: { object: ctx.path },
      budget: null,
      reason: `${ctx.status}${code ? ` ${code}` : ""} without Stripe-Rate-Limited-Reason: lock contention on the object, not a rate limiter; retry with backoff and the same Idempotency-Key.`,
    };
  }
  if (code === "rate_limit" || type === "rate_limit_error") {
    // stripe-node maps a 400 with code rate_limit to StripeRateLimitError; the legacy type rate_limit_error is UNCONFIRMED.
    return throttledBy("burst", retryAfter, {
      scope: {},
      budget: null,
      reason: `Stripe rate limit (${ctx.status}, ${code ?? type}); ${describeWait(retryAfter)}.`,
    });
  }
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
}

function interpretStripe(ctx: SignalContext): Interpretation {
  // Stripe-Should-Retry: "true"/"false", the server's verdict, obeyed before any other rule.
  const shouldRetry = readBooleanHeader(ctx, "stripe-should-retry");
  return applyServerRetryVerdict(ctx, interpretStripeRules(ctx), shouldRetry, "Stripe-Should-Retry");
}

export const stripe: Dialect = {
  id: "stripe",
  readsSuccesses: true,
  label: "Stripe",
  hosts: ["api.stripe.com", "files.stripe.com"],
  docs: [RATE_LIMITS_DOC, "https://docs.stripe.com/error-codes/lock-timeout"],
  interpret: interpretStripe,
};
