/**
 * Sentry's web API. Each caller and endpoint has two limits: requests per window, counted in fixed
 * windows (40 per second by default, some endpoints their own), and requests in progress at once.
 * Every answer shows both: X-Sentry-Rate-Limit-Limit, -Remaining and -Reset (the next window's
 * start, UTC epoch seconds), and X-Sentry-Rate-Limit-ConcurrentLimit and -ConcurrentRemaining.
 * Over either, a 429.
 * https://docs.sentry.io/api/ratelimits/
 *
 * Which limit a 429 is over is read from the counts: with requests left in the window and no place
 * left in progress, the concurrency limit (a place frees when an answer comes, not at the reset);
 * otherwise the window's, until its reset. The budget shown is the window's, which paces the
 * scope; the places in progress are shown on a throttle over them.
 *
 * The limits are per endpoint, so a request's scope is its endpoint: the path with the ids in it
 * (numbers, hex and UUIDs) taken out. Names stay (an organization's or project's slug), so two
 * projects' calls to one endpoint are two scopes here where Sentry may count one: each then sees
 * the other's calls as spending by someone else in the count it reads, as executions sharing a
 * budget do.
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { readCount, readExplicitWaits, readLimitFamily } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_NAMES = { limit: "x-sentry-rate-limit-limit", remaining: "x-sentry-rate-limit-remaining", reset: "x-sentry-rate-limit-reset" };
const CONCURRENT_LIMIT = "x-sentry-rate-limit-concurrentlimit";
const CONCURRENT_REMAINING = "x-sentry-rate-limit-concurrentremaining";

/** An id in a path: digits, a hex string of 16 or more (event ids), or a UUID. */
const ID_SEGMENT = /^(?:\d+|[0-9a-f]{16,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** The endpoint a path calls: its segments with the ids taken out (not the API's version, /api/0/), and no trailing slash. */
export function sentryEndpointOf(path: string): string {
  const segments = path.split("?")[0]!.split("/").filter((segment) => segment !== "");
  const versioned = segments[0] === "api" ? 2 : 0;
  return `/${segments.map((segment, i) => (i >= versioned && ID_SEGMENT.test(segment) ? ":id" : segment)).join("/")}`;
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  const window = readLimitFamily(ctx, RATE_NAMES, "epoch-seconds");
  const scope: ScopeParts = { endpoint: sentryEndpointOf(ctx.path) };
  // An answer that shows no count names no scope, as the quiet reading of a plain success does (classify.ts quietSuccess).
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget: window.budget, reset: window.reset }, window.budget === null ? undefined : scope);
  const placesLeft = readCount(ctx, CONCURRENT_REMAINING);
  if (placesLeft === 0 && window.budget !== null && window.budget.remaining > 0) {
    const places: Budget = { remaining: 0, limit: readCount(ctx, CONCURRENT_LIMIT), resetAt: null, source: CONCURRENT_REMAINING, concurrent: true };
    return throttledBy("concurrency", retryAfter, {
      scope,
      budget: places,
      reason: `Sentry 429 over its limit on requests in progress (${places.limit ?? "?"} at once), with ${window.budget.remaining} left in the window: a place frees when an answer comes${retryAfter ? `; Retry-After ${retryAfter.waitMs} ms` : ""}.`,
    });
  }
  const wait = retryAfter ?? window.reset;
  return throttledBy("burst", wait, {
    scope,
    budget: window.budget,
    reason: wait
      ? `Sentry 429: the endpoint's window is spent; retry after ${wait.waitMs} ms (${wait.source}).`
      : "Sentry 429 with no reset or wait given; back off.",
  });
}

export const sentry: Dialect = {
  id: "sentry",
  label: "Sentry",
  hosts: ["sentry.io", ".sentry.io"],
  docs: ["https://docs.sentry.io/api/ratelimits/"],
  interpret,
  requestScope: ({ path }) => ({ endpoint: sentryEndpointOf(path) }),
};
