/**
 * Chargebee Billing's API, one site per subdomain ({site}.chargebee.com/api/v2/..., test sites
 * {site}-test.chargebee.com). Errors are JSON with message, type, api_error_code and param
 * (ERRORS_DOC).
 *
 * Limits are the site's, by plan (LIMITS_DOC): requests per minute ("Number of requests in the past
 * 60 seconds": 150 on Starter and on every test site, 1000 on Performance, 3500 on Enterprise) and
 * concurrent requests ("Number of requests at any given instant of time"). "When the upper limit is
 * breached on either of the above criteria, an HTTP 429 error response is returned for subsequent
 * requests. As a result, no more requests are served until the limit resets (in approximately a
 * minute)." The 429's body names api_error_code api_request_limit_exceeded (type operation_failed),
 * and "Chargebee may also send a Retry-After header indicating the time duration to wait before
 * sending a new request" (ERRORS_DOC, as quoted in PHP_ISSUE; the seconds to wait, as Chargebee's own
 * Node SDK reads it, NODE_SDK RequestWrapper.parseRetryAfter). No count of the minute's requests is
 * documented on any answer, so no budget is read.
 * https://apidocs.chargebee.com/docs/api/error-handling
 * https://www.chargebee.com/docs/billing/2.0/kb/platform/what-are-the-chargebee-api-limits
 * https://github.com/chargebee/chargebee-php/issues/52
 * https://github.com/chargebee/chargebee-node/blob/master/src/RequestWrapper.ts
 *
 * So a 429 of the site's limit waits its Retry-After, else the documented minute (doc:fixed-60s),
 * and holds back the site's other calls (the site is the host, already in the scope). Which of the two
 * limits was breached is not told by a code; a body that says "concurrent" or "simultaneous" is read
 * as the concurrency limit, any other as the per-minute one.
 *
 * Chargebee's generated SDK lists the codes each status carries (JAVA_429, JAVA_503): besides
 * api_request_limit_exceeded, a 429 may be lock_timeout or third_party_api_request_limit_exceeded,
 * names known only from that client code (no description is published beside them):
 * - lock_timeout: a lock another request holds on the same data, not the site's rate; read as
 *   contention, retried after the wait (or backoff), holding back no other call;
 * - third_party_api_request_limit_exceeded: a limit of a service Chargebee called on the request's
 *   behalf (a gateway's, an integration's), not the site's; retried, holding back no other call.
 * A 503 carries site_not_ready, site_read_only_mode, db_connection_failure or
 * internal_temporary_error: "5XX response codes indicate API request was valid but failed due to
 * issues on the Chargebee server" (ERRORS_DOC), and the SDKs answer a bare 503 with
 * internal_temporary_error, "temporary overload or scheduled maintenance. Please retry after
 * sometime" (NODE_CORE), and retry 500, 502, 503 and 504 (NODE_SDK retryOn): transient, retried.
 * 401 (api_authentication_failed) and 403 (api_authorization_failed, request_blocked: the site or
 * the key is not allowed: the 403 codes of JAVA_403) are access errors and stay final (interpretStatus).
 * https://github.com/chargebee/chargebee-java/blob/v4/src/main/java/com/chargebee/v4/exceptions/codes/TooManyRequestsApiErrorCode.java
 * https://github.com/chargebee/chargebee-java/blob/v4/src/main/java/com/chargebee/v4/exceptions/codes/ServiceUnavailableApiErrorCode.java
 * https://github.com/chargebee/chargebee-java/blob/v4/src/main/java/com/chargebee/v4/exceptions/codes/ForbiddenApiErrorCode.java
 * https://github.com/chargebee/chargebee-node/blob/master/src/coreCommon.ts
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readExplicitWaits, type Wait } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, docWait, retryableBy, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const ERRORS_DOC = "https://apidocs.chargebee.com/docs/api/error-handling";
const LIMITS_DOC = "https://www.chargebee.com/docs/billing/2.0/kb/platform/what-are-the-chargebee-api-limits";
const PHP_ISSUE = "https://github.com/chargebee/chargebee-php/issues/52";
const NODE_SDK = "https://github.com/chargebee/chargebee-node/blob/master/src/RequestWrapper.ts";
const NODE_CORE = "https://github.com/chargebee/chargebee-node/blob/master/src/coreCommon.ts";
const JAVA_429 = "https://github.com/chargebee/chargebee-java/blob/v4/src/main/java/com/chargebee/v4/exceptions/codes/TooManyRequestsApiErrorCode.java";
const JAVA_503 = "https://github.com/chargebee/chargebee-java/blob/v4/src/main/java/com/chargebee/v4/exceptions/codes/ServiceUnavailableApiErrorCode.java";
const JAVA_403 = "https://github.com/chargebee/chargebee-java/blob/v4/src/main/java/com/chargebee/v4/exceptions/codes/ForbiddenApiErrorCode.java";

/** "no more requests are served until the limit resets (in approximately a minute)" (LIMITS_DOC). */
const RESET_SECONDS = 60;
const LOCK_TIMEOUT = "lock_timeout";
const THIRD_PARTY_LIMIT = "third_party_api_request_limit_exceeded";
/** The 503 codes of JAVA_503: the site or the server is not ready yet, transient. */
const TRANSIENT_503: ReadonlySet<string> = new Set(["site_not_ready", "site_read_only_mode", "db_connection_failure", "internal_temporary_error"]);
/** Wording of the concurrent-requests limit (LIMITS_DOC's second criterion), in the error's message. */
const CONCURRENT_WORDING = /concurren(?:t|cy)|simultaneous/i;

function errorCode(ctx: SignalContext): string | undefined {
  return asString(field(ctx.body, "api_error_code"))?.trim().toLowerCase();
}

/** The site's own limit: per minute, or concurrent requests when the message says so. */
function siteLimit(ctx: SignalContext, code: string | undefined, retryAfter: Wait | null): Interpretation {
  const wait = retryAfter ?? docWait(RESET_SECONDS);
  const concurrent = CONCURRENT_WORDING.test(asString(field(ctx.body, "message")) ?? "");
  const what = concurrent ? "the site's concurrent requests limit is breached" : "the site's requests per minute are spent";
  return throttledBy(concurrent ? "concurrency" : "burst", wait, {
    scope: {},
    budget: null,
    reason: `Chargebee 429${code ? ` ${code}` : ""}: ${what}; no request is served until the limit resets, about a minute; ${describeWait(wait)}.`,
  });
}

function interpret429(ctx: SignalContext, code: string | undefined, retryAfter: Wait | null): Interpretation {
  if (code === LOCK_TIMEOUT) {
    return retryableBy("contention", retryAfter, {
      scope: {},
      budget: null,
      reason: `Chargebee 429 ${LOCK_TIMEOUT}: another request holds a lock on the same data, not the site's rate; retry the request; ${describeWait(retryAfter)}.`,
    });
  }
  if (code === THIRD_PARTY_LIMIT) {
    return retryableBy("burst", retryAfter, {
      scope: {},
      budget: null,
      reason: `Chargebee 429 ${THIRD_PARTY_LIMIT}: a service Chargebee called for this request (a gateway, an integration) is over its own limit, not the site; retry this request later; ${describeWait(retryAfter)}.`,
    });
  }
  return siteLimit(ctx, code, retryAfter);
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  const code = errorCode(ctx);
  if (ctx.status === 429) return interpret429(ctx, code, retryAfter);
  const reading = interpretStatus(ctx, { retryAfter, budget: null, reset: null });
  if (ctx.status === 503 && code !== undefined && TRANSIENT_503.has(code)) {
    return { ...reading, reason: `Chargebee 503 ${code}: a transient failure on Chargebee's side (the site not ready, read-only for a while, or overloaded), retried; ${describeWait(retryAfter)}.` };
  }
  return reading;
}

export const chargebee: Dialect = {
  id: "chargebee",
  label: "Chargebee",
  hosts: [".chargebee.com"],
  docs: [ERRORS_DOC, LIMITS_DOC, PHP_ISSUE, NODE_SDK, NODE_CORE, JAVA_429, JAVA_503, JAVA_403],
  interpret,
};
