/**
 * Square's APIs (Connect v2). An error answer carries an `errors` array of Error objects
 * ({category, code, detail, field}); "If multiple errors are returned, the status code matches the
 * first one" (ERRORS_DOC). Over the rate limit, a 429 whose error has category RATE_LIMIT_ERROR and
 * code RATE_LIMITED: "Your application should monitor responses for 429 RATE_LIMITED errors and use
 * a retry mechanism with an exponential backoff schedule ... It is also a good practice to use a
 * randomized delay (jitter)" (CATEGORY_DOC; CODE_DOC lists RATE_LIMITED). Square documents no
 * limit, no budget header and no wait, so the throttle is a burst with no wait of its own: the
 * client backs off with jitter, as the docs ask. A Retry-After, if one ever comes, is still read.
 * https://developer.squareup.com/docs/build-basics/handling-errors
 * https://developer.squareup.com/reference/square/objects/ErrorCategory
 * https://developer.squareup.com/reference/square/enums/ErrorCode
 *
 * Every other error (AUTHENTICATION_ERROR, INVALID_REQUEST_ERROR, PAYMENT_METHOD_ERROR...) keeps
 * the generic reading of its status: a 401 or 403 is an access error, a 400 invalid, both final.
 * Nothing documents which requests share a limit, so no scope is known before an answer.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readExplicitWaits } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const ERRORS_DOC = "https://developer.squareup.com/docs/build-basics/handling-errors";
const CATEGORY_DOC = "https://developer.squareup.com/reference/square/objects/ErrorCategory";
const CODE_DOC = "https://developer.squareup.com/reference/square/enums/ErrorCode";

/** The first Error object's category and code: the one the status matches (ERRORS_DOC). */
function firstError(body: unknown): { category: string | undefined; code: string | undefined } {
  const first = field(body, "errors", 0);
  return { category: asString(field(first, "category"))?.trim().toUpperCase(), code: asString(field(first, "code"))?.trim().toUpperCase() };
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  const { category, code } = firstError(ctx.body);
  const rateLimited = code === "RATE_LIMITED" || category === "RATE_LIMIT_ERROR";
  if (!(ctx.status === 429 || (rateLimited && ctx.status >= 400))) return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
  const named = rateLimited ? ` ${category ?? "RATE_LIMIT_ERROR"} ${code ?? ""}`.trimEnd() : "";
  return throttledBy("burst", retryAfter, {
    scope: {},
    budget: null,
    reason: `Square ${ctx.status}${named}: the application's rate limit (undocumented) is reached; ${retryAfter ? describeWait(retryAfter) : "no wait given; back off exponentially with jitter, as Square asks"}.`,
  });
}

export const square: Dialect = {
  id: "square",
  label: "Square",
  hosts: ["connect.squareup.com", "connect.squareupsandbox.com"],
  docs: [ERRORS_DOC, CATEGORY_DOC, CODE_DOC],
  interpret,
};
