/**
 * NetSuite's SuiteTalk REST web services (<account>.suitetalk.api.netsuite.com/services/rest, the
 * SOAP endpoint on the same host) and RESTlets (<account>.restlets.api.netsuite.com). NetSuite
 * governs them by concurrency, per account: "Concurrency for REST web services is governed by an
 * account limit, where each request counts toward the account limit. The account governance limit
 * applies to the combined total of web services and RESTlet requests" (REST_GOVERNANCE_DOC,
 * GOVERNANCE_DOC). The limit follows the service tier and the SuiteCloud Plus licences; no rate
 * per window and no count in flight is shown in the answers.
 * https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/subsect_1559222360.html
 * https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_1500275531.html
 * https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/article_0625010817.html
 *
 * A request over the limit is rejected (VIOLATIONS_DOC):
 * - RESTlets: "HTTP error code: 400 Bad Request", "SuiteScript error code: SSS_REQUEST_LIMIT_EXCEEDED";
 * - SOAP web services: ExceededRequestLimitFault (WS_CONCUR_SESSION_DISALLWD) or
 *   ExceededConcurrentRequestLimitFault (WS_REQUEST_BLOCKED);
 * - REST web services: Too Many Requests (429) (AI_CONNECTOR_DOC: "If your request exceeds your
 *   concurrency limit, you see an error for Too Many Requests"). Its errors carry
 *   o:errorDetails[] of { detail, o:errorCode } (REST_ERRORS_DOC); the o:errorCode of a
 *   concurrency 429 is not in the docs found, so any 429 here is read as the account's
 *   concurrency limit, the only limit NetSuite documents for these hosts.
 * https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/bridgehead_1525252812.html
 * https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_0827103226.html
 * https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_156570709583.html
 * https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_4634920277.html
 *
 * Client applications should "retry sending requests in the case of an error" (FAQ_DOC), waiting
 * between attempts (BEST_PRACTICES_DOC): limitType concurrency, retryable with backoff, a place
 * freeing when a request in flight answers. Every other error keeps the generic reading.
 * https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_1504769959.html
 * https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/bridgehead_1500276239.html
 *
 * The account is the host's first label, so the host scope is the account's; REST web services
 * and RESTlets share one limit on two hosts, which two host scopes cannot show.
 */
import type { SignalContext } from "../context";
import { asArray, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readExplicitWaits } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const REST_GOVERNANCE_DOC = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/subsect_1559222360.html";
const GOVERNANCE_DOC = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_1500275531.html";
const GOVERNANCE_LIMITS_DOC = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/article_0625010817.html";
const VIOLATIONS_DOC = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/bridgehead_1525252812.html";
const AI_CONNECTOR_DOC = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_0827103226.html";
const REST_ERRORS_DOC = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_156570709583.html";
const RESTLET_ERRORS_DOC = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_4634920277.html";
const FAQ_DOC = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_1504769959.html";
const BEST_PRACTICES_DOC = "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/bridgehead_1500276239.html";

/**
 * The codes VIOLATIONS_DOC names for a request over the concurrency limit: the RESTlet's SuiteScript
 * code, the SOAP faults and their messages (WS_CONCUR_SESSION_DISALLWD as the table spells it,
 * WS_CONCUR_SESSION_DISALLOWED as the 2017.2 notice does).
 * https://docs.jitterbit.com/release-notes/important-notices/netsuite-2017-2-concurrency-governance/
 */
const CONCURRENCY_CODE = /\b(SSS_REQUEST_LIMIT_EXCEEDED|WS_REQUEST_BLOCKED|WS_CONCUR_SESSION_DISALLO?WE?D|ExceededConcurrentRequestLimitFault|ExceededRequestLimitFault)\b/;
/** Where the code is looked for: an error's code and message come first (generic.ts reads wording so). */
const CODE_MAX_CHARS = 2048;

/** The concurrency code a refused request's body names (JSON, XML or text alike), or null. */
function concurrencyCode(ctx: SignalContext): string | null {
  const text = ctx.bodyText;
  return CONCURRENCY_CODE.exec(text.length > CODE_MAX_CHARS ? text.slice(0, CODE_MAX_CHARS) : text)?.[1] ?? null;
}

/** The first o:errorCode of a REST web services error (REST_ERRORS_DOC), for the reason. */
function restErrorCode(ctx: SignalContext): string | undefined {
  return asString(field(asArray(field(ctx.body, "o:errorDetails"))[0], "o:errorCode"))?.trim() || undefined;
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  const code = ctx.status >= 400 ? concurrencyCode(ctx) : null;
  if (ctx.status !== 429 && code === null) return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
  const named = code ?? restErrorCode(ctx);
  return throttledBy("concurrency", retryAfter, {
    scope: {},
    reason: `NetSuite ${ctx.status}${named ? ` ${named}` : ""}: over the account's concurrency limit (web services and RESTlet requests in flight, combined); a place frees when a request in flight answers, so ${describeWait(retryAfter)}.`,
  });
}

export const netsuite: Dialect = {
  id: "netsuite",
  label: "NetSuite (SuiteTalk REST web services, RESTlets)",
  hosts: [".suitetalk.api.netsuite.com", ".restlets.api.netsuite.com"],
  docs: [REST_GOVERNANCE_DOC, GOVERNANCE_DOC, GOVERNANCE_LIMITS_DOC, VIOLATIONS_DOC, AI_CONNECTOR_DOC, REST_ERRORS_DOC, RESTLET_ERRORS_DOC, FAQ_DOC, BEST_PRACTICES_DOC],
  interpret,
};
