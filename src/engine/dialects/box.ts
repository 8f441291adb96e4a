/**
 * Box's Content API: api.box.com for most calls, upload.box.com for file uploads (a host, and so a
 * scope, of its own). Limits are per user and mostly per minute (LIMITS_DOC): "1000 API requests per
 * minute, per user" in general, "240 file upload requests per minute, per user", for the search
 * endpoint "6 searches per second, per user" plus "60 searches per minute, per user" and "12 searches
 * per second, per enterprise", and for Box Sign "Create and resend sign request: 100 requests per
 * minute, per user" (the Box Sign lines are on the live page, quoted by Box staff in SIGN_LIMITS).
 * Box may also impose "temporary rate-limits when load spikes" (quality of service) and, past an
 * enterprise's monthly licensed API calls, "additional selective rate-limiting" (LIMITS_DOC); neither
 * has a response of its own documented, so both read as the 429 below.
 * https://developer.box.com/guides/api-calls/permissions-and-errors/rate-limits/
 * https://support.box.com/hc/en-us/community/posts/34871813687059-API-limit-for-apps
 *
 * Over a limit: "429 Too Many Requests" with `retry-after: 100` and the JSON body's code
 * "rate_limit_exceeded"; "The retry-after header provides guidance on the number of seconds to wait
 * before the next API call can be retried. In general, we advise using an exponential back-off
 * strategy" (LIMITS_DOC; ERRORS_DOC: "retry their request after the amount of time specified by the
 * retry-after header"). Box's own SDK retries every 429 after Retry-After read as seconds, with
 * exponential backoff where none is sent (SDK_SOURCE, BoxRetryStrategy). So a 429 (or any error
 * answer whose code is rate_limit_exceeded) is a per-minute window, "burst": Retry-After is the
 * wait, else back off. No header shows a count, so there is no budget.
 * https://developer.box.com/guides/api-calls/permissions-and-errors/common-errors/
 * https://github.com/box/box-python-sdk/blob/main/box_sdk_gen/networking/retries.py
 *
 * The scope a 429 is counted in: a search's is the search endpoint's (its limits are far tighter
 * than the general one), a Box Sign create or resend its own 100 per minute, an upload the upload
 * limit; any other is the user's general limit, which spans the whole API and so holds back the
 * user's searches too. The body does not say which limit it was, so a search's 429 is taken for the
 * search limit, the likelier one.
 *
 * Two 409s are not final (ERRORS_DOC): name_temporarily_reserved, "The item name is reserved by
 * another processing item. Wait and then retry the request", and operation_blocked_temporary, "The
 * operation is blocked by another ongoing operation ... Try again at a later interval". Another
 * operation holds the item: contention, retried with backoff without holding back other calls, the
 * write refused and not done. Other answers as the generic dialect reads them: 401 and 403
 * (access_denied_insufficient_permissions, storage_limit_exceeded...) are final; 500 and 502
 * "Client should retry using exponential back-off strategy" and 503 "If a Retry-After header is
 * provided ... retry the request according to the header value" (ERRORS_DOC) are retried.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readRetryAfter } from "../signals";
import type { Interpretation, ScopeParts } from "../types";
import { describeWait, retryableBy, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://developer.box.com/guides/api-calls/permissions-and-errors/rate-limits/";
const SIGN_LIMITS = "https://support.box.com/hc/en-us/community/posts/34871813687059-API-limit-for-apps";
const ERRORS_DOC = "https://developer.box.com/guides/api-calls/permissions-and-errors/common-errors/";
const SDK_SOURCE = "https://github.com/box/box-python-sdk/blob/main/box_sdk_gen/networking/retries.py";

/** The 429's code in the client error body (LIMITS_DOC, ERRORS_DOC). */
const RATE_LIMIT_CODE = "rate_limit_exceeded";
/** 409 codes whose solution is to wait and retry (ERRORS_DOC). */
const RETRY_LATER_CODES: ReadonlySet<string> = new Set(["name_temporarily_reserved", "operation_blocked_temporary"]);

const UPLOAD_HOST = "upload.box.com";
/** GET /2.0/search (LIMITS_DOC's "search endpoint"). */
const SEARCH_PATH = /^\/(?:2\.0\/)?search\/?$/;
/** POST /2.0/sign_requests and POST /2.0/sign_requests/{id}/resend: Box Sign's create and resend (SIGN_LIMITS). */
const SIGN_WRITE_PATH = /^\/(?:2\.0\/)?sign_requests(?:\/[^/]+\/resend)?\/?$/;

type Endpoint = "upload" | "search" | "sign-requests" | "api";

/** The documented limit a request counts against, from its host, method and path. */
function endpointOf(host: string, method: string, path: string): Endpoint {
  if (host === UPLOAD_HOST) return "upload";
  if (SEARCH_PATH.test(path)) return "search";
  if (method === "POST" && SIGN_WRITE_PATH.test(path)) return "sign-requests";
  return "api";
}

const LIMIT_TEXT: Record<Endpoint, string> = {
  upload: "the user's upload limit (240 file uploads per minute)",
  search: "the search endpoint's limit (6 per second and 60 per minute per user, 12 per second per enterprise)",
  "sign-requests": "Box Sign's create and resend limit (100 per minute per user)",
  api: "the user's general limit (about 1000 API requests per minute)",
};

function rateLimited(ctx: SignalContext, code: string | undefined): Interpretation {
  const wait = readRetryAfter(ctx);
  const endpoint = endpointOf(ctx.host, ctx.method, ctx.path);
  // The general limit is the user's across the API: a scope naming no endpoint holds every part back.
  const scope: ScopeParts = endpoint === "api" ? { limit: "user" } : { endpoint };
  return throttledBy("burst", wait, {
    scope,
    budget: null,
    reason: `Box ${ctx.status}${code ? ` ${code}` : ""}: ${LIMIT_TEXT[endpoint]} is spent; ${describeWait(wait)}.`,
  });
}

function interpret(ctx: SignalContext): Interpretation {
  const code = asString(field(ctx.body, "code"))?.trim().toLowerCase();
  if (ctx.status === 429 || (ctx.status >= 400 && code === RATE_LIMIT_CODE)) return rateLimited(ctx, code);
  const retryAfter = readRetryAfter(ctx);
  if (ctx.status === 409 && code !== undefined && RETRY_LATER_CODES.has(code)) {
    return retryableBy("contention", retryAfter, {
      writeNotProcessed: true,
      scope: { lock: "item" },
      budget: null,
      reason: `Box 409 ${code}: another operation on the same item or name is still running; the request was refused, not done: retry it later; ${describeWait(retryAfter)}.`,
    });
  }
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
}

export const box: Dialect = {
  id: "box",
  label: "Box",
  hosts: ["api.box.com", UPLOAD_HOST],
  docs: [LIMITS_DOC, SIGN_LIMITS, ERRORS_DOC, SDK_SOURCE],
  interpret,
  requestScope: ({ host, method, path }) => ({ endpoint: endpointOf(host, method, path) }),
};
