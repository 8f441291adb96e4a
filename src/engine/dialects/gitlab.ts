/**
 * GitLab's REST API: gitlab.com, GitLab Dedicated ("The main domain for GitLab Dedicated instances
 * is gitlab-dedicated.com", DEDICATED_DOMAIN_DOC; the same headers, DEDICATED_DOC) and self-managed
 * instances (any host: name the provider "gitlab"; a host no dialect claims is read by generic.ts).
 * https://docs.gitlab.com/administration/settings/user_and_ip_rate_limits/
 * https://docs.gitlab.com/user/gitlab_com/rate_limits/
 * https://docs.gitlab.com/administration/dedicated/user_rate_limits/
 * https://docs.gitlab.com/administration/dedicated/
 * https://docs.gitlab.com/api/rest/troubleshooting/
 *
 * Two systems limit a request (HEADERS_DOC, "Multiple rate limiting systems"):
 * - Rack::Attack throttles at the HTTP layer (authenticated API requests per user, unauthenticated
 *   requests per IP, ...), over a period the operator sets (GitLab.com: a minute, 2,000 API
 *   requests per user, GITLAB_COM_DOC; self-managed defaults: 3,600 s). Every answer shows the most
 *   restrictive one: RateLimit-Name, RateLimit-Limit, RateLimit-Observed, RateLimit-Remaining and
 *   RateLimit-Reset, "Unix time-formatted time when the request quota is reset" (an epoch, where the
 *   IETF drafts' RateLimit-Reset is delta seconds). Over one, a 429 that adds Retry-After,
 *   "Remaining duration in seconds until the quota is reset", and RateLimit-ResetTime, the same
 *   instant as an HTTP date; its body is plain text, "Retry later" by default.
 * - Application rate limits (issue creation, search, the Projects, Groups and Users APIs, ...):
 *   "These limits are not included in response headers", so "Exceeding the issue creation limit
 *   results in a 429 response, even when previous response headers indicated enough remaining
 *   authenticated API requests" (HEADERS_DOC). The body says {"message": {"error": "This endpoint
 *   has been requested too many times. Try again later."}} (APP_LIMIT_SOURCE); newer versions add a
 *   Retry-After of the limit's whole interval (APP_LIMIT_RETRY_AFTER). Project and group creation
 *   count per day: "the window is 24 hours, so Retry-After can be up to 86,400 seconds"
 *   (GITLAB_COM_DOC).
 *
 * RateLimit-Limit is not the count of the period: GitLab computes it as the period's limit scaled
 * to 60 seconds ("adjusted to approximately the nearest 60-minute period", HEADERS_DOC;
 * `rounded_limit = (limit * 1.minute / period).ceil`, HEADERS_SOURCE), while RateLimit-Remaining is
 * the period's limit minus RateLimit-Observed. So the budget's limit is Observed + Remaining (the
 * period's own count), and unknown once Remaining is 0 (Observed then counts the refused requests
 * too); RateLimit-Limit is not read.
 *
 * So: a 429 whose headers show the throttle spent (Remaining 0) waits the longer of Retry-After and
 * the reset; any other 429 is a limit the headers do not show, which waits its Retry-After (its
 * headers' budget, another limit's, is not reported as this one's), or backs off without one. A
 * wait longer than an hour (the longest period an hourly throttle can ask for) is a quota, deferred
 * rather than retried in this run: the day-long creation windows, the 8-hour Duo window
 * (GITLAB_COM_DOC); a project or group creation refused with no Retry-After waits its documented
 * 24 h. 401 and 403 stay final even beside a spent count: GitLab's throttles answer 429, and its
 * 403s are access errors or bans (failed authentication: "GitLab returns HTTP status code 403 for 1
 * hour", LIMITS_DOC). 503 "the server is temporarily overloaded" (STATUS_DOC) and the other
 * transient 5xx are read as generic.ts reads them; the 520-530 answers of GitLab.com's CDN are
 * retried too, as python-gitlab retries them (CLIENT_SOURCE: RETRYABLE_TRANSIENT_ERROR_CODES =
 * [500, 502, 503, 504] + range(520, 531); a client's list, not GitLab's docs).
 * https://docs.gitlab.com/security/rate_limits/
 * https://github.com/gitlabhq/gitlabhq/blob/master/lib/gitlab/rack_attack/request_throttle_data.rb
 * https://github.com/gitlabhq/gitlabhq/blob/master/lib/api/helpers/rate_limiter.rb
 * https://gitlab.com/gitlab-org/gitlab/-/merge_requests/206603
 * https://github.com/python-gitlab/python-gitlab/blob/main/gitlab/const.py
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { parseHttpDate } from "../http-date";
import { isoAfter, longestWait, readCount, readReset, readRetryAfter, waitUntil, type Wait } from "../signals";
import type { Budget, Interpretation } from "../types";
import { describeWait, retryableBy, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const HEADERS_DOC = "https://docs.gitlab.com/administration/settings/user_and_ip_rate_limits/";
const GITLAB_COM_DOC = "https://docs.gitlab.com/user/gitlab_com/rate_limits/";
const DEDICATED_DOC = "https://docs.gitlab.com/administration/dedicated/user_rate_limits/";
const DEDICATED_DOMAIN_DOC = "https://docs.gitlab.com/administration/dedicated/";
const STATUS_DOC = "https://docs.gitlab.com/api/rest/troubleshooting/";
const LIMITS_DOC = "https://docs.gitlab.com/security/rate_limits/";
const HEADERS_SOURCE = "https://github.com/gitlabhq/gitlabhq/blob/master/lib/gitlab/rack_attack/request_throttle_data.rb";
const APP_LIMIT_SOURCE = "https://github.com/gitlabhq/gitlabhq/blob/master/lib/api/helpers/rate_limiter.rb";
const APP_LIMIT_RETRY_AFTER = "https://gitlab.com/gitlab-org/gitlab/-/merge_requests/206603";
const CLIENT_SOURCE = "https://github.com/python-gitlab/python-gitlab/blob/main/gitlab/const.py";

const REMAINING = "ratelimit-remaining";
const OBSERVED = "ratelimit-observed";
const RESET = "ratelimit-reset";
const RESET_TIME = "ratelimit-resettime";
const NAME = "ratelimit-name";
const HOUR_MS = 3_600_000;
/** "For project and group creation limits, the window is 24 hours" (GITLAB_COM_DOC). */
const CREATION_WINDOW: Wait = { waitMs: 24 * HOUR_MS, source: "doc:creation-window-24h" };
/** POST /api/v4/projects and POST /api/v4/groups: "200 requests each day" per user (GITLAB_COM_DOC). */
const CREATION_PATH = /^\/api\/v4\/(projects|groups)\/?$/;

interface Throttle {
  budget: Budget | null;
  reset: Wait | null;
}

/** RateLimit-ResetTime, "RFC2616-formatted date and time when the request quota is reset" (HEADERS_DOC), measured on the server's clock. */
function readResetTime(ctx: SignalContext): Wait | null {
  const raw = ctx.header(RESET_TIME);
  if (raw === undefined) return null;
  const date = parseHttpDate(raw.trim(), ctx.nowMs, { tolerant: true });
  if (!date) {
    ctx.ignore(RESET_TIME, raw, "not an HTTP-date");
    return null;
  }
  return { waitMs: waitUntil(ctx, date.epochMs), source: RESET_TIME };
}

/** The Rack::Attack throttle the headers show: its budget (limit = Observed + Remaining) and its reset (epoch, else the HTTP date). */
function readThrottle(ctx: SignalContext): Throttle {
  const remaining = readCount(ctx, REMAINING);
  const observed = readCount(ctx, OBSERVED);
  const reset = readReset(ctx, RESET, "epoch-seconds") ?? readResetTime(ctx);
  if (remaining === null) return { budget: null, reset };
  const limit = remaining > 0 && observed !== null ? observed + remaining : null;
  return { budget: { remaining, limit, resetAt: reset ? isoAfter(ctx, reset.waitMs) : null, source: REMAINING }, reset };
}

function isCreation(ctx: SignalContext): boolean {
  return ctx.method === "POST" && CREATION_PATH.test(ctx.path);
}

/** What a 429 refused: the shown throttle, spent; else the day's creations; else a limit the headers do not show. */
function refusedBy(ctx: SignalContext, spent: boolean, creation: boolean): string {
  const name = ctx.header(NAME)?.trim();
  if (spent) return `the ${name ? `${name} ` : ""}throttle is spent (RateLimit-Remaining 0)`;
  return creation ? "the day's project or group creations are spent" : "an application rate limit, which the RateLimit headers do not show";
}

/** A 429: the shown throttle when it is spent, else a limit the headers do not show; a quota when its wait is past an hour. */
function throttled(ctx: SignalContext, retryAfter: Wait | null, shown: Throttle): Interpretation {
  const spent = shown.budget?.remaining === 0;
  const wait = spent ? longestWait(retryAfter, shown.reset) : (retryAfter ?? (isCreation(ctx) ? CREATION_WINDOW : null));
  const quota = wait !== null && wait.waitMs > HOUR_MS;
  const creation = !spent && quota && isCreation(ctx);
  const name = ctx.header(NAME)?.trim();
  const then = quota ? `a window longer than an hour, so the work is deferred, not retried in this run (${describeWait(wait)})` : describeWait(wait);
  return throttledBy(quota ? "quota" : "burst", wait, {
    scope: spent ? (name ? { throttle: name } : {}) : { limit: creation ? "creation" : "application" },
    // Unless spent, the headers' budget is another limit's, with room: not this refusal's.
    budget: spent ? shown.budget : null,
    retryable: !quota,
    reason: `GitLab 429: ${refusedBy(ctx, spent, creation)}; ${then}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const shown = readThrottle(ctx);
  if (ctx.status === 429) return throttled(ctx, retryAfter, shown);
  if (ctx.status >= 520 && ctx.status <= 530) {
    return retryableBy("server", retryAfter, {
      budget: shown.budget,
      reason: `${ctx.status}: a CDN error in front of GitLab, transient (python-gitlab retries 520-530); retry if the request is safe to repeat; ${describeWait(retryAfter)}.`,
    });
  }
  // The reset is left out: generic.ts reads a 401/403 with a spent count and a reset as a throttle,
  // and GitLab's throttles answer 429 (HEADERS_DOC); its 403s are final.
  return interpretStatus(ctx, { retryAfter, budget: shown.budget, reset: null });
}

export const gitlab: Dialect = {
  id: "gitlab",
  label: "GitLab",
  hosts: ["gitlab.com", ".gitlab-dedicated.com"],
  docs: [HEADERS_DOC, GITLAB_COM_DOC, DEDICATED_DOC, DEDICATED_DOMAIN_DOC, STATUS_DOC, LIMITS_DOC, HEADERS_SOURCE, APP_LIMIT_SOURCE, APP_LIMIT_RETRY_AFTER, CLIENT_SOURCE],
  interpret,
};
