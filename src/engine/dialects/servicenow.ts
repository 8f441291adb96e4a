/**
 * ServiceNow's inbound REST APIs, one instance per subdomain ({instance}.service-now.com/api/...).
 * Two different answers are 429:
 *
 * - A rate limit rule (RATE_DOC): an instance's admin sets rules that "limit the number of inbound
 *   REST API requests processed per hour", for a single user, the users with a role or all users,
 *   each rule for one REST API (and optionally one resource, table or import set table: CREATE_DOC).
 *   Counts are kept per user. An answer matched by a rule carries X-RateLimit-Limit ("the number of
 *   requests allowed per hour"), X-RateLimit-Reset ("the Unix time until the next scheduled reset":
 *   epoch seconds) and X-RateLimit-Rule ("the sys_id of the rate limit rule that is being
 *   enforced"); no remaining count is documented, so a success shows no budget. Over the rule's
 *   hour, "429 Too Many Requests" with a Retry-After, "the number of seconds after which you can
 *   retry the request", and the body {"error": {"message": "Rate limit exceeded", "detail": "Rate
 *   limit of 10 requests per hour for Table API exceeded"}, "status": "failure"}. A spent hour is a
 *   quota: not retried in this run, deferred to the later of Retry-After and X-RateLimit-Reset (an
 *   hour at the latest where neither is sent: a rule counts "for the current hour", RESET_DOC). Its scope
 *   is the request's REST API and the rule: a rule never spans two REST APIs, so a spent Table API
 *   rule holds back Table API calls only, not the Attachment API's.
 * - The instance's queue for integration transactions is full (QUEUE_KB): "a transaction that gets
 *   rejected because the semaphore queues are already full (max queue length 50 on the OOB API_INT
 *   semaphores) will get a HTTP 429 and will never have a chance to run"; when "the API_INT
 *   semaphores are exhausted, and the queue depth has reached the max queue depth, then the instance
 *   will return the error "Too Many Requests"" (SEMAPHORE_KB). That is a limit on transactions in
 *   flight on a node, whatever the user or API: "concurrency", retried after a short wait, and the
 *   write was not done. A 429 with none of the rule's signals is read so.
 * https://www.servicenow.com/docs/r/xanadu/api-reference/rest-api-explorer/inbound-REST-API-rate-limiting.html
 * https://www.servicenow.com/docs/r/yokohama/api-reference/rest-api-explorer/create-REST-API-rate-limits.html
 * https://www.servicenow.com/docs/r/yokohama/api-reference/rest-api-explorer/reset-rest-api-rate-limits.html
 * https://support.servicenow.com/kb?id=kb_article_view&sysparm_article=KB1297438
 * https://support.servicenow.com/kb?id=kb_article_view&sysparm_article=KB0635398
 *
 * Transaction quota rules are no throttle: they cancel a transaction that runs too long ("REST
 * Table API request timeout: Prevents inbound REST Table API transactions from running for longer
 * than 60 seconds", QUOTA_DOC). One that ran, even partly, answers 200 with "Transaction cancelled:
 * maximum execution time exceeded" at the end of a cut-off body; one that waited in the semaphore
 * queue past the timeout and "never gets to run" answers 500 (QUEUE_KB). The 200 is read as any
 * success; the 500 is a server failure worth retrying with backoff, its write not done.
 * https://www.servicenow.com/docs/r/washingtondc/platform-administration/platform-performance/c_DefaultQuotaRules.html
 *
 * Other statuses as the generic dialect reads them (ERRORS_DOC): 401 "The user is not authorized to
 * use the API" and 403 "not permitted for the user ... ACL failures" are final; 500, 502 and 503
 * ("The server is currently unable to handle the request") are retried.
 * https://www.servicenow.com/docs/r/xanadu/api-reference/rest-api-explorer/r_RESTAPIHTTPResponseCodes.html
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, longestWait, readCount, readReset, readRetryAfter, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, retryableBy, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://www.servicenow.com/docs/r/xanadu/api-reference/rest-api-explorer/inbound-REST-API-rate-limiting.html";
const CREATE_DOC = "https://www.servicenow.com/docs/r/yokohama/api-reference/rest-api-explorer/create-REST-API-rate-limits.html";
const RESET_DOC = "https://www.servicenow.com/docs/r/yokohama/api-reference/rest-api-explorer/reset-rest-api-rate-limits.html";
const QUEUE_KB = "https://support.servicenow.com/kb?id=kb_article_view&sysparm_article=KB1297438";
const SEMAPHORE_KB = "https://support.servicenow.com/kb?id=kb_article_view&sysparm_article=KB0635398";
const QUOTA_DOC = "https://www.servicenow.com/docs/r/washingtondc/platform-administration/platform-performance/c_DefaultQuotaRules.html";
const ERRORS_DOC = "https://www.servicenow.com/docs/r/xanadu/api-reference/rest-api-explorer/r_RESTAPIHTTPResponseCodes.html";

const LIMIT = "x-ratelimit-limit";
const RESET = "x-ratelimit-reset";
const RULE = "x-ratelimit-rule";
/** The rule's error message (RATE_DOC). */
const RATE_LIMIT_MESSAGE = "rate limit exceeded";
/** A transaction quota rule's cancellation (QUEUE_KB). */
const CANCELLED = /transaction cancelled: maximum execution time exceeded/i;
/** Where a 429 sends no reset: a rule counts "for the current hour" (RESET_DOC), which ends within one. */
const HOUR_AT_THE_LATEST: Wait = { waitMs: 3_600_000, source: "doc:hourly-reset-within-1h" };

/**
 * The REST API a request calls: /api/{namespace}/{api} or /api/{namespace}/v{n}/{api} (now/table,
 * now/attachment, sn_sc/servicecatalog, a scripted API's x_scope/api_id). A rate limit rule names
 * one REST API (CREATE_DOC), so this is the finest scope known before the answer that no rule spans.
 */
export function serviceNowApiOf(rawPath: string): string {
  const segments = rawPath.split("?")[0]!.split("/").filter((s) => s.length > 0);
  if (segments[0] !== "api" || segments.length < 3) return `/${segments[0] ?? ""}`;
  const namespace = segments[1]!;
  const api = /^v\d+$/i.test(segments[2]!) ? segments[3] : segments[2];
  return api === undefined ? namespace : `${namespace}/${api}`;
}

/** A 429 of a rate limit rule: any of the rule's headers, or its error message. */
function isRuleLimit(ctx: SignalContext): boolean {
  if (ctx.header(RULE) !== undefined || ctx.header(LIMIT) !== undefined || ctx.header(RESET) !== undefined) return true;
  return asString(field(ctx.body, "error", "message"))?.trim().toLowerCase() === RATE_LIMIT_MESSAGE;
}

function ruleSpent(ctx: SignalContext): Interpretation {
  const reset = readReset(ctx, RESET, "epoch-seconds");
  const wait = longestWait(readRetryAfter(ctx), reset) ?? HOUR_AT_THE_LATEST;
  const limit = readCount(ctx, LIMIT);
  const rule = ctx.header(RULE)?.trim();
  const scope: ScopeParts = { api: serviceNowApiOf(ctx.path), ...(rule ? { rule } : {}) };
  // The 429 itself says none is left: no header counts down (RATE_DOC documents no remaining count).
  const budget: Budget | null =
    limit === null && reset === null ? null : { remaining: 0, limit, resetAt: reset ? isoAfter(ctx, reset.waitMs) : null, source: limit === null ? RESET : LIMIT };
  const detail = asString(field(ctx.body, "error", "detail"))?.trim();
  return throttledBy("quota", wait, {
    retryable: false,
    scope,
    budget,
    reason: `ServiceNow 429: the user's hourly rate limit rule${rule ? ` ${rule}` : ""} is spent${detail ? ` (${detail})` : ""}, so the work waits for the rule's hour to reset (${describeWait(wait)}) and is not retried in this run.`,
  });
}

function queueFull(ctx: SignalContext): Interpretation {
  const wait = readRetryAfter(ctx);
  return throttledBy("concurrency", wait, {
    scope: {},
    budget: null,
    writeNotProcessed: true,
    reason: `ServiceNow 429 with no rate limit rule's headers: the instance's queue for integration transactions (API_INT semaphores) is full; the request never ran; ${describeWait(wait)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  if (ctx.status === 429) return isRuleLimit(ctx) ? ruleSpent(ctx) : queueFull(ctx);
  const retryAfter = readRetryAfter(ctx);
  if (ctx.status === 500 && CANCELLED.test(asString(field(ctx.body, "error", "message")) ?? "")) {
    return retryableBy("server", retryAfter, {
      writeNotProcessed: true,
      budget: null,
      reason: `ServiceNow 500 "Transaction cancelled: maximum execution time exceeded": the transaction waited in the instance's semaphore queue past a transaction quota rule's time and never ran; not a rate limit; retry with backoff; ${describeWait(retryAfter)}.`,
    });
  }
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
}

export const servicenow: Dialect = {
  id: "servicenow",
  label: "ServiceNow",
  hosts: [".service-now.com"],
  docs: [RATE_DOC, CREATE_DOC, RESET_DOC, QUEUE_KB, SEMAPHORE_KB, QUOTA_DOC, ERRORS_DOC],
  interpret,
  requestScope: ({ path }) => ({ api: serviceNowApiOf(path) }),
};
