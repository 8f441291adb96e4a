/**
 * The generic dialect, for hosts no provider dialect claims: RFC 6585 (429), RFC 9110
 * (Retry-After, 503), the IETF RateLimit fields, and the common X-RateLimit-* family whose reset
 * unit is guessed by magnitude. Provider dialects reuse its pieces.
 * https://www.rfc-editor.org/rfc/rfc6585#section-4 ; https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { readBareReset, readExplicitWaits, readIetfRateLimit, readLimitFamily, type ResetKind, type Wait } from "../signals";
import type { Budget, Interpretation } from "../types";

export interface StandardSignals {
  /** The longest explicit wait: Retry-After, retry-after-ms, x-amz-retry-after. */
  retryAfter: Wait | null;
  budget: Budget | null;
  /** When the budget resets, as a wait (from RateLimit t=, X-RateLimit-Reset...). */
  reset: Wait | null;
}

/** Reads the explicit waits and the budget families every dialect may meet. */
export function readStandardSignals(ctx: SignalContext, resetKind: ResetKind = "auto"): StandardSignals {
  const retryAfter = readExplicitWaits(ctx);
  const ietf = readIetfRateLimit(ctx);
  if (ietf.budget) return { retryAfter, budget: ietf.budget, reset: ietf.reset };
  for (const prefix of ["x-ratelimit", "x-rate-limit"]) {
    if (ctx.header(`${prefix}-remaining`) === undefined) continue;
    const family = readLimitFamily(
      ctx,
      { limit: `${prefix}-limit`, remaining: `${prefix}-remaining`, reset: `${prefix}-reset` },
      resetKind,
    );
    if (family.budget) return { retryAfter, budget: family.budget, reset: family.reset };
  }
  // A reset with no remaining count: on a throttle it still says when the window reopens.
  return { retryAfter, budget: null, reset: readBareReset(ctx, resetKind) };
}

/**
 * The wait a throttled response implies: Retry-After first (the IETF draft: "Retry-After MUST
 * take precedence"), else the reset of a spent budget, else a reset sent with no remaining count
 * at all (a throttled answer that names only its reset means the window is spent until then).
 */
export function impliedWait(signals: StandardSignals): Wait | null {
  if (signals.retryAfter) return signals.retryAfter;
  if (signals.reset && (signals.budget === null || signals.budget.remaining === 0)) return signals.reset;
  return null;
}

/** What a status means when no throttle signal says otherwise. */
export function interpretStatus(ctx: SignalContext, signals: StandardSignals): Interpretation {
  const status = ctx.status;
  const budget = signals.budget;
  const wait = impliedWait(signals);
  const base = { minWaitMs: null, waitSource: null, budget };
  if (status === 429) {
    return {
      ...base,
      throttled: true,
      retryable: true,
      limitType: "burst",
      minWaitMs: wait?.waitMs ?? null,
      waitSource: wait?.source ?? null,
      reason: wait
        ? `429 Too Many Requests; the server asks for a ${wait.waitMs} ms wait (${wait.source}).`
        : "429 Too Many Requests with no wait given; back off.",
    };
  }
  if ((status === 503 || status === 529) && signals.retryAfter) {
    return {
      ...base,
      throttled: true,
      retryable: true,
      limitType: "server",
      minWaitMs: signals.retryAfter.waitMs,
      waitSource: signals.retryAfter.source,
      reason: `${status} with Retry-After: the server is shedding load and asks for a ${signals.retryAfter.waitMs} ms wait.`,
    };
  }
  if (status === 529) {
    return { ...base, throttled: true, retryable: true, limitType: "server", reason: "529: the service is overloaded; back off." };
  }
  if (status === 413) return interpret413(signals, base);
  if (status === 408 || status === 500 || status === 502 || status === 503 || status === 504) {
    return {
      ...base,
      throttled: false,
      retryable: true,
      limitType: "server",
      minWaitMs: signals.retryAfter?.waitMs ?? null,
      waitSource: signals.retryAfter?.source ?? null,
      reason: `${status}: a transient server failure, not a rate limit; retry with backoff if the request is safe to repeat.`,
    };
  }
  if ((status === 403 || status === 401) && budget && budget.remaining === 0 && signals.reset) {
    // The reset is the dialect's reading; a longer Retry-After still wins (classify's wait floor).
    return {
      ...base,
      throttled: true,
      retryable: true,
      limitType: "burst",
      minWaitMs: signals.reset.waitMs,
      waitSource: signals.reset.source,
      reason: `${status} with a spent rate-limit budget (remaining 0): wait until the reset.`,
    };
  }
  if (status === 401 || status === 403) {
    return { ...base, throttled: false, retryable: false, limitType: "permission", reason: `${status}: an access error, not a rate limit; retrying will not help.` };
  }
  if (status === 400 || status === 422) {
    return { ...base, throttled: false, retryable: false, limitType: "validation", reason: `${status}: the request is invalid as sent; retrying will not help.` };
  }
  if (status >= 200 && status < 400) {
    const shown = budget ? ` ${budget.remaining}${budget.limit === null ? "" : `/${budget.limit}`} requests left.` : "";
    return { ...base, throttled: false, retryable: false, limitType: "none", reason: `${status}: not throttled.${shown}` };
  }
  return { ...base, throttled: false, retryable: false, limitType: "none", reason: `${status}: not a rate limit; the answer is final.` };
}

/**
 * 413 Content Too Large. RFC 9110 §15.5.14: "If the condition is temporary, the server SHOULD
 * generate a Retry-After header field to indicate that it is temporary and after what time the
 * client MAY try again." With Retry-After it is back-pressure (a byte-rate or size allowance that
 * comes back); without it the request is too large as sent and can never succeed.
 * https://www.rfc-editor.org/rfc/rfc9110#section-15.5.14
 */
function interpret413(signals: StandardSignals, base: { minWaitMs: null; waitSource: null; budget: Budget | null }): Interpretation {
  const wait = signals.retryAfter;
  if (wait) {
    return {
      ...base,
      throttled: true,
      retryable: true,
      limitType: "server",
      minWaitMs: wait.waitMs,
      waitSource: wait.source,
      reason: `413 Content Too Large with ${wait.source}: the server says the condition is temporary (RFC 9110 §15.5.14); retry after the wait.`,
    };
  }
  return { ...base, throttled: false, retryable: false, limitType: "validation", reason: "413 Content Too Large with no Retry-After: the request is too large as sent; retrying will not help." };
}

export function interpretGeneric(ctx: SignalContext): Interpretation {
  return interpretStatus(ctx, readStandardSignals(ctx));
}

export const generic: Dialect = {
  id: "generic",
  label: "Generic (RFC 6585, RFC 9110, IETF RateLimit)",
  hosts: [],
  docs: [
    "https://www.rfc-editor.org/rfc/rfc6585#section-4",
    "https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3",
    "https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/",
  ],
  interpret: interpretGeneric,
};
