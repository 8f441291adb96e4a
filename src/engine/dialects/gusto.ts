/**
 * Gusto's API (api.gusto.com, and api.gusto-demo.com for the sandbox), for App Integrations and
 * Gusto Embedded alike.
 * https://docs.gusto.com/embedded-payroll/docs/rate-limits
 * https://docs.gusto.com/app-integrations/docs/rate-limits
 * https://docs.gusto.com/embedded-payroll/changelog/added-rate-limit-headers
 * https://docs.gusto.com/app-integrations/docs/error-categories
 * https://docs.gusto.com/app-integrations/docs/idempotency
 *
 * "Rate limits are scoped on an application-user pair at 200 requests per minute", in "a 60-second
 * rolling window. The window opens after your first API call and closes after 60 seconds has
 * elapsed"; over it, "429: Too Many Requests until the window closes" (LIMITS_DOC). App
 * Integrations say the same of an OAuth grant's access token, a limit "shared amongst" the
 * companies one user authorized (APP_LIMITS_DOC). So it is a per-minute burst window of the token:
 * retried after the wait, no scope part beyond the token (the client's default).
 *
 * The headers (LIMITS_DOC, HEADERS_CHANGELOG): X-RateLimit-Limit, "the total number of requests
 * allowed in the rate limit window"; X-RateLimit-Remaining, "the number of requests remaining";
 * X-RateLimit-Reset, "the datetime when the rate limit window will reset", written
 * "2025-07-08 15:35:40 -0700" in the changelog's example (a date, a space, a time and a numeric
 * offset: not RFC 3339, not epoch seconds, not a delta); and on a 429 only, Retry-After, "the
 * number of seconds until the rate limit window resets" (the example: 30). A 429's wait is the
 * longer of Retry-After and the reset (each a floor), else the documented 60 s window.
 *
 * Other errors are final (ERRORS_DOC): 401 invalid_token, 404, 406 invalid_api_version, 409
 * invalid_resource_version ("If the data has changed since the last time you made a request, we
 * will respond with the HTTP status code 409 Conflict", IDEMPOTENCY_DOC: fetch the object again;
 * no lock to wait out, so a retry as sent fails the same way), 422. A 403 stays an access error
 * even with X-RateLimit-Remaining 0, as Gusto throttles with 429 only. 500 internal_error is read
 * as the generic dialect reads it (retried with backoff when safe); the docs give no retry advice.
 *
 * An older partner FAQ's "60 calls per minute" (https://gusto.com/about/bd/errors) is superseded
 * by LIMITS_DOC's 200; nothing here rests on the figure, as the headers and the 429 say the rest.
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, longestWait, parseIsoInstant, readLimitFamily, readRetryAfter, waitUntil, type Wait } from "../signals";
import type { Budget, Interpretation } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://docs.gusto.com/embedded-payroll/docs/rate-limits";
const APP_LIMITS_DOC = "https://docs.gusto.com/app-integrations/docs/rate-limits";
const HEADERS_CHANGELOG = "https://docs.gusto.com/embedded-payroll/changelog/added-rate-limit-headers";
const ERRORS_DOC = "https://docs.gusto.com/app-integrations/docs/error-categories";
const IDEMPOTENCY_DOC = "https://docs.gusto.com/app-integrations/docs/idempotency";

const RESET = "x-ratelimit-reset";
/** "200 requests per minute" in "a 60-second rolling window" (LIMITS_DOC). */
const WINDOW_SECONDS = 60;
/**
 * The documented datetime, "2025-07-08 15:35:40 -0700" (HEADERS_CHANGELOG), and its RFC 3339 kin:
 * date, a space or T, time, then a numeric offset, Z or UTC (how Ruby writes a UTC time).
 */
const GUSTO_DATETIME = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)\s*(?:([+-]\d{2}):?(\d{2})|(Z|UTC))$/i;

/** X-RateLimit-Reset as the instant it names, or null (recorded in ignored) when it is no such datetime. */
function readReset(ctx: SignalContext): Wait | null {
  const raw = ctx.header(RESET);
  if (raw === undefined) return null;
  const match = raw.length <= 64 ? GUSTO_DATETIME.exec(raw.trim()) : null;
  const zone = match ? (match[5] ? "Z" : `${match[3]}:${match[4]}`) : "";
  const epochMs = match ? parseIsoInstant(`${match[1]}T${match[2]}${zone}`) : null;
  if (epochMs === null) {
    ctx.ignore(RESET, raw, "not a datetime such as 2025-07-08 15:35:40 -0700");
    return null;
  }
  return { waitMs: waitUntil(ctx, epochMs), source: RESET };
}

function readBudget(ctx: SignalContext): { budget: Budget | null; reset: Wait | null } {
  const family = readLimitFamily(ctx, { limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining" }, "iso");
  const reset = readReset(ctx);
  if (!family.budget) return { budget: null, reset };
  return { budget: { ...family.budget, resetAt: reset ? isoAfter(ctx, reset.waitMs) : null, windowMs: WINDOW_SECONDS * 1000 }, reset };
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const { budget, reset } = readBudget(ctx);
  // Only a 429 is a throttle (LIMITS_DOC): no reset is passed, so that a 401/403 showing
  // remaining 0 is not read as a spent window by interpretStatus.
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget, reset: null });
  const wait = longestWait(retryAfter, reset) ?? docWait(WINDOW_SECONDS);
  const shown = budget ? ` (${budget.remaining} of ${budget.limit ?? "?"} left)` : "";
  return throttledBy("burst", wait, {
    scope: {},
    budget,
    reason: `Gusto 429: the application-user pair's 200 requests per minute are spent${shown}; ${describeWait(wait)}.`,
  });
}

export const gusto: Dialect = {
  id: "gusto",
  label: "Gusto",
  hosts: ["api.gusto.com", "api.gusto-demo.com"],
  docs: [LIMITS_DOC, APP_LIMITS_DOC, HEADERS_CHANGELOG, ERRORS_DOC, IDEMPOTENCY_DOC],
  interpret,
};
