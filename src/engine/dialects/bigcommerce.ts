/**
 * BigCommerce's REST APIs. A store's quota is shared by every app on the store and refreshed each
 * window (150 per 30 s on Standard and Plus, 450 on Pro): each answer shows it in headers of its
 * own, not the X-RateLimit family: X-Rate-Limit-Requests-Left (requests left in the window),
 * X-Rate-Limit-Requests-Quota (the window's quota), X-Rate-Limit-Time-Reset-Ms (ms left in the
 * window) and X-Rate-Limit-Time-Window-Ms (the window's length). Over the quota, a 429 with
 * X-Retry-After, the seconds until the quota refreshes (RATE_DOC; the REST reference's response
 * headers, REFERENCE_DOC).
 * https://developer.bigcommerce.com/docs/start/best-practices/api-rate-limits
 * https://docs.bigcommerce.com/developer/api-reference/rest/admin/content/page-widgets/get-page-widgets
 *
 * The quota is a store's, and a request's store is in its path (/stores/{store_hash}/...): that is
 * its scope, so that one store's spent window does not hold back another's.
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, longestWait, readCount, readDecimalHeader, readRetryAfter } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://developer.bigcommerce.com/docs/start/best-practices/api-rate-limits";
const REFERENCE_DOC = "https://docs.bigcommerce.com/developer/api-reference/rest/admin/content/page-widgets/get-page-widgets";

/** The store a path belongs to: /stores/{store_hash}/v3/catalog/products gives the hash. */
function storeOf(path: string): string | undefined {
  return /^\/stores\/([^/?#]+)/.exec(path)?.[1];
}

function readBudget(ctx: SignalContext): Budget | null {
  const remaining = readCount(ctx, "x-rate-limit-requests-left");
  if (remaining === null) return null;
  const reset = readDecimalHeader(ctx, "x-rate-limit-time-reset-ms", 1);
  const window = readDecimalHeader(ctx, "x-rate-limit-time-window-ms", 1);
  return {
    remaining,
    limit: readCount(ctx, "x-rate-limit-requests-quota"),
    resetAt: reset === null ? null : isoAfter(ctx, reset.waitMs),
    source: "x-rate-limit-requests-left",
    ...(window !== null && window.waitMs > 0 ? { windowMs: window.waitMs } : {}),
  };
}

/** The scope parts of a request to that path: its store, where the path names one. */
function storeScope(path: string): ScopeParts {
  const store = storeOf(path);
  return store === undefined ? {} : { store };
}

function interpret(ctx: SignalContext): Interpretation {
  const budget = readBudget(ctx);
  const scope = storeScope(ctx.path);
  const retryAfter = longestWait(readRetryAfter(ctx, "x-retry-after"), readRetryAfter(ctx));
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget, reset: null }, budget === null ? undefined : scope);
  // The window's end where no X-Retry-After is sent: the quota refreshes then.
  const wait = retryAfter ?? readDecimalHeader(ctx, "x-rate-limit-time-reset-ms", 1);
  return throttledBy("burst", wait, {
    scope,
    budget,
    reason: `BigCommerce 429: the store's API quota for this window is spent; ${describeWait(wait)}.`,
  });
}

export const bigcommerce: Dialect = {
  id: "bigcommerce",
  label: "BigCommerce",
  hosts: ["api.bigcommerce.com"],
  docs: [RATE_DOC, REFERENCE_DOC],
  interpret,
  requestScope: ({ path }) => storeScope(path),
};
