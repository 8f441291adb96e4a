/**
 * Cloudflare's API (api.cloudflare.com/client/v4). "The global rate limit for the Cloudflare API is
 * 1,200 requests per five minute period per user, and applies cumulatively regardless of whether
 * the request is made via the dashboard, API key, or API token. If you exceed this limit, all API
 * calls for the next five minutes will be blocked, receiving a HTTP 429 - Too Many Requests
 * response." Beside it, 200 requests per second per IP, and some endpoints (cache purge, rulesets,
 * lists, GraphQL) have limits of their own (LIMITS_DOC).
 * https://developers.cloudflare.com/fundamentals/api/reference/limits/
 *
 * The REST answers carry the IETF draft's fields (LIMITS_DOC, CHANGELOG): Ratelimit, "the limit
 * name, the remaining quota (r) and the time next window resets (t)", e.g. "default";r=50;t=30, and
 * Ratelimit-Policy, "the total quota (q) and the time window the quota applies to (w)"; a 429 adds
 * retry-after, "The number of seconds, rounded up, until more capacity is available". The first
 * version of that page named other headers: x-ratelimit-limit, x-ratelimit-remaining and
 * x-ratelimit-reset, "The RFC 1123 formatted date when more capacity is available" (EARLY_DOC);
 * they are read where the current fields are absent, the reset as an HTTP-date, never a number.
 * Cloudflare's SDK retries a 429 (and 5xx) after retry-after-ms or retry-after (SDK_SOURCE,
 * shouldRetry and retryRequest).
 * https://developers.cloudflare.com/changelog/2025-09-03-rate-limiting-improvement/
 * https://github.com/cloudflare/cloudflare-docs/blob/030a000c0af92bc67bfaad7ba258d6589c4a810f/src/content/docs/fundamentals/api/reference/limits.mdx
 * https://github.com/cloudflare/cloudflare-typescript/blob/main/src/core.ts
 *
 * So a 429 is a burst over the user's window: it waits the longest of retry-after and the reset of
 * a spent window, and the documented five minutes where neither is shown. The JSON envelope's
 * errors[] carries numeric codes: 971, "Please wait and consider throttling your request speed", is
 * the throttle's (known from public client code and issues, not from a Cloudflare reference page:
 * CODE_971_SOURCE, the exporter's "HTTP status 429: More than 1200 requests per 300 seconds
 * reached. Please wait and consider throttling your request speed"), and is read as one whatever
 * the status; 10000 is the access error ("Authentication error", and "Forbidden" on a 403 whose
 * documentation_url names the endpoint's required permissions, FORBIDDEN_DOC), final and never a
 * throttle. Other 401 and 403 answers stay final too, even beside a spent window: Cloudflare
 * refuses over its limits with a 429. 5xx are read as the generic dialect reads them.
 * https://github.com/lablabs/cloudflare-exporter/issues/74
 * https://developers.cloudflare.com/changelog/post/2026-08-20-contextual-403s/
 *
 * The GraphQL Analytics API (/client/v4/graphql) has a limit of its own, "300 GraphQL queries over
 * 5-minute window" per user, "in addition to the general rate limits" (GRAPHQL_LIMITS_DOC), and its
 * errors are GraphQL's, errors[].message with no code (GRAPHQL_ERRORS_DOC):
 * - "rate limiter budget depleted, try again after 5 minutes" (HTTP 429): that limit, a burst whose
 *   wait is the five minutes the message names; its own scope, so REST calls go on meanwhile;
 * - "quota exceeded, please repeat your request in the next minute" (an earlier version of the
 *   page): the same limit, a minute;
 * - "query consumed excessive resources, please try running smaller queries" (429): a cost
 *   budget, retried after retry-after or with backoff;
 * - "in combination, your request queries too many nodes, zones and accounts" (429) and "limit
 *   reached, please try reduced time period": the query is too large as sent (the global limits of
 *   10 zones or 1 account per query), so it is final (validation), 429 though it is.
 * https://developers.cloudflare.com/analytics/graphql-api/limits/
 * https://developers.cloudflare.com/analytics/graphql-api/errors/
 */
import type { SignalContext } from "../context";
import { asArray, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, longestWait, readIetfRateLimit, readLimitFamily, readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://developers.cloudflare.com/fundamentals/api/reference/limits/";
const CHANGELOG = "https://developers.cloudflare.com/changelog/2025-09-03-rate-limiting-improvement/";
const EARLY_DOC = "https://github.com/cloudflare/cloudflare-docs/blob/030a000c0af92bc67bfaad7ba258d6589c4a810f/src/content/docs/fundamentals/api/reference/limits.mdx";
const SDK_SOURCE = "https://github.com/cloudflare/cloudflare-typescript/blob/main/src/core.ts";
const CODE_971_SOURCE = "https://github.com/lablabs/cloudflare-exporter/issues/74";
const FORBIDDEN_DOC = "https://developers.cloudflare.com/changelog/post/2026-08-20-contextual-403s/";
const GRAPHQL_LIMITS_DOC = "https://developers.cloudflare.com/analytics/graphql-api/limits/";
const GRAPHQL_ERRORS_DOC = "https://developers.cloudflare.com/analytics/graphql-api/errors/";

/** "all API calls for the next five minutes will be blocked" (LIMITS_DOC); "try again after 5 minutes" (GRAPHQL_ERRORS_DOC). */
const BLOCK_SECONDS = 300;
/** "Please wait and consider throttling your request speed" (CODE_971_SOURCE). */
const THROTTLE_CODE = 971;
/** "Authentication error" / "Forbidden" (FORBIDDEN_DOC). */
const AUTH_CODE = 10000;
const EARLY_RESET = "x-ratelimit-reset";
const GRAPHQL_PATH = /^\/client\/v4\/graphql\/?$/;

/** The GraphQL API's rate-limit messages (GRAPHQL_ERRORS_DOC), each with what it means. */
const GRAPHQL_MESSAGES: readonly { pattern: RegExp; kind: "budget" | "minute" | "cost" | "too-large" }[] = [
  { pattern: /rate limiter budget depleted/i, kind: "budget" },
  { pattern: /quota exceeded, please repeat your request in the next minute/i, kind: "minute" },
  { pattern: /consumed excessive resources/i, kind: "cost" },
  { pattern: /too many nodes, zones and accounts|limit reached, please try reduced time period/i, kind: "too-large" },
];

interface CloudflareError {
  code: number | null;
  message: string;
}

function isGraphql(path: string): boolean {
  return GRAPHQL_PATH.test(path);
}

/** The scope a request counts in beside the user's window: the GraphQL API's own limit, or the REST API's. */
function endpointScope(path: string): ScopeParts {
  return { endpoint: isGraphql(path) ? "graphql" : "rest" };
}

/** errors[] of the v4 envelope ({code, message}) or of a GraphQL answer ({message}). */
function readErrors(ctx: SignalContext): CloudflareError[] {
  return asArray(field(ctx.body, "errors")).map((entry) => {
    const raw = field(entry, "code");
    const text = asString(raw)?.trim();
    const code = typeof raw === "number" && Number.isInteger(raw) ? raw : text !== undefined && /^\d{1,9}$/.test(text) ? Number(text) : null;
    return { code, message: asString(field(entry, "message")) ?? "" };
  });
}

/** The early x-ratelimit-reset: an RFC 1123 date (EARLY_DOC); a bare number is no documented form. */
function readEarlyReset(ctx: SignalContext): Wait | null {
  const raw = ctx.header(EARLY_RESET);
  if (raw === undefined) return null;
  if (/^\s*\d+\s*$/.test(raw)) {
    ctx.ignore(EARLY_RESET, raw, "documented as an RFC 1123 date, not a number");
    return null;
  }
  return readRetryAfter(ctx, EARLY_RESET);
}

/** Ratelimit / Ratelimit-Policy (LIMITS_DOC), else the early x-ratelimit-* headers (EARLY_DOC). */
function readBudget(ctx: SignalContext): { budget: Budget | null; reset: Wait | null } {
  const ietf = readIetfRateLimit(ctx);
  if (ietf.budget) return ietf;
  const reset = readEarlyReset(ctx);
  const family = readLimitFamily(ctx, { limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining" }, "delta-seconds");
  if (!family.budget) return { budget: null, reset };
  return { budget: { ...family.budget, resetAt: reset ? isoAfter(ctx, reset.waitMs) : null }, reset };
}

/** A GraphQL rate-limit message's reading, or null when the answer names none. */
function graphqlLimit(ctx: SignalContext, errors: CloudflareError[], retryAfter: Wait | null): Interpretation | null {
  for (const { message } of errors) {
    const kind = GRAPHQL_MESSAGES.find((m) => m.pattern.test(message))?.kind;
    if (kind === undefined) continue;
    const said = `Cloudflare GraphQL ${ctx.status} "${message.slice(0, 120)}"`;
    if (kind === "too-large") {
      return { throttled: false, retryable: false, limitType: "validation", minWaitMs: null, waitSource: null, budget: null, reason: `${said}: the query asks for too much at once (zones, accounts, nodes or time range); it can never succeed as sent, so it is not retried.` };
    }
    if (kind === "cost") {
      return throttledBy("cost", retryAfter, { scope: { endpoint: "graphql" }, reason: `${said}: the query's resources are spent; ${describeWait(retryAfter)}.` });
    }
    const wait = longestWait(retryAfter, docWait(kind === "budget" ? BLOCK_SECONDS : 60));
    return throttledBy("burst", wait, {
      scope: { endpoint: "graphql" },
      reason: `${said}: the user's GraphQL queries (300 per 5 minutes, beside the REST API's limit) are spent; ${describeWait(wait)}.`,
    });
  }
  return null;
}

function rateLimited(ctx: SignalContext, budget: Budget | null, reset: Wait | null, retryAfter: Wait | null): Interpretation {
  // A reset names when the window reopens only when the window is spent (or no count is shown).
  const spentReset = budget === null || budget.remaining === 0 ? reset : null;
  const wait = longestWait(retryAfter, spentReset) ?? docWait(BLOCK_SECONDS);
  const shown = budget ? ` (${budget.remaining} of ${budget.limit ?? "?"} left)` : "";
  return throttledBy("burst", wait, {
    scope: { limit: "user" },
    budget,
    reason: `Cloudflare ${ctx.status}${ctx.status === 429 ? "" : ` error ${THROTTLE_CODE}`}: the user's API requests (1,200 per 5 minutes, or 200 per second per IP) are over the limit${shown}; ${describeWait(wait)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const { budget, reset } = readBudget(ctx);
  const errors = readErrors(ctx);
  if (ctx.status === 429 && isGraphql(ctx.path)) {
    const graphql = graphqlLimit(ctx, errors, retryAfter);
    if (graphql) return graphql;
  }
  if (ctx.status === 429 || errors.some((e) => e.code === THROTTLE_CODE)) return rateLimited(ctx, budget, reset, retryAfter);
  if (ctx.status >= 400 && errors.some((e) => e.code === AUTH_CODE)) {
    return { throttled: false, retryable: false, limitType: "permission", minWaitMs: null, waitSource: null, budget, reason: `Cloudflare ${ctx.status} error ${AUTH_CODE}: an authentication or permission error, not a rate limit; retrying will not help.` };
  }
  // The reset is not passed on: a 401 or 403 beside a spent window is still an access error here.
  return interpretStatus(ctx, { retryAfter, budget, reset: null });
}

export const cloudflare: Dialect = {
  id: "cloudflare",
  label: "Cloudflare",
  hosts: ["api.cloudflare.com"],
  docs: [LIMITS_DOC, CHANGELOG, EARLY_DOC, SDK_SOURCE, CODE_971_SOURCE, FORBIDDEN_DOC, GRAPHQL_LIMITS_DOC, GRAPHQL_ERRORS_DOC],
  interpret,
  requestScope: ({ path }) => endpointScope(path),
};
