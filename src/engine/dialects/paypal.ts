/**
 * PayPal's REST APIs (api-m.paypal.com live, api-m.sandbox.paypal.com sandbox, and the older
 * api.paypal.com and api.sandbox.paypal.com names of the same APIs). PayPal publishes no rate
 * limits: "PayPal doesn't publish exact rate limits because they vary depending on the API,
 * environment, and circumstances" (RATE_DOC); it rate limits "if we identify traffic that appears to
 * be abusive ... until we are confident that the activity is not problematic", and then answers
 * "HTTP 429 Unprocessable Entity - RATE_LIMIT_REACHED" (GUIDELINES_DOC; the reason phrase is PayPal's
 * own mix of 429 and 422's). The body is PayPal's error object whose name is RATE_LIMIT_REACHED,
 * "Too many requests. Blocked due to rate limiting." (COMMUNITY_ANSWER, a PayPal moderator's post).
 * No header gives a wait or a count: RATE_DOC's own example takes Retry-After "if available" and
 * otherwise backs off exponentially. So a 429, or an error named RATE_LIMIT_REACHED whatever its
 * status, is a burst throttle (the limit is the one that "may deny further requests until your usage
 * drops below the limit", not a spent allowance), waited by Retry-After when one is sent and by
 * backoff otherwise. The example's fallback of 30 s is an example's choice, not a documented wait.
 * Its scope is the caller's credentials: PayPal names no narrower one.
 * https://developer.paypal.com/api/rate-limiting
 * https://developer.paypal.com/api/rest/reference/rate-limiting
 * https://www.paypal-community.com/t5/REST-APIs/What-is-the-meaning-of-quot-RATE-LIMIT-REACHED-quot/td-p/3166905
 *
 * 5xx: "5XX status codes when something is wrong on our end with a server or service" (RESPONSES_DOC),
 * and "You can retry idempotent calls that fail with network timeouts or HTTP 5xx status codes for as
 * long as the server stores the ID", the PayPal-Request-Id header that makes a POST idempotent
 * (IDEMPOTENCY_DOC). So every 5xx is retryable with backoff, and a write is repeated only with the
 * same key (the engine's write-safety rule keeps a POST without one from being repeated). A 503 with
 * Retry-After is read as the generic dialect reads it (load shed, the wait a floor). PayPal's own
 * server SDK retries 429, 500, 502, 503, 504 (and 408, 413, 521, 522, 524) by default, GETs and PUTs
 * only (SDK_DOC): the same statuses, the same caution with writes.
 * https://developer.paypal.com/api/rest/responses/
 * https://developer.paypal.com/api/rest/reference/idempotency/
 * https://github.com/paypal/PayPal-TypeScript-Server-SDK/blob/main/doc/client.md
 *
 * Final, as the generic dialect reads them: 400 INVALID_REQUEST, 401 (an invalid or expired token: a
 * new token is needed, not a wait), 403 NOT_AUTHORIZED, "Authorization failed due to insufficient
 * permissions" (NOT_AUTHORIZED_DOC: a permission error that merely shares a throttle's status
 * family), 404, and 422 UNPROCESSABLE_ENTITY, "The requested action could not be completed, is
 * semantically incorrect, or failed business validation" (RESPONSES_DOC).
 * https://developer.paypal.com/api/rest/troubleshooting/rest_not_authorized
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readExplicitWaits } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, retryableBy, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://developer.paypal.com/api/rate-limiting";
const GUIDELINES_DOC = "https://developer.paypal.com/api/rest/reference/rate-limiting";
const COMMUNITY_ANSWER = "https://www.paypal-community.com/t5/REST-APIs/What-is-the-meaning-of-quot-RATE-LIMIT-REACHED-quot/td-p/3166905";
const RESPONSES_DOC = "https://developer.paypal.com/api/rest/responses/";
const IDEMPOTENCY_DOC = "https://developer.paypal.com/api/rest/reference/idempotency/";
const NOT_AUTHORIZED_DOC = "https://developer.paypal.com/api/rest/troubleshooting/rest_not_authorized";
const SDK_DOC = "https://github.com/paypal/PayPal-TypeScript-Server-SDK/blob/main/doc/client.md";

/** The error name of a rate-limited answer (GUIDELINES_DOC, COMMUNITY_ANSWER). */
const RATE_LIMIT_REACHED = "RATE_LIMIT_REACHED";

/** The error object's name (RATE_LIMIT_REACHED, INTERNAL_SERVER_ERROR...), upper-cased, or undefined. */
function errorName(ctx: SignalContext): string | undefined {
  return asString(field(ctx.body, "name"))?.trim().toUpperCase();
}

function rateLimited(ctx: SignalContext, name: string | undefined): Interpretation {
  const wait = readExplicitWaits(ctx);
  const named = name === RATE_LIMIT_REACHED ? ` ${RATE_LIMIT_REACHED}` : "";
  return throttledBy("burst", wait, {
    scope: {},
    reason: `PayPal ${ctx.status}${named}: too many requests, blocked by PayPal's unpublished rate limiting until the traffic drops; ${describeWait(wait)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const name = errorName(ctx);
  if (ctx.status === 429 || (ctx.status >= 400 && name === RATE_LIMIT_REACHED)) return rateLimited(ctx, name);
  const retryAfter = readExplicitWaits(ctx);
  if (ctx.status >= 500 && ctx.status < 600 && !(ctx.status === 503 && retryAfter)) {
    const named = name ? ` ${name}` : "";
    return retryableBy("server", retryAfter, {
      reason: `PayPal ${ctx.status}${named}: a failure on PayPal's side, retryable; a POST is repeated only with the same PayPal-Request-Id, which makes it idempotent; ${describeWait(retryAfter)}.`,
    });
  }
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
}

export const paypal: Dialect = {
  id: "paypal",
  label: "PayPal REST APIs",
  hosts: ["api-m.paypal.com", "api-m.sandbox.paypal.com", "api.paypal.com", "api.sandbox.paypal.com"],
  docs: [RATE_DOC, GUIDELINES_DOC, COMMUNITY_ANSWER, RESPONSES_DOC, IDEMPOTENCY_DOC, NOT_AUTHORIZED_DOC, SDK_DOC],
  interpret,
};
