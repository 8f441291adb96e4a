/**
 * Twilio SendGrid's Web API v3 (api.sendgrid.com, and api.eu.sendgrid.com for EU data residency,
 * the base URL SendGrid's Node client switches to: NODE_CLIENT setDataResidency).
 *
 * Limits are per endpoint: "Depending on the endpoint you are trying to reach, it will have a
 * specific number of allowed requests per refresh period. Once this threshold has been reached, we
 * will return a status code 429 response", and then "You will no longer be able to make request
 * against that endpoint for the duration of that refresh period" (RATE_DOC). Every answer shows the
 * endpoint's count in X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset, and the 429's
 * body is {"errors":[{"field":null,"message":"too many requests"}]} (RATE_DOC). The doc gives the
 * reset only by example (1392815263): a UNIX time in seconds, as SendGrid's own Go client reads it
 * (time.Unix(reset, 0), then sleeps until it, GO_CLIENT MakeRequestRetryWithContext). So a 429
 * waits until that reset (a longer Retry-After still wins), in the scope of its endpoint, known
 * from the path before the request is sent, so that a spent endpoint does not hold back the others.
 * https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/rate-limits
 * https://github.com/sendgrid/sendgrid-go/blob/main/base_interface.go
 * https://github.com/sendgrid/sendgrid-nodejs/blob/main/packages/client/src/classes/client.js
 *
 * Sending email also spends the account's email credits, which are no rate: "These accounts [the
 * Free Email API plan] have a daily 100-credit limit", and with them spent "please wait until the
 * next day (UTC time) for the credit count to reset"; a paid plan's credit limit holds until the plan
 * is upgraded or paid (CREDITS_DOC). The answer is a 401 whose message is "Maximum credits exceeded"
 * (CREDITS_DOC's error; Twilio documents the same SendGrid error as HTTP 401, VERIFY_60603). So it is
 * a quota, not a credential error and not a burst: not retried in this run, deferred to the next
 * midnight UTC, the soonest the credits can come back, and only for the endpoint that sends (reads
 * spend no credits). Other 401s (a bad key) and 403s ("Too many bad requests. Temporary block", or a
 * key without the scope: ERRORS_DOC) are final (interpretStatus), unless the endpoint's count shows
 * spent with its reset. 5xx are read as the generic dialect reads them.
 * https://support.sendgrid.com/hc/en-us/articles/35466138799899-Understanding-the-Maximum-Credits-Exceeded-error
 * https://www.twilio.com/docs/api/errors/60603
 * https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/errors
 */
import type { SignalContext } from "../context";
import { asArray, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, longestWait, readExplicitWaits, readLimitFamily } from "../signals";
import type { Interpretation, ScopeParts } from "../types";
import { describeWait, throttledBy, untilDailyReset } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/rate-limits";
const ERRORS_DOC = "https://www.twilio.com/docs/sendgrid/api-reference/how-to-use-the-sendgrid-v3-api/errors";
const CREDITS_DOC = "https://support.sendgrid.com/hc/en-us/articles/35466138799899-Understanding-the-Maximum-Credits-Exceeded-error";
const VERIFY_60603 = "https://www.twilio.com/docs/api/errors/60603";
const GO_CLIENT = "https://github.com/sendgrid/sendgrid-go/blob/main/base_interface.go";
const NODE_CLIENT = "https://github.com/sendgrid/sendgrid-nodejs/blob/main/packages/client/src/classes/client.js";

const NAMES = { limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining", reset: "x-ratelimit-reset" };
/** The error message of spent email credits (CREDITS_DOC). */
const CREDITS_SPENT = /maximum credits exceeded/i;
const CREDITS_SOURCE = "body:errors[].message";
/** A path segment that is an id, an email address or a template id (digits, "@", or percent-encoded), not a route name. */
const ID_SEGMENT = /[\d@%]/;
/** A version segment such as "2.0" (/v3/marketing/segments/2.0) is part of the route. */
const VERSION_SEGMENT = /^(?:v\d+|\d+\.\d+)$/i;

/** The endpoint a request counts against: its path with the ids taken out (/v3/templates/d-1a2b... is /v3/templates/{id}). */
export function sendgridEndpointOf(rawPath: string): string {
  const segments = (rawPath.split("?")[0] ?? "").split("/").filter((s) => s.length > 0);
  const route = segments.map((s, i) => (i === 0 || VERSION_SEGMENT.test(s) || !ID_SEGMENT.test(s) ? s.toLowerCase() : "{id}"));
  return `/${route.join("/")}`;
}

function endpointScope(path: string): ScopeParts {
  return { endpoint: sendgridEndpointOf(path) };
}

/** Whether an error in the body's errors[] says the account's email credits are spent. */
function creditsSpent(ctx: SignalContext): boolean {
  return asArray(field(ctx.body, "errors")).some((e) => CREDITS_SPENT.test(asString(field(e, "message")) ?? ""));
}

/** Email credits spent: a quota until the next midnight UTC at the soonest (CREDITS_DOC), for the sending endpoint only. */
function creditsQuota(ctx: SignalContext): Interpretation {
  const wait = untilDailyReset(ctx, 0, "doc:daily-reset-midnight-utc");
  return throttledBy("quota", wait, {
    retryable: false,
    scope: endpointScope(ctx.path),
    budget: { remaining: 0, limit: null, resetAt: isoAfter(ctx, wait.waitMs), source: CREDITS_SOURCE },
    reason: `SendGrid ${ctx.status} "Maximum credits exceeded": the account's email credits are spent (a free plan's 100 a day come back at midnight UTC; a paid plan's limit needs an upgrade or payment), so sending is not retried in this run and waits until then: ${describeWait(wait)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  const family = readLimitFamily(ctx, NAMES, "epoch-seconds");
  if (ctx.status >= 400 && creditsSpent(ctx)) return creditsQuota(ctx);
  if (ctx.status === 429) {
    const wait = longestWait(retryAfter, family.reset);
    const shown = family.budget ? ` (${family.budget.remaining} of ${family.budget.limit ?? "?"} left)` : "";
    return throttledBy("burst", wait, {
      scope: endpointScope(ctx.path),
      budget: family.budget,
      reason: `SendGrid 429: the endpoint's requests for this refresh period are spent${shown}; ${describeWait(wait)}.`,
    });
  }
  // An answer that shows no count names no scope, as a plain success does (classify.ts quietSuccess).
  return interpretStatus(ctx, { retryAfter, budget: family.budget, reset: family.reset }, family.budget === null ? undefined : endpointScope(ctx.path));
}

export const sendgrid: Dialect = {
  id: "sendgrid",
  label: "Twilio SendGrid",
  hosts: ["api.sendgrid.com", "api.eu.sendgrid.com"],
  docs: [RATE_DOC, ERRORS_DOC, CREDITS_DOC, VERIFY_60603, GO_CLIENT, NODE_CLIENT],
  interpret,
  requestScope: ({ path }) => endpointScope(path),
};
