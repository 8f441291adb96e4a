/**
 * Amazon's Selling Partner API. Each operation is rate-limited by a token bucket per selling
 * partner and application: tokens come back at the operation's rate (requests per second, often
 * below one: getOrders 0.0167, one a minute) up to its burst, and a request with no token is
 * answered 429 with the error QuotaExceeded (USAGE_DOC). The x-amzn-RateLimit-Limit header gives the
 * operation's current rate, where it is sent; no header tells the tokens left or when the next
 * comes. "429 is a retryable status code ... retry with backoff" (USAGE_DOC).
 * https://developer-docs.amazon.com/sp-api/docs/usage-plans-and-rate-limits
 * https://developer-docs.amazon.com/sp-api/docs/error-handling
 *
 * A bucket at that rate gives a token back 1 / rate seconds after it ran dry, so a throttle's wait
 * is at least that: a backoff from half a second asked six times a minute of an operation that
 * answers once. The limits are per operation, so a request's scope is its operation: the path
 * with the ids in it (segments with a digit that are no API version) taken out.
 */
import type { SignalContext } from "../context";
import { asArray, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readRetryAfter, type Wait } from "../signals";
import type { Interpretation, ScopeParts } from "../types";
import { describeWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const USAGE_DOC = "https://developer-docs.amazon.com/sp-api/docs/usage-plans-and-rate-limits";
const ERRORS_DOC = "https://developer-docs.amazon.com/sp-api/docs/error-handling";
const RATE_HEADER = "x-amzn-ratelimit-limit";
/** An API version in a path: v0, v1, or a date (2021-08-01). */
const VERSION_SEGMENT = /^(?:v\d+|\d{4}-\d{2}-\d{2})$/i;
/** A rate written as a plain decimal (0.0167, 2, 0.5). */
const RATE_TEXT = /^\d+(?:\.\d+)?$/;

/** The operation a path calls: its segments with ids (a digit, and no API version) taken out. */
export function spApiOperationOf(path: string): string {
  const segments = path.split("?")[0]!.split("/").filter((segment) => segment !== "");
  return `/${segments.map((segment) => (/\d/.test(segment) && !VERSION_SEGMENT.test(segment) ? ":id" : segment)).join("/")}`;
}

/** The operation's rate, requests per second, from x-amzn-RateLimit-Limit; null where absent or unreadable. */
function readRate(ctx: SignalContext): number | null {
  const raw = ctx.header(RATE_HEADER);
  if (raw === undefined) return null;
  const rate = RATE_TEXT.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (rate > 0 && Number.isFinite(rate)) return rate;
  ctx.ignore(RATE_HEADER, raw, "not a positive rate in requests per second");
  return null;
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const rate = readRate(ctx);
  const scope: ScopeParts = { operation: spApiOperationOf(ctx.path) };
  const codes = asArray(field(ctx.body, "errors")).map((item) => asString(field(item, "code")));
  if (ctx.status !== 429 && !codes.includes("QuotaExceeded")) return interpretStatus(ctx, { retryAfter, budget: null, reset: null }, rate === null ? undefined : scope);
  // One token back at the rate shown: the least a throttled request can wait to find one.
  const tokenWait: Wait | null = rate === null ? null : { waitMs: Math.ceil(1000 / rate), source: RATE_HEADER };
  const wait = longestWait(retryAfter, tokenWait);
  return throttledBy("burst", wait, {
    scope,
    reason: `Amazon SP-API ${ctx.status} QuotaExceeded: the operation's token bucket is empty${rate === null ? "" : ` (it refills ${rate} per s)`}; ${describeWait(wait)}.`,
  });
}

export const amazonSellingPartner: Dialect = {
  id: "amazon-sp",
  label: "Amazon Selling Partner API",
  hosts: [".sellingpartnerapi-na.amazon.com", ".sellingpartnerapi-eu.amazon.com", ".sellingpartnerapi-fe.amazon.com"],
  docs: [USAGE_DOC, ERRORS_DOC],
  interpret,
  requestScope: ({ path }) => ({ operation: spApiOperationOf(path) }),
};
