/**
 * Mailgun's HTTP API, one base URL per region: api.mailgun.net for US domains, api.eu.mailgun.net
 * for EU domains (OVERVIEW_DOC). Its status codes "follow standard HTTP definitions": 429, "Mailgun
 * does have rate limits in place to protect our system. Please retry these requests as defined in
 * the response"; 500, "Retries are recommended with exponential or logarithmic retry intervals";
 * 401 and 403, an invalid key or access denied (RESPONSES_DOC, OVERVIEW_DOC). The docs name no
 * rate-limit headers (no X-RateLimit-* family, no units) and no per-endpoint numbers, so none is
 * read as a budget: a 429 waits its Retry-After where one is sent, and the body's "retry-seconds",
 * the wait Mailgun's own docs show in a rate-limited answer ({"retry-seconds": 60}, for the
 * Webhooks API's 300 requests per minute per account, WEBHOOKS_DOC), else backs off.
 * https://documentation.mailgun.com/docs/mailgun/api-reference/api-overview
 * https://documentation.mailgun.com/docs/mailgun/quickstart-guide/responses
 * https://github.com/mailgun/documentation/blob/master/source/api-webhooks.rst
 *
 * Sending limits are separate from the request rate. Accounts on probation are limited in "the
 * number of messages you can send per hour" (PROBATION_DOC), and a domain over its recipient cap
 * gets HTTP 420 from the Messages API with {"message": "Domain <domain> is not allowed to send:
 * recipient limit exceeded, try again after <RFC 2822 date> UTC"}: Mailgun's maintainers answer that
 * "Mailgun is rate-limiting that domain by recipients per time window" and "That timestamp is when
 * your window resets" (SENDING_LIMIT_ISSUE; the status and wording are known from Mailgun's Java
 * client's issue tracker, not from the reference docs). So such an answer is a throttle of that
 * domain, waited to its date, and the message was refused, not queued. The same "is not allowed to
 * send" wording with a limit and no date ("message limit reached") is a spent allowance such as the
 * account's custom monthly message limit, which disables sending "until you choose to re-enable the
 * account" or the next calendar month (CUSTOM_LIMIT_DOC): a quota, not retried in this run. Without
 * any limit in it ("Please activate your Mailgun account") it is an access error and stays final.
 * https://help.mailgun.com/hc/en-us/articles/115001124753-Account-Sending-Limitation
 * https://github.com/mailgun/mailgun-java/issues/50
 * https://help.mailgun.com/hc/en-us/articles/4402611589915-Setting-The-Account-s-Custom-Message-Limit
 *
 * A 404 "can be temporal" in Mailgun's eventually consistent system (RESPONSES_DOC), but it is not
 * a limit: it stays final, as the generic reading has it.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { parseHttpDate } from "../http-date";
import { longestWait, readRetryAfter, waitUntil, type Wait } from "../signals";
import type { Interpretation, ScopeParts } from "../types";
import { describeWait, secondsWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const OVERVIEW_DOC = "https://documentation.mailgun.com/docs/mailgun/api-reference/api-overview";
const RESPONSES_DOC = "https://documentation.mailgun.com/docs/mailgun/quickstart-guide/responses";
const WEBHOOKS_DOC = "https://github.com/mailgun/documentation/blob/master/source/api-webhooks.rst";
const PROBATION_DOC = "https://help.mailgun.com/hc/en-us/articles/115001124753-Account-Sending-Limitation";
const SENDING_LIMIT_ISSUE = "https://github.com/mailgun/mailgun-java/issues/50";
const CUSTOM_LIMIT_DOC = "https://help.mailgun.com/hc/en-us/articles/4402611589915-Setting-The-Account-s-Custom-Message-Limit";

/** The Messages API's answer over a domain's sending limit (SENDING_LIMIT_ISSUE). */
const SENDING_LIMIT_STATUS = 420;
/** "Domain <domain> is not allowed to send: <why>" (SENDING_LIMIT_ISSUE, CUSTOM_LIMIT_DOC). */
const NOT_ALLOWED = /domain\s+(\S+)\s+is not allowed to send:\s*(.*)$/is;
const TRY_AGAIN_AFTER = /try again after\s+(.+?)\s*\.?\s*$/is;
const DATE_SOURCE = "body:message try again after";
const RETRY_SECONDS = "body:retry-seconds";

/** The sending domain a path names: /v3/<domain>/messages[.mime], /v3/domains/<domain>/..., or none. */
export function mailgunDomainOf(rawPath: string): string | null {
  const [version, first, second, third] = rawPath.split("?")[0]!.split("/").filter((s) => s !== "");
  if (version === undefined || !/^v\d+$/.test(version)) return null;
  if (first === "domains" && second !== undefined && third !== undefined) return second.toLowerCase();
  if (first !== undefined && second !== undefined && second.startsWith("messages")) return first.toLowerCase();
  return null;
}

function domainScope(domain: string | null): ScopeParts {
  return domain === null ? {} : { domain };
}

/** The error text: the JSON body's "message", else the body's own text (its first 2 KB). */
function messageText(ctx: SignalContext): string {
  return asString(field(ctx.body, "message")) ?? ctx.bodyText.slice(0, 2048);
}

/** The instant after "try again after", on the server's clock; null (recorded) when it is no date. */
function tryAgainAfter(ctx: SignalContext, why: string): Wait | null {
  const raw = TRY_AGAIN_AFTER.exec(why)?.[1];
  if (raw === undefined) return null;
  const date = parseHttpDate(raw, ctx.nowMs, { tolerant: true });
  if (!date) {
    ctx.ignore(DATE_SOURCE, raw, "not an RFC 2822 date");
    return null;
  }
  return { waitMs: waitUntil(ctx, date.epochMs), source: DATE_SOURCE };
}

/** "Domain X is not allowed to send: ...": a window to wait, a spent allowance, or no permission at all. */
function notAllowedToSend(ctx: SignalContext, domain: string, why: string): Interpretation {
  const summary = why.trim().slice(0, 200);
  if (!/limit/i.test(why)) {
    return { throttled: false, retryable: false, limitType: "permission", minWaitMs: null, waitSource: null, scope: { domain }, reason: `Mailgun ${ctx.status}: domain ${domain} is not allowed to send (${summary}); not a limit, and retrying will not help.` };
  }
  const wait = longestWait(tryAgainAfter(ctx, why), readRetryAfter(ctx));
  if (wait) {
    return throttledBy("burst", wait, {
      scope: { domain },
      writeNotProcessed: true,
      reason: `Mailgun ${ctx.status}: domain ${domain} is over its sending limit for the current window (${summary}); the message was not queued; ${describeWait(wait)}.`,
    });
  }
  return throttledBy("quota", null, {
    retryable: false,
    scope: {},
    writeNotProcessed: true,
    reason: `Mailgun ${ctx.status}: the account's sending allowance is spent (${summary}), with no time to try again; not retried in this run.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  if (ctx.status < 400) return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
  const notAllowed = NOT_ALLOWED.exec(messageText(ctx));
  if (notAllowed) return notAllowedToSend(ctx, notAllowed[1]!.toLowerCase(), notAllowed[2] ?? "");
  if (ctx.status === 429) {
    const wait = longestWait(retryAfter, secondsWait(ctx, field(ctx.body, "retry-seconds"), RETRY_SECONDS));
    return throttledBy("burst", wait, { scope: {}, reason: `Mailgun 429: a rate limit of the account's requests; ${describeWait(wait)}.` });
  }
  if (ctx.status === SENDING_LIMIT_STATUS) {
    const domain = mailgunDomainOf(ctx.path);
    return throttledBy("burst", retryAfter, {
      scope: domainScope(domain),
      reason: `Mailgun 420: a sending limit${domain ? ` of domain ${domain}` : ""}, with no time to try again given; ${describeWait(retryAfter)}.`,
    });
  }
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
}

export const mailgun: Dialect = {
  id: "mailgun",
  label: "Mailgun",
  hosts: ["api.mailgun.net", "api.eu.mailgun.net"],
  docs: [OVERVIEW_DOC, RESPONSES_DOC, WEBHOOKS_DOC, PROBATION_DOC, SENDING_LIMIT_ISSUE, CUSTOM_LIMIT_DOC],
  interpret,
  requestScope: ({ path }) => domainScope(mailgunDomainOf(path)),
};
