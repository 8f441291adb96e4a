/**
 * Zoho CRM's REST API (/crm/v2 to /crm/v8) on each data center's zohoapis host: www., sandbox.,
 * developer. and content. under zohoapis.com, .eu, .in, .com.au, .com.cn, .jp, .ca and .sa
 * (MULTI_DC_DOC; the official SDK's list of data centers, SDK_DC_SOURCE).
 * https://www.zoho.com/crm/developer/docs/api/v8/multi-dc.html
 * https://github.com/zoho/zohocrm-typescript-sdk-8.0/blob/main/utils/util/constants.ts
 *
 * Two limits, both the organization's (LIMITS_DOC, LIMITS_POST):
 * - API credits over a rolling 24 hours (most calls cost 1, some more): "for every API call, we
 *   will check the API credits consumed in the last 24 hours", and the credits used at each moment
 *   "will be freed up after 24 hours" (CREDITS_POST). No reset instant is sent. Once half the
 *   day's credits are used, answers show X-API-CREDITS-REMAINING (LIMITS_DOC).
 * - Concurrency: the calls an app has in flight at once, by edition (Free 5, Standard 10,
 *   Professional 15, Enterprise 20, Ultimate 25), and a sub-concurrency limit of 10 for
 *   resource-intensive APIs (bulk updates, queries, lead conversion, mail...): "Exceeding these
 *   returns a TOO_MANY_REQUESTS error" (LIMITS_POST).
 * https://www.zoho.com/crm/developer/docs/api/v8/api-limits.html
 * https://www.zoho.com/crm/developer/docs/api/v4/api-limits.html
 * https://help.zoho.com/portal/en/community/topic/credit-calculation-and-concurrency-in-zoho-crm-apis
 * https://help.zoho.com/portal/en/community/topic/kaizen-203-answering-your-questions-handling-api-limits-and-error-responses
 *
 * Both answer 429 with the body's code TOO_MANY_REQUESTS: the API requests "for the 24 hour
 * period" exceeded "or the concurrency limit of the user for the app" (STATUS_DOC); the code does
 * not tell which, and no Retry-After is documented. What tells them apart is the credits header:
 * 0 left means the credits are spent (a quota: not retried in this run, deferred by the window's
 * 24 h, after which every credit counted now is free again); credits left, or no header (shown
 * only from half the credits used), mean the 429 is the concurrency limit, whose place frees when
 * a call in flight answers: retried with backoff. Permission and token errors (INVALID_TOKEN,
 * OAUTH_SCOPE_MISMATCH, NO_PERMISSION on 401/403, STATUS_DOC) keep the generic reading: final.
 * https://www.zoho.com/crm/developer/docs/api/v8/status-codes.html
 *
 * Other Zoho products answer on the same hosts with limits of their own (Zoho Books at
 * /books/v4, BOOKS_DOC): only /crm/ paths get this reading, and every request's scope names its
 * product (the path's first segment), so that a CRM limit does not hold back a Books call.
 * https://www.zoho.com/books/api/v4/introduction/
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readCount, readExplicitWaits, type Wait } from "../signals";
import type { Interpretation, ScopeParts } from "../types";
import { describeWait, throttledBy } from "./_dialect-kit";
import { interpretStatus, readStandardSignals } from "./generic";

const LIMITS_DOC = "https://www.zoho.com/crm/developer/docs/api/v8/api-limits.html";
const LIMITS_DOC_V4 = "https://www.zoho.com/crm/developer/docs/api/v4/api-limits.html";
const CREDITS_POST = "https://help.zoho.com/portal/en/community/topic/credit-calculation-and-concurrency-in-zoho-crm-apis";
const LIMITS_POST = "https://help.zoho.com/portal/en/community/topic/kaizen-203-answering-your-questions-handling-api-limits-and-error-responses";
const STATUS_DOC = "https://www.zoho.com/crm/developer/docs/api/v8/status-codes.html";
const MULTI_DC_DOC = "https://www.zoho.com/crm/developer/docs/api/v8/multi-dc.html";
const SDK_DC_SOURCE = "https://github.com/zoho/zohocrm-typescript-sdk-8.0/blob/main/utils/util/constants.ts";
const BOOKS_DOC = "https://www.zoho.com/books/api/v4/introduction/";

/** Shown once half the day's credits are used (LIMITS_DOC). */
const CREDITS_HEADER = "x-api-credits-remaining";
/** Credits used at each moment are "freed up after 24 hours" (CREDITS_POST): waiting that long is sure to find them all free. */
const CREDITS_WINDOW: Wait = { waitMs: 86_400_000, source: "doc:rolling-24h" };

/** The product a path belongs to: its first segment ("crm", "books"...). */
function productScope(path: string): ScopeParts {
  return { api: /^\/([^/?#]*)/.exec(path)?.[1] ?? "" };
}

const CRM: ScopeParts = { api: "crm" };

function creditsSpent(codeText: string, retryAfter: Wait | null): Interpretation {
  const wait = longestWait(retryAfter, CREDITS_WINDOW);
  return throttledBy("quota", wait, {
    retryable: false,
    scope: CRM,
    reason: `Zoho CRM 429${codeText} with ${CREDITS_HEADER}: 0: the organization's API credits for the rolling 24 hours are spent; not retried in this run, deferred until the credits counted now are free again (${describeWait(wait)}).`,
  });
}

function interpretCrm(ctx: SignalContext): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  if (ctx.status !== 429) {
    // An answer that is no throttle names no scope unless it is an error (okta.ts, quietSuccess).
    return interpretStatus(ctx, { retryAfter, budget: null, reset: null }, ctx.status >= 400 ? CRM : undefined);
  }
  const code = asString(field(ctx.body, "code"))?.trim().toUpperCase();
  const codeText = code ? ` ${code}` : "";
  const credits = readCount(ctx, CREDITS_HEADER);
  if (credits === 0) return creditsSpent(codeText, retryAfter);
  const shown = credits === null ? `no ${CREDITS_HEADER} (it shows from half the credits used)` : `${credits} credits left`;
  return throttledBy("concurrency", retryAfter, {
    scope: CRM,
    reason: `Zoho CRM 429${codeText} with ${shown}: read as the concurrency limit (the app's calls in flight, or a heavy API's sub-concurrency limit); a place frees when a call in flight answers, so ${describeWait(retryAfter)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  if (/^\/crm(?:[/?#]|$)/.test(ctx.path)) return interpretCrm(ctx);
  // Another Zoho product on the same host (BOOKS_DOC): the generic reading, in its product's scope.
  return interpretStatus(ctx, readStandardSignals(ctx), ctx.status >= 400 ? productScope(ctx.path) : undefined);
}

export const zohoCrm: Dialect = {
  id: "zoho-crm",
  label: "Zoho CRM",
  hosts: [".zohoapis.com", ".zohoapis.eu", ".zohoapis.in", ".zohoapis.com.au", ".zohoapis.com.cn", ".zohoapis.jp", ".zohoapis.ca", ".zohoapis.sa"],
  docs: [LIMITS_DOC, LIMITS_DOC_V4, CREDITS_POST, LIMITS_POST, STATUS_DOC, MULTI_DC_DOC, SDK_DC_SOURCE, BOOKS_DOC],
  interpret,
  requestScope: ({ path }) => productScope(path),
};
