/**
 * BambooHR's API: https://api.bamboohr.com/api/gateway.php/{company}/v1/... and, in the newer
 * documentation, https://{companyDomain}.bamboohr.com/api/... (DETAILS_DOC). No limit is published
 * and no answer shows a count; the only signals are the status and Retry-After.
 * https://documentation.bamboohr.com/docs/api-details
 * https://documentation.bamboohr.com/docs/planned-changes-to-the-api
 * https://bamboohr.screenstepslive.com/m/53907/l/587843-api-error-code-definitions
 *
 * For years a rate limit answered 503: "API requests can be throttled if BambooHR deems them to be too
 * frequent. Implementations should always be ready for a 503 Service Unavailable response"
 * (DETAILS_DOC), "The service is temporarily unavailable. Please try the request again. We provide a
 * header that states "Retry-After"" (ERROR_CODES_DOC). "Beginning September 16, 2026, BambooHR API
 * requests that exceed a rate limit will return HTTP 429 (Too Many Requests) instead of HTTP 503";
 * "Every rate-limited response includes a Retry-After header. Honor it before sending more
 * requests"; "HTTP 503 will still be returned when the BambooHR API is temporarily unavailable, it
 * just no longer indicates rate limiting" (CHANGES_DOC).
 *
 * So:
 * - 429 with Retry-After: the rate limit, a burst, waited for its Retry-After.
 * - 429 without one is not that limit: the older 429 is "Limit Exceeded - The account has reached its
 *   employee limit and does not allow the addition of more employees" (DETAILS_DOC, ERROR_CODES_DOC),
 *   an allowance of the plan that no wait restores: final, not retried, and no throttle (only adding
 *   employees fails; the company's other calls go on). Told by X-BambooHR-Error-Message naming
 *   employees, or by a POST to /employees; any other bare 429 is a rate limit that named no wait,
 *   backed off.
 * - 503 with Retry-After: either the old rate limit or the API unavailable; both ask for the wait, so
 *   it holds the company's calls for it (limitType "server": as an outage, a write it answered is
 *   not known to be undone, so a POST is not repeated without an idempotency key).
 * - 503 without one: retried with backoff, holding back no other call. BambooHR's own SDK leaves 503
 *   out of its automatic retries ([408, 429, 504, 598], SDK_SOURCE) and suggests adding it and reading
 *   Retry-After "if provided" (SDK_503_SOURCE).
 * - 401 ("Your API key is missing") and 403 ("does not have privileges to access", DETAILS_DOC) are
 *   access errors, final; 502 "Please try the request again" (ERROR_CODES_DOC) is retried with backoff,
 *   as the generic dialect reads it.
 * https://github.com/BambooHR/bhr-api-php/blob/master/lib/Configuration.php
 * https://github.com/BambooHR/bhr-api-php/blob/master/lib/Exceptions/ServiceUnavailableException.php
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { readExplicitWaits, type Wait } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, retryableBy, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const DETAILS_DOC = "https://documentation.bamboohr.com/docs/api-details";
const CHANGES_DOC = "https://documentation.bamboohr.com/docs/planned-changes-to-the-api";
const ERROR_CODES_DOC = "https://bamboohr.screenstepslive.com/m/53907/l/587843-api-error-code-definitions";
const SDK_SOURCE = "https://github.com/BambooHR/bhr-api-php/blob/master/lib/Configuration.php";
const SDK_503_SOURCE = "https://github.com/BambooHR/bhr-api-php/blob/master/lib/Exceptions/ServiceUnavailableException.php";

/** The error detail header, under its name and under the misspelling ERROR_CODES_DOC warns of ("the extra "s" ... will be there"). */
const MESSAGE_HEADERS = ["x-bamboohr-error-message", "x-bamboohr-error-messsage"];
/** Adding an employee: POST .../v1/employees (the only request the employee limit refuses). */
const ADD_EMPLOYEE_PATH = /\/employees\/?$/i;
const MESSAGE_SHOWN_CHARS = 200;

function errorMessage(ctx: SignalContext): string | undefined {
  for (const name of MESSAGE_HEADERS) {
    const value = ctx.header(name)?.trim();
    if (value) return value.length > MESSAGE_SHOWN_CHARS ? value.slice(0, MESSAGE_SHOWN_CHARS) : value;
  }
  return undefined;
}

/** The older 429: the company's employee limit, told by its message or by the request that adds an employee. */
function employeeLimit(ctx: SignalContext, message: string | undefined, retryAfter: Wait | null): boolean {
  if (message !== undefined) return /employee/i.test(message);
  return retryAfter === null && ctx.method === "POST" && ADD_EMPLOYEE_PATH.test(ctx.path);
}

function tooMany(ctx: SignalContext, retryAfter: Wait | null): Interpretation {
  const message = errorMessage(ctx);
  const detail = message ? ` (${message})` : "";
  if (employeeLimit(ctx, message, retryAfter)) {
    return {
      throttled: false,
      retryable: false,
      limitType: "quota",
      minWaitMs: null,
      waitSource: null,
      reason: `BambooHR 429 Limit Exceeded${detail}: the company has reached its employee limit, so no more employees can be added; no wait restores it, so it is not retried.`,
    };
  }
  return throttledBy("burst", retryAfter, {
    reason: `BambooHR 429${detail}: the API's rate limit (answered with 429 since 16 September 2026, with Retry-After); ${describeWait(retryAfter)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  if (ctx.status === 429) return tooMany(ctx, retryAfter);
  if (ctx.status === 503) {
    const detail = errorMessage(ctx);
    const what = `BambooHR 503${detail ? ` (${detail})` : ""}: the rate limit as answered before 16 September 2026, or the API temporarily unavailable`;
    if (retryAfter) return throttledBy("server", retryAfter, { reason: `${what}; either way ${describeWait(retryAfter)}.` });
    return retryableBy("server", null, { reason: `${what}, with no Retry-After; retry with backoff.` });
  }
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
}

export const bamboohr: Dialect = {
  id: "bamboohr",
  label: "BambooHR",
  hosts: [".bamboohr.com"],
  docs: [DETAILS_DOC, CHANGES_DOC, ERROR_CODES_DOC, SDK_SOURCE, SDK_503_SOURCE],
  interpret,
};
