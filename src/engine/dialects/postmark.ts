/**
 * Postmark's API (api.postmarkapp.com, OVERVIEW_DOC). Every API error's body is JSON with Postmark's
 * own ErrorCode and a Message ("When the Postmark API rejects a request, it returns JSON with an
 * ErrorCode and a Message", FORBIDDEN_DOC); the HTTP status says the kind (OVERVIEW_DOC, "HTTP
 * response codes", and ERRORS_DOC, "API error codes"):
 * - 429, ErrorCode 429 "Rate Limit Exceeded": "We have detected an excessive volume of requests
 *   originating from your application, please reduce the concurrency and request rate of your
 *   requests. If your app requires a rate limit increase, please contact support". Postmark names
 *   no number, no window and no rate-limit header, and documents no Retry-After (its own Node client
 *   reads none: postmark.js only maps the status to RateLimitExceededError, SDK_SOURCE). So a 429
 *   is a burst throttle retried with backoff; a Retry-After, should one come, is read as RFC 9110
 *   says, a floor.
 * - 422 Unprocessable Entity: "Postmark successfully received your request, but the data inside
 *   that request is invalid or missing required information" (UNPROCESSABLE_DOC), with the reason
 *   in ErrorCode: 406 "Inactive recipient" (a hard bounce or spam complaint: the address must be
 *   reactivated by hand), 300 "Invalid email request", 410 "Too many batch messages" (over 500 in a
 *   batch), 412 "Account is Pending", 413 "Account May Not Send", and the rest. None comes right by
 *   waiting, so they stay final (interpretStatus: validation), the code named in the reason.
 *   One is an allowance, not bad data: 405 "Not allowed to send", "Your account has run out of
 *   credits. You can purchase more on the Credits page" (ERRORS_DOC). A quota: not retried in this
 *   run, and no wait given (credits come back when bought, at no time the docs name).
 * - 500 "an issue with Postmark's servers processing your request. In most cases the message is
 *   lost during the process"; 503 "During planned service outages, Postmark API services will
 *   return this HTTP response and associated JSON body", whose ErrorCode 100 is "Maintenance: The
 *   Postmark API is offline for maintenance" (OVERVIEW_DOC, ERRORS_DOC). Transient server
 *   failures, retried (interpretStatus). "In most cases" is not "always", so a write's 500 is not
 *   marked as not processed. ErrorCode 100 is read as the outage whatever the status it comes with.
 * - 401 (ErrorCode 10, "Bad or missing API token"), and a 403 with an HTML body, "stopped by a
 *   network-level security layer in front of the API" (FORBIDDEN_DOC), are access errors: final.
 * https://postmarkapp.com/developer/api/overview
 * https://postmarkapp.com/developer/api/overview#error-codes
 * https://postmarkapp.com/support/article/troubleshooting-422-unprocessable-entity-errors
 * https://postmarkapp.com/support/article/getting-a-403-that-doesnt-look-like-a-postmark-error
 * https://github.com/ActiveCampaign/postmark.js/blob/main/src/client/errors/ErrorHandler.ts
 *
 * The HTTP-status texts and the ErrorCode table were read from copies of the overview page (the
 * stored copy of the page itself is cut short after 404): the 429, 500 and 503 sentences as quoted
 * in public client code, the ErrorCode sentences as postmark-swift and a public gist of the table
 * carry them.
 */
import type { SignalContext } from "../context";
import { asNumber, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readExplicitWaits } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, retryableBy, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const OVERVIEW_DOC = "https://postmarkapp.com/developer/api/overview";
const ERRORS_DOC = "https://postmarkapp.com/developer/api/overview#error-codes";
const UNPROCESSABLE_DOC = "https://postmarkapp.com/support/article/troubleshooting-422-unprocessable-entity-errors";
const FORBIDDEN_DOC = "https://postmarkapp.com/support/article/getting-a-403-that-doesnt-look-like-a-postmark-error";
const SDK_SOURCE = "https://github.com/ActiveCampaign/postmark.js/blob/main/src/client/errors/ErrorHandler.ts";

/** "Rate Limit Exceeded" (ERRORS_DOC). */
const RATE_LIMIT_EXCEEDED = 429;
/** "Not allowed to send: Your account has run out of credits" (ERRORS_DOC). */
const OUT_OF_CREDITS = 405;
/** "Maintenance: The Postmark API is offline for maintenance" (ERRORS_DOC). */
const MAINTENANCE = 100;

/** The body's ErrorCode (an integer in Postmark's JSON), or undefined for a body without one (an HTML 403). */
function errorCodeOf(ctx: SignalContext): number | undefined {
  return asNumber(field(ctx.body, "ErrorCode"));
}

/** " ErrorCode 406 (You tried to send to recipient(s) that have been marked as inactive...)" for reasons; Message cut short. */
function describeCode(ctx: SignalContext, code: number | undefined): string {
  if (code === undefined) return "";
  const message = asString(field(ctx.body, "Message"))?.trim();
  return ` ErrorCode ${code}${message ? ` (${message.length > 120 ? `${message.slice(0, 117)}...` : message})` : ""}`;
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  const code = errorCodeOf(ctx);
  const codeText = describeCode(ctx, code);
  if (ctx.status === 429 || code === RATE_LIMIT_EXCEEDED) {
    return throttledBy("burst", retryAfter, {
      reason: `Postmark ${ctx.status}${codeText}: an excessive volume of requests from this application; Postmark names no limit or window, so reduce the rate; ${describeWait(retryAfter)}.`,
    });
  }
  if (code === MAINTENANCE) {
    return retryableBy("server", retryAfter, {
      reason: `Postmark ${ctx.status}${codeText}: the API is offline for maintenance (a planned outage); retry later; ${describeWait(retryAfter)}.`,
    });
  }
  if (ctx.status === 422 && code === OUT_OF_CREDITS) {
    return throttledBy("quota", null, {
      retryable: false,
      scope: { limit: "credits" },
      reason: `Postmark 422${codeText}: the account has run out of credits; they come back only when more are bought, so the send is not retried in this run.`,
    });
  }
  const generic = interpretStatus(ctx, { retryAfter, budget: null, reset: null });
  if (ctx.status !== 422 || code === undefined) return generic;
  return { ...generic, reason: `Postmark 422${codeText}: the request is refused as sent (Postmark's API error code); retrying will not help.` };
}

export const postmark: Dialect = {
  id: "postmark",
  label: "Postmark",
  hosts: ["api.postmarkapp.com"],
  docs: [OVERVIEW_DOC, ERRORS_DOC, UNPROCESSABLE_DOC, FORBIDDEN_DOC, SDK_SOURCE],
  interpret,
};
