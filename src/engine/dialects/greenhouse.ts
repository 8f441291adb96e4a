/**
 * Greenhouse's APIs, each on a host of its own (so each is a scope of its own in the client):
 * - Harvest (harvest.greenhouse.io). v1/v2: "limited to the amount specified in the returned
 *   X-RateLimit-Limit header, per 10 seconds" (50 in the example); X-RateLimit-Remaining shows what
 *   is left; "In the HTTP 429 response, the X-RateLimit-Reset header is the timestamp indicating when
 *   you can try again while the Retry-After header is the number of seconds" (HARVEST_DOC). Until
 *   March 2024 the same page said the 429's Retry-After held "an Epoch / Unix timestamp" (DOCS_CHANGE);
 *   the reset is read as that epoch timestamp, Retry-After as seconds.
 * - Harvest v3 (harvest.greenhouse.io/v3, OAuth): fixed 30-second windows, no published ceiling (the
 *   allowance differs for custom and partner integrations), X-RateLimit-Remaining and
 *   X-RateLimit-Reset ("the time the current window resets") on each answer, a 429 with Retry-After.
 *   The v3 page (V3_DOC) was not in the stored docs: this is how connectors that cite it describe it
 *   (AIRBYTE_DOC).
 * - Audit log (auditlog.us.greenhouse.io): 50 requests per 10 seconds, and paginated requests 3 per
 *   30 seconds; its 429 "will exclude the X-RateLimit-Limit and X-RateLimit-Remaining headers"
 *   (AUDIT_DOC).
 * - Onboarding (onboarding-api.greenhouse.io), GraphQL: "GraphQL will return an HTTP status of 200,
 *   even in cases where there are errors"; over its request limit "ensuing requests will fail until
 *   the next time window begins", with an error { message: "Rate limit reached.", limit, remaining,
 *   resetAt } (an ISO instant) and errorCode RateLimit (ONBOARDING_DOC).
 * - Job Board (boards-api.greenhouse.io): "publicly accessible without authentication, cached and
 *   not rate limited" (V3_DOC, in the words write-ups quote from it). Candidate Ingestion
 *   (api.greenhouse.io) documents no limit, and of its 5xx "You may retry at a later time"
 *   (INGESTION_DOC). A 429 from either is still read as a short window spent.
 * https://developers.greenhouse.io/harvest.html#rate-limiting
 * https://github.com/grnhse/greenhouse-api-docs/commit/4a5b3a24e941e809f729c0918c23f6d8e9760745
 * https://harvestdocs.greenhouse.io/docs/api-rate-limiting
 * https://docs.airbyte.com/integrations/sources/greenhouse
 * https://developers.greenhouse.io/audit-log.html#rate-limiting
 * https://developers.greenhouse.io/gho.html#rate-limiting
 * https://developers.greenhouse.io/candidate-ingestion.html#errors
 *
 * So a 429, or Onboarding's RateLimit error whatever its status, is a short window spent (burst):
 * wait for Retry-After or the reset, the longer, else the documented window. The budget is
 * X-RateLimit-Remaining of X-RateLimit-Limit with the window's length (10 s, 30 s on v3), which v1
 * successes show without a reset. 401, 403 (no access to the record, a GET with a body, plain HTTP)
 * and 422 keep their status's meaning and stay final, even with the count at 0: Greenhouse says its
 * limit with a 429. 500 is retried with backoff ("Give us a few minutes and try again").
 */
import type { SignalContext } from "../context";
import { asArray, asNumber, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, longestWait, parseIsoInstant, readLimitFamily, readRetryAfter, waitUntil, type ResetKind, type Wait } from "../signals";
import type { Budget, Interpretation } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const HARVEST_DOC = "https://developers.greenhouse.io/harvest.html#rate-limiting";
const DOCS_CHANGE = "https://github.com/grnhse/greenhouse-api-docs/commit/4a5b3a24e941e809f729c0918c23f6d8e9760745";
const V3_DOC = "https://harvestdocs.greenhouse.io/docs/api-rate-limiting";
const AIRBYTE_DOC = "https://docs.airbyte.com/integrations/sources/greenhouse";
const AUDIT_DOC = "https://developers.greenhouse.io/audit-log.html#rate-limiting";
const ONBOARDING_DOC = "https://developers.greenhouse.io/gho.html#rate-limiting";
const INGESTION_DOC = "https://developers.greenhouse.io/candidate-ingestion.html#errors";

const NAMES = { limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining", reset: "x-ratelimit-reset" };
/** Harvest v1/v2 and the audit log count per 10 seconds (HARVEST_DOC, AUDIT_DOC). */
const WINDOW_SECONDS = 10;
/** Harvest v3's fixed windows (V3_DOC, as AIRBYTE_DOC reads it); the audit log's paginated requests, 3 per 30 s. */
const LONG_WINDOW_SECONDS = 30;
const V3_PATH = /^\/v3(?:\/|$)/;
const AUDIT_LOG_HOST = /^auditlog\./;
/** Onboarding's errorCode for "Rate Limit Exceeded" (ONBOARDING_DOC, Errors and Validation). */
const ONBOARDING_RATE_CODE = "RateLimit";
const ONBOARDING_RATE_MESSAGE = /^rate limit reached/i;
/** A Unix time this large can only be milliseconds. */
const EPOCH_MS_FROM = 1e12;

/**
 * X-RateLimit-Reset is "the timestamp" of the retry (HARVEST_DOC), an "Epoch / Unix timestamp" in
 * the page's earlier words (DOCS_CHANGE): epoch seconds. Neither page gives its unit for v3, so a
 * value only milliseconds can be, or an ISO instant, is read as such and said so.
 */
function resetKind(ctx: SignalContext): ResetKind {
  const raw = ctx.header(NAMES.reset)?.trim();
  if (raw === undefined) return "epoch-seconds";
  if (!/^\d+$/.test(raw)) {
    if (parseIsoInstant(raw) === null) return "epoch-seconds";
    ctx.deviate("x-ratelimit-reset read as an ISO 8601 instant (the docs say only \"the timestamp\")");
    return "iso";
  }
  if (Number(raw) < EPOCH_MS_FROM) return "epoch-seconds";
  ctx.deviate("x-ratelimit-reset read as epoch milliseconds (a Unix time in ms where the docs give a Unix timestamp)");
  return "epoch-ms";
}

/** The window an answer's count is kept over: v3's 30 s, else 10 s. */
function windowSecondsOf(ctx: SignalContext): number {
  return V3_PATH.test(ctx.path) ? LONG_WINDOW_SECONDS : WINDOW_SECONDS;
}

/** Onboarding's rate-limit error (ONBOARDING_DOC): in errors[], by errorCode or by its message. */
function onboardingLimit(ctx: SignalContext): Interpretation | null {
  for (const entry of asArray(field(ctx.body, "errors"))) {
    const code = asString(field(entry, "errorCode"));
    const message = asString(field(entry, "message")) ?? "";
    if (code !== ONBOARDING_RATE_CODE && !ONBOARDING_RATE_MESSAGE.test(message)) continue;
    const resetAtText = asString(field(entry, "resetAt"));
    const resetMs = resetAtText === undefined ? null : parseIsoInstant(resetAtText);
    if (resetAtText !== undefined && resetMs === null) ctx.ignore("body:errors[].resetAt", resetAtText, "not an ISO 8601 instant with a zone");
    const wait: Wait | null = resetMs === null ? null : { waitMs: waitUntil(ctx, resetMs), source: "body:errors[].resetAt" };
    const remaining = asNumber(field(entry, "remaining"));
    const limit = asNumber(field(entry, "limit"));
    const budget: Budget | null =
      remaining === undefined || remaining < 0 ? null : { remaining, limit: limit ?? null, resetAt: wait ? isoAfter(ctx, wait.waitMs) : null, source: "body:errors[].remaining" };
    const longest = longestWait(readRetryAfter(ctx), wait);
    return throttledBy("burst", longest, {
      scope: {},
      budget,
      reason: `Greenhouse Onboarding ${ctx.status} ${code ?? ONBOARDING_RATE_CODE}: the requests of this time window are spent ("${message}"), refused until resetAt; ${describeWait(longest)}.`,
    });
  }
  return null;
}

function interpret(ctx: SignalContext): Interpretation {
  const onboarding = onboardingLimit(ctx);
  if (onboarding) return onboarding;
  // Retry-After is delta seconds (HARVEST_DOC). One written the pre-2024 way, as an epoch
  // (DOCS_CHANGE), would read as decades: classify's wait floor reads it too and defers above its
  // cap, so no reading here could shorten it; none is attempted.
  const retryAfter = readRetryAfter(ctx);
  const family = readLimitFamily(ctx, NAMES, resetKind(ctx));
  const budget = family.budget;
  const windowSeconds = windowSecondsOf(ctx);
  // A fresh object: the window's length is set on it, not spread into a copy (a per-answer path).
  if (budget) budget.windowMs = windowSeconds * 1000;
  if (ctx.status !== 429) {
    // No reset is passed on: a 401/403 with the count at 0 stays an access error (the limit is a 429).
    return interpretStatus(ctx, { retryAfter, budget, reset: null });
  }
  const auditLog = AUDIT_LOG_HOST.test(ctx.host);
  // With no wait shown, the window that may be spent: the audit log's 429 does not say whether its
  // 50 per 10 s or its 3 paginated per 30 s is, so the 30 s that clears both.
  const wait = longestWait(retryAfter, family.reset) ?? docWait(auditLog ? LONG_WINDOW_SECONDS : windowSeconds);
  const what = auditLog ? "the audit log's requests (50 per 10 s, paginated 3 per 30 s)" : V3_PATH.test(ctx.path) ? "Harvest v3's requests for this 30-second window" : "the requests per 10 seconds";
  return throttledBy("burst", wait, {
    scope: {},
    budget,
    reason: `Greenhouse 429: ${what} are spent; ${describeWait(wait)}.`,
  });
}

export const greenhouse: Dialect = {
  id: "greenhouse",
  label: "Greenhouse",
  // Harvest, the audit log (auditlog.us.), Onboarding, Job Board (boards-api.) and Candidate Ingestion (api.).
  hosts: [".greenhouse.io"],
  docs: [HARVEST_DOC, DOCS_CHANGE, V3_DOC, AIRBYTE_DOC, AUDIT_DOC, ONBOARDING_DOC, INGESTION_DOC],
  // Onboarding's rate-limit error comes with HTTP 200 (GraphQL): every success is read.
  readsSuccesses: true,
  interpret,
};
