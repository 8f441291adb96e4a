/**
 * Smartsheet API 2.0 (api.smartsheet.com, api.smartsheet.eu, api.smartsheetgov.com: SDK_SOURCE's
 * base URIs). Every error carries a Smartsheet errorCode beside its HTTP status (ERRORS_DOC). "The
 * Smartsheet API currently imposes a rate limit of 300 requests per minute per Access Token"
 * (PRACTICES_DOC); over it, a 429 whose body is {"errorCode": 4003, "message": "Rate limit
 * exceeded."} (OPENAPI_SPEC), and no header giving a count, a reset or a wait is documented. So the
 * minute is the wait (doc:fixed-60s), after which the window's requests are back, unless the server
 * sends a wait of its own (Retry-After is read if it ever appears); the limit is the token's,
 * across the API (no endpoint in its scope).
 * https://developers.smartsheet.com/blog/smartsheet-api-best-practices
 * https://developers.smartsheet.com/api/smartsheet/error-codes
 * https://smartsheet.redoc.ly/
 * https://github.com/ronreynolds/smartsheet-openapi/blob/main/src/main/resources/openapi-3.1.0-smartsheet-v2.yaml
 *
 * Smartsheet's SDKs retry exactly four errorCodes, with exponential backoff (SDK_SOURCE
 * OperationErrorResult.error_lookup, JS_SDK_SOURCE shouldRetry): 4001 "Smartsheet.com is currently
 * offline for system maintenance" ("Wait time between retries should measure in minutes (not
 * seconds)": a minute is its wait here), 4002 "Server timeout exceeded. Request has failed.", 4003,
 * and 4004 "An unexpected error has occurred. Please retry your request." (OPENAPI_SPEC). One 4004
 * is contention: "Request failed because sheetId {0} is currently being updated by another request
 * that uses the same access token. Please retry your request once the previous request has
 * completed." (OPENAPI_SPEC): the request failed, so a write may be sent again. Every other code
 * is "Do not retry without fixing the problem" (SDK_SOURCE): 4000 on a 500 is final too, and 1004
 * (403, not authorized) and the other 1xxx codes stay as their status says.
 * https://github.com/smartsheet/smartsheet-python-sdk/blob/mainline/smartsheet/smartsheet.py
 * https://github.com/smartsheet/smartsheet-javascript-sdk/blob/mainline/lib/utils/httpRequestor.js
 *
 * Not found in the stored docs: the rate-limiting section the API reference links to
 * (#section/Work-at-Scale/Rate-Limiting, OPENAPI_SPEC); the 60 s rests on the documented per-minute
 * limit.
 */
import type { SignalContext } from "../context";
import { asNumber, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readExplicitWaits, type Wait } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, docWait, retryableBy, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const PRACTICES_DOC = "https://developers.smartsheet.com/blog/smartsheet-api-best-practices";
const ERRORS_DOC = "https://developers.smartsheet.com/api/smartsheet/error-codes";
const OPENAPI_SPEC = "https://smartsheet.redoc.ly/";
const SDK_SOURCE = "https://github.com/smartsheet/smartsheet-python-sdk/blob/mainline/smartsheet/smartsheet.py";
const JS_SDK_SOURCE = "https://github.com/smartsheet/smartsheet-javascript-sdk/blob/mainline/lib/utils/httpRequestor.js";

/** "300 requests per minute per Access Token" (PRACTICES_DOC). */
const WINDOW_SECONDS = 60;
const RATE_LIMIT_EXCEEDED = 4003;
const MAINTENANCE = 4001;
/** 4002 server timeout, 4004 unexpected error: "Retry using exponential backoff." (SDK_SOURCE). */
const TRANSIENT: ReadonlySet<number> = new Set([4002, 4004]);
/** 4004's contention message (OPENAPI_SPEC). */
const SHEET_BUSY = /currently being updated by another request/i;

function transient(ctx: SignalContext, code: number, message: string, retryAfter: Wait | null): Interpretation {
  if (code === 4004 && SHEET_BUSY.test(message)) {
    return retryableBy("contention", retryAfter, {
      budget: null,
      writeNotProcessed: true,
      reason: `Smartsheet ${ctx.status} 4004: the sheet is being updated by another request of the same token; the request failed, retry it once that one completes; ${describeWait(retryAfter)}.`,
    });
  }
  return retryableBy("server", retryAfter, {
    budget: null,
    reason: `Smartsheet ${ctx.status} ${code}${message ? ` (${message.trim()})` : ""}: a transient failure Smartsheet's SDKs retry with backoff; ${describeWait(retryAfter)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  const code = asNumber(field(ctx.body, "errorCode"));
  const message = asString(field(ctx.body, "message")) ?? "";
  if (code === RATE_LIMIT_EXCEEDED || ctx.status === 429) {
    const wait = retryAfter ?? docWait(WINDOW_SECONDS);
    return throttledBy("burst", wait, {
      scope: {},
      reason: `Smartsheet ${ctx.status}${code === undefined ? "" : ` ${code}`}: the access token's 300 requests per minute are spent; ${describeWait(wait)}.`,
    });
  }
  if (code === MAINTENANCE) {
    const wait = retryAfter ?? docWait(WINDOW_SECONDS);
    return retryableBy("server", wait, {
      budget: null,
      reason: `Smartsheet ${ctx.status} 4001: offline for system maintenance; retries a minute or more apart; ${describeWait(wait)}.`,
    });
  }
  if (code !== undefined && TRANSIENT.has(code)) return transient(ctx, code, message, retryAfter);
  if (code !== undefined && ctx.status >= 500) {
    return { throttled: false, retryable: false, limitType: "none", minWaitMs: null, waitSource: null, budget: null, reason: `Smartsheet ${ctx.status} ${code}${message ? ` (${message.trim()})` : ""}: an error Smartsheet says not to retry without fixing the problem; final.` };
  }
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
}

export const smartsheet: Dialect = {
  id: "smartsheet",
  label: "Smartsheet",
  hosts: ["api.smartsheet.com", "api.smartsheet.eu", "api.smartsheetgov.com"],
  docs: [PRACTICES_DOC, ERRORS_DOC, OPENAPI_SPEC, SDK_SOURCE, JS_SDK_SOURCE],
  interpret,
};
