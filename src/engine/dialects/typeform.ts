/**
 * Typeform's Create and Responses APIs (api.typeform.com; accounts in an EU data center answer at
 * api.eu.typeform.com or api.typeform.eu, HOSTS_DOC, SDK_DOC: the same API, so the same rules).
 * https://www.typeform.com/developers/get-started/
 * https://www.typeform.com/developers/get-started/mcp/
 * https://github.com/Typeform/js-api-client
 *
 * One limit: the Create and Responses APIs take 2 requests per second per Typeform account; the
 * Webhooks API and the Embed SDK are not limited; over it, 429 (LIMITS_DOC, "Rate limits"; the stored
 * copy of the page itself could not be read here, its text is as the integrations citing it quote it).
 * No rate-limit header is documented: no count, no reset. Retry-After on a 429 is known only from
 * public client code: Stitch's tap-typeform reports "Please retry after {Retry-After} seconds" for a
 * 429 and backs off on 429, 500 and 503 (TAP_SOURCE).
 * https://github.com/singer-io/tap-typeform/blob/master/tap_typeform/client.py
 *
 * So a 429 is the account's per-second limit (burst): it waits its Retry-After where one is sent,
 * and at least the second the limit is counted in (doc:fixed-1s), since a retry within it would be
 * refused again. The limit is the account's, every token of it included, so no part of the API is
 * named as its scope. 401 and 403 are access errors and stay final; 5xx are transient failures
 * retried with backoff, as tap-typeform does (interpretStatus).
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { readRetryAfter } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, docWait, longestWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://www.typeform.com/developers/get-started/";
const HOSTS_DOC = "https://www.typeform.com/developers/get-started/mcp/";
const SDK_DOC = "https://github.com/Typeform/js-api-client";
const TAP_SOURCE = "https://github.com/singer-io/tap-typeform/blob/master/tap_typeform/client.py";

/** "2 requests per second per Typeform account" (LIMITS_DOC): the window a refused request waits out. */
const WINDOW_SECONDS = 1;

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
  const wait = longestWait(retryAfter, docWait(WINDOW_SECONDS));
  return throttledBy("burst", wait, {
    scope: {},
    budget: null,
    reason: `Typeform 429: the account's 2 requests per second (Create and Responses APIs) are spent; ${describeWait(wait)}.`,
  });
}

export const typeform: Dialect = {
  id: "typeform",
  label: "Typeform",
  hosts: ["api.typeform.com", "api.eu.typeform.com", "api.typeform.eu"],
  docs: [LIMITS_DOC, HOSTS_DOC, SDK_DOC, TAP_SOURCE],
  interpret,
};
