/**
 * Brevo's API v3, formerly Sendinblue's (api.brevo.com, and api.sendinblue.com, the host of the
 * same API before the rename, still in older integrations). Limits are per endpoint, in two
 * units: "RPS (Requests per second)" and "RPH (Requests per hour)"; "Some endpoints have both RPS
 * and RPH limits. When both are specified, you must respect both limits simultaneously"
 * (LIMITS_DOC). The general tier's table (the Advanced and Extended tiers raise the numbers):
 * POST /v3/smtp/email and GET /v3/smtp/blockedContacts 1,000 RPS and 3,600,000 RPH; GET
 * /v3/smtp/emails 2 RPS, 7,200 RPH; POST /v3/transactionalSMS/sms 150 RPS; POST /v3/events 10 RPS;
 * POST /v3/orders/status 5 RPS; POST /v3/products 2 RPS (each with its RPH); all other endpoints
 * under /v3/smtp/ 300 RPH; all endpoints under /v3/contacts/ 10 RPS and 36,000 RPH; all other
 * endpoints 100 RPH (LIMITS_DOC); all endpoints under /v3/loyalty/ 600 RPH
 * (LOYALTY_CHANGELOG). Over a limit, "a 429 Too Many Requests status code along with response
 * headers": x-sib-ratelimit-limit, "Maximum number of requests allowed in the current time window",
 * x-sib-ratelimit-remaining, "Number of requests remaining in the current time window", and
 * x-sib-ratelimit-reset, "Time remaining until the rate limit resets, expressed in the granularity
 * unit (typically seconds)", with the example "x-sib-ratelimit-reset: 45 ... the rate limit resets in
 * 45 seconds"; "Rate limit headers are included in all responses, not just 429 errors" (HEADERS_DOC).
 * So the reset is delta seconds (a value only an epoch time can be is read as one, and said so);
 * the public client code met while checking reads it as seconds too (unnamed snippets, not cited).
 * No Retry-After is documented; one sent anyway is a floor.
 * https://developers.brevo.com/docs/api-limits
 * https://developers.brevo.com/docs/limit-headers
 * https://developers.brevo.com/changelog/2026/2/27
 *
 * The headers name no window, and a 429 does not say which of an endpoint's two limits it hit. The
 * documented windows are a second and an hour, so a spent window (remaining 0) whose reset is more
 * than a second away can only be the hour's, and an endpoint with no RPS limit has only the hour.
 * A spent hour is a quota (as Docusign's and ServiceNow's hourly limits are read here): not retried
 * in this run, deferred to the reset (an hour at the latest where no reset is shown, the alignment of
 * the hour being undocumented). A spent second is a burst: retried after the reset, at least the
 * second itself (the reset is whole seconds, so 0 means "within this second"); a 429 that shows no
 * spent window backs off. The scope is the endpoint's row of the table (a request's row is known
 * from its method and path), so that a spent hour of campaign calls does not hold back sends; the
 * table's "All other endpoints" row names no group, and each top-level resource (/v3/account,
 * /v3/emailCampaigns...) is taken as its own: if they share one count, a second resource meets its
 * own 429 once, where one shared scope, if wrong, would defer working calls for up to an hour.
 *
 * 401 (a wrong key, or a call from an IP address not on the account's list) and 403 are access
 * errors and stay final even where the headers show a spent count: the limit has its own status,
 * 429. 402 and other 4xx are final; 5xx as the generic dialect reads them.
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readExplicitWaits, readLimitFamily, type ResetKind, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://developers.brevo.com/docs/api-limits";
const HEADERS_DOC = "https://developers.brevo.com/docs/limit-headers";
const LOYALTY_CHANGELOG = "https://developers.brevo.com/changelog/2026/2/27";

const NAMES = { limit: "x-sib-ratelimit-limit", remaining: "x-sib-ratelimit-remaining", reset: "x-sib-ratelimit-reset" };
const HOUR_MS = 3_600_000;
/** The shortest documented window, RPS (LIMITS_DOC). */
const SECOND_MS = 1000;
/** An hourly window of undocumented alignment ends within the hour. */
const HOUR_AT_THE_LATEST: Wait = { waitMs: HOUR_MS, source: "doc:hourly-window-at-the-latest" };
/** A reset past this many seconds (about 31 years) is no delta: it is an epoch time. */
const EPOCH_SECONDS_FROM = 1e9;

interface Bucket {
  /** The row of LIMITS_DOC's table the request counts against. */
  name: string;
  /** The row has an RPS limit beside its RPH; without one, only the hour. */
  perSecond: boolean;
}

/** The rows that name one endpoint, with an RPS and an RPH limit each (LIMITS_DOC). */
const ONE_ENDPOINT: ReadonlySet<string> = new Set([
  "POST /v3/smtp/email",
  "GET /v3/smtp/blockedContacts",
  "GET /v3/smtp/emails",
  "POST /v3/transactionalSMS/sms",
  "POST /v3/events",
  "POST /v3/orders/status",
  "POST /v3/products",
]);

/** The rows that name a group "All endpoints under /v3/{group}/{...}" (LIMITS_DOC, LOYALTY_CHANGELOG). */
const GROUPS: ReadonlyMap<string, boolean> = new Map([
  ["smtp", false],
  ["contacts", true],
  ["loyalty", false],
]);

/** The table row a request counts against, from its method and path. */
export function brevoBucketOf(method: string, rawPath: string): Bucket {
  const path = rawPath.split("?")[0]!.replace(/\/+$/, "") || "/";
  const endpoint = `${method.toUpperCase()} ${path}`;
  if (ONE_ENDPOINT.has(endpoint)) return { name: endpoint, perSecond: true };
  const segments = path.split("/");
  const versioned = segments[1] === "v3";
  const first = (versioned ? segments[2] : segments[1]) ?? "";
  const prefix = versioned ? "/v3/" : "/";
  const group = GROUPS.get(first);
  if (group !== undefined) return { name: `${prefix}${first}`, perSecond: group };
  // "All other endpoints": 100 RPH, no RPS (LIMITS_DOC); one scope per top-level resource.
  return { name: `${prefix}${first}`, perSecond: false };
}

function endpointScope(method: string, path: string): ScopeParts {
  return { endpoint: brevoBucketOf(method, path).name };
}

/** x-sib-ratelimit-reset is documented as seconds left; a value only an epoch time can be is read as one, and said so. */
function resetKind(ctx: SignalContext): ResetKind {
  const raw = ctx.header(NAMES.reset)?.trim();
  if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < EPOCH_SECONDS_FROM) return "delta-seconds";
  ctx.deviate(`${NAMES.reset} read as epoch seconds (a UNIX time where the docs give the seconds left)`);
  return "epoch-seconds";
}

function readWindow(ctx: SignalContext, bucket: Bucket): { budget: Budget | null; reset: Wait | null } {
  const family = readLimitFamily(ctx, NAMES, resetKind(ctx));
  // A row with no RPS limit counts the hour only, so the window shown is the hour (LIMITS_DOC).
  const budget = family.budget && !bucket.perSecond ? { ...family.budget, windowMs: HOUR_MS } : family.budget;
  return { budget, reset: family.reset };
}

/** A 429: the hour's count spent (a quota, deferred) or the second's (a burst, retried). */
function rateLimited(ctx: SignalContext, bucket: Bucket, window: { budget: Budget | null; reset: Wait | null }): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  const scope = { endpoint: bucket.name };
  const spentReset = window.budget?.remaining === 0 ? window.reset : null;
  const hourly = !bucket.perSecond || (spentReset !== null && spentReset.waitMs > SECOND_MS);
  const shown = window.budget ? ` (${window.budget.remaining} of ${window.budget.limit ?? "?"} left)` : "";
  if (hourly) {
    const wait = longestWait(retryAfter, bucket.perSecond ? spentReset : window.reset) ?? HOUR_AT_THE_LATEST;
    return throttledBy("quota", wait, {
      retryable: false,
      scope,
      budget: window.budget,
      reason: `Brevo 429: the hourly limit (RPH) of ${bucket.name} is spent${shown}, so the work waits for its reset (${describeWait(wait)}) and is not retried in this run.`,
    });
  }
  const wait = spentReset === null ? retryAfter : longestWait(retryAfter, spentReset, docWait(SECOND_MS / 1000));
  return throttledBy("burst", wait, {
    scope,
    budget: window.budget,
    reason: `Brevo 429: the per-second limit (RPS) of ${bucket.name} is spent${shown}; ${describeWait(wait)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const bucket = brevoBucketOf(ctx.method, ctx.path);
  const window = readWindow(ctx, bucket);
  if (ctx.status === 429) return rateLimited(ctx, bucket, window);
  const retryAfter = readExplicitWaits(ctx);
  // 401 and 403 are access errors whatever the count shows: no reset is passed, so that the generic
  // rule for a 401/403 with a spent budget does not read them as throttles.
  const reset = ctx.status === 401 || ctx.status === 403 ? null : window.reset;
  // An answer that shows no count names no scope, as a plain success does (classify.ts quietSuccess).
  return interpretStatus(ctx, { retryAfter, budget: window.budget, reset }, window.budget === null ? undefined : { endpoint: bucket.name });
}

export const brevo: Dialect = {
  id: "brevo",
  label: "Brevo (formerly Sendinblue)",
  hosts: ["api.brevo.com", "api.sendinblue.com"],
  docs: [LIMITS_DOC, HEADERS_DOC, LOYALTY_CHANGELOG],
  interpret,
  requestScope: ({ method, path }) => endpointScope(method, path),
};
