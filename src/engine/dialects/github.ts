/**
 * GitHub REST and GraphQL.
 * https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
 * https://docs.github.com/en/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api
 *
 * GitHub sends x-ratelimit-* on every response, permission errors included, so their presence
 * proves nothing: a 403 is a rate limit only with the documented wording, x-ratelimit-remaining 0,
 * or a Retry-After. The wait follows the documented order for both primary and secondary limits:
 * retry-after, else (remaining 0) x-ratelimit-reset in epoch seconds, else at least one minute.
 */
import type { SignalContext } from "../context";
import { asArray, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readLimitFamily, readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation, LimitType, ScopeParts } from "../types";
import { describeWait, docWait, longestWait, withBudgetReason } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const REST_DOC = "https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api";
const TROUBLESHOOTING_DOC = "https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api";
const GRAPHQL_DOC = "https://docs.github.com/en/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api";

function messages(body: unknown): string[] {
  const found: string[] = [];
  const top = asString(field(body, "message"));
  if (top !== undefined) found.push(top);
  for (const error of asArray(field(body, "errors"))) {
    const message = asString(field(error, "message"));
    if (message !== undefined) found.push(message);
  }
  return found;
}

/** An access error (refused credentials, a forbidden resource): no throttle, and no retry can fix it. */
function accessError(scope: ScopeParts, budget: Budget | null, reason: string): Interpretation {
  return { throttled: false, retryable: false, limitType: "permission", minWaitMs: null, waitSource: null, scope, budget, reason };
}

function interpretGithub(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  // x-ratelimit-reset is epoch seconds (REST_DOC, "Checking the status of your rate limit").
  const family = readLimitFamily(
    ctx,
    { limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining", reset: "x-ratelimit-reset" },
    "epoch-seconds",
  );
  const budget = family.budget;
  const isGraphql = /\/graphql\/?$/.test(ctx.path);
  const resource = ctx.header("x-ratelimit-resource") ?? (isGraphql ? "graphql" : undefined);
  const scope: ScopeParts = resource ? { resource } : {};
  const spent = budget !== null && budget.remaining === 0;
  const texts = messages(ctx.body);

  // octokit/plugin-throttling matches /\bsecondary rate\b/i; "abuse detection" is the older
  // wording of the same limit (earlier plugin-throttling versions matched /\babuse\b/i).
  const secondary = texts.some((m) => /\bsecondary rate\b/i.test(m) || /\babuse detection\b/i.test(m));
  const primaryWording = texts.some((m) => /\bAPI rate limit exceeded\b/i.test(m));
  // GraphQL primary limit: "the response status will still be 200" with errors[].type RATE_LIMITED (GRAPHQL_DOC).
  const graphqlRateLimited = asArray(field(ctx.body, "errors")).some((e) => field(e, "type") === "RATE_LIMITED");

  // REST_DOC "Handle rate limit errors appropriately": retry-after; else remaining 0 -> reset; else >= 60 s.
  // When both are present and the budget is spent, no retry can succeed before the reset either,
  // so the longer of the two is the floor.
  const documentedWait = (): Wait => longestWait(retryAfter, spent ? family.reset : null) ?? docWait(60);
  const throttled = (limitType: LimitType, wait: Wait, what: string, limitScope: ScopeParts = scope): Interpretation => ({
    throttled: true,
    retryable: true,
    limitType,
    minWaitMs: wait.waitMs,
    waitSource: wait.source,
    scope: limitScope,
    budget,
    reason: `GitHub ${what}${limitScope.resource ? ` (resource ${limitScope.resource})` : ""}: ${describeWait(wait)}.`,
  });

  // Secondary limits (concurrency, points per minute, content creation) span every resource of
  // the account (REST_DOC, "About secondary rate limits"): no resource part, so they hold back all calls.
  if (secondary) return throttled("burst", documentedWait(), "secondary rate limit, which spans every resource", {});
  if (graphqlRateLimited) {
    // octokit waits until x-ratelimit-reset for RATE_LIMITED; the points budget is hourly.
    const wait = longestWait(retryAfter, family.reset) ?? docWait(60);
    return throttled("cost", wait, "GraphQL rate limit (RATE_LIMITED, points per hour)");
  }
  if (ctx.status === 401) {
    // Rate limits answer 403 or 429 only (TROUBLESHOOTING_DOC, "Rate limit errors"); a 401 is
    // "Bad credentials", and GitHub sends the per-IP budget on it, spent or not. Retrying, or
    // deferring until the reset, cannot fix a credential.
    return accessError(scope, budget, `GitHub 401${texts[0] ? ` (${texts[0].slice(0, 80)})` : ""}: the credentials were refused, an access error, not a rate limit${spent ? " (the unauthenticated budget shown is spent, but a 401 is never a rate limit)" : ""}.`);
  }
  if (ctx.status === 403 || ctx.status === 429) {
    if (primaryWording || spent) {
      return throttled(resource === "graphql" ? "cost" : "burst", documentedWait(), "primary rate limit");
    }
    if (ctx.status === 429 || retryAfter) {
      // A 429, or a 403 carrying Retry-After, is a limit even without the wording; same documented order.
      return throttled("burst", documentedWait(), `${ctx.status} rate limit`);
    }
    return accessError(scope, budget, `403 without rate-limit wording and with ${budget ? `${budget.remaining} requests left` : "no spent budget"}: an access error, not a rate limit.`);
  }
  const generic = interpretStatus(ctx, { retryAfter, budget, reset: family.reset });
  return withBudgetReason(ctx, { ...generic, scope });
}

/**
 * The rate-limit resource a REST request counts against, from its path: search and code search
 * have their own per-minute budgets, GraphQL its own points, everything else is core.
 * https://docs.github.com/en/rest/rate-limit/rate-limit ("resources")
 */
export function githubResourceOf(path: string): string {
  if (/^\/graphql\/?$/.test(path)) return "graphql";
  if (/^\/search\/code\/?$/.test(path)) return "code_search";
  if (/^\/search\//.test(path)) return "search";
  return "core";
}

export const github: Dialect = {
  id: "github",
  readsSuccesses: true,
  label: "GitHub REST and GraphQL",
  hosts: ["api.github.com", "uploads.github.com", ".ghe.com"],
  docs: [REST_DOC, GRAPHQL_DOC, TROUBLESHOOTING_DOC],
  interpret: interpretGithub,
  requestScope: ({ path }) => ({ resource: githubResourceOf(path) }),
};
