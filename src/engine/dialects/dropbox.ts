/**
 * Dropbox API v2 (api.dropboxapi.com for RPC calls, content.dropboxapi.com for uploads and
 * downloads, notify.dropboxapi.com for longpolls). A 429 "indicates a transient error, which can
 * potentially be resolved by retrying the request", for one of two reasons its JSON body names in
 * error.reason[".tag"]: too_many_requests, "an underlying rate limit being applied", or
 * too_many_write_operations, "a namespace lock contention occurring"; "a plain text response is
 * equivalent to too_many_requests" (INGRESS_DOC). Rate limits "are applied to the OAuth access
 * token used to make the request" (per linked user, per team, or per team member), and "Rate
 * limited responses always include a Retry-After header that provides the limit in seconds that
 * your app would need to wait"; "Rate limited requests themselves also count towards rate limits"
 * (PERFORMANCE_DOC). The JSON body is a RateLimitError whose retry_after is "The number of seconds
 * that the app should wait before making another request" (AUTH_SPEC); Dropbox's own SDK reads it
 * from the body when the answer is JSON, from Retry-After otherwise (SDK_SOURCE,
 * raise_dropbox_error_for_resp). So both are read, the longer winning: each is a floor.
 * https://www.dropbox.com/developers/reference/data-ingress-guide
 * https://developers.dropbox.com/dbx-performance-guide
 * https://github.com/dropbox/dropbox-api-spec/blob/main/auth.stone
 * https://github.com/dropbox/dropbox-sdk-python/blob/main/dropbox/dropbox_client.py
 *
 * too_many_write_operations is no rate: "There are currently too many write operations happening in
 * the user's Dropbox" (AUTH_SPEC), other writes to the same namespace holding its lock. It is read
 * as contention (retried after its wait, holding back no other call of the token), and the write
 * was refused, not done: the endpoints' own errors say "There are too many write operations in
 * user's Dropbox. Please retry this request." (FILES_SPEC, WriteError, DeleteError and others; a
 * 409 whose error_summary names it is the same contention). Other 409s are the endpoints' own
 * errors and final, as are 400 and 401 (expired_access_token too: a new token is needed, not a
 * wait). 5xx and 503 with Retry-After are read as the generic dialect reads them (the SDK retries
 * 5xx with backoff).
 * https://github.com/dropbox/dropbox-api-spec/blob/main/files.stone
 *
 * Some Business plans limit "data transport" calls per month: over it, "a 403 status code with the
 * invalid_account_type/feature error" and a user_message saying the team "has used all of its data
 * transport API calls for the month", reset "on the 1st day of every month" (TRANSPORT_DOC, which
 * names no time zone, so no wait is given). A quota, not retried in this run.
 * https://www.dropbox.com/developers/reference/data-transport-limit
 *
 * Not found in the stored docs: the HTTP reference's error section
 * (https://www.dropbox.com/developers/documentation/http/documentation); nothing here rests on it.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readExplicitWaits, type Wait } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, retryableBy, secondsWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const INGRESS_DOC = "https://www.dropbox.com/developers/reference/data-ingress-guide";
const PERFORMANCE_DOC = "https://developers.dropbox.com/dbx-performance-guide";
const TRANSPORT_DOC = "https://www.dropbox.com/developers/reference/data-transport-limit";
const AUTH_SPEC = "https://github.com/dropbox/dropbox-api-spec/blob/main/auth.stone";
const FILES_SPEC = "https://github.com/dropbox/dropbox-api-spec/blob/main/files.stone";
const SDK_SOURCE = "https://github.com/dropbox/dropbox-sdk-python/blob/main/dropbox/dropbox_client.py";

/** RateLimitReason and the endpoints' error tag for namespace lock contention (AUTH_SPEC, FILES_SPEC). */
const LOCK_CONTENTION = "too_many_write_operations";
const BODY_WAIT = "body:error.retry_after";

/** The segments of error_summary ("path/too_many_write_operations/.."), or none. */
function summarySegments(ctx: SignalContext): string[] {
  const summary = asString(field(ctx.body, "error_summary"));
  return summary === undefined ? [] : summary.split("/").map((s) => s.trim());
}

/** A 429's RateLimitReason: error.reason[".tag"], else error_summary's first segment; plain text is too_many_requests (INGRESS_DOC). */
function rateLimitReason(ctx: SignalContext): string {
  const tag = asString(field(ctx.body, "error", "reason", ".tag"));
  if (tag) return tag.trim();
  const first = summarySegments(ctx)[0];
  return first ? first : "too_many_requests";
}

/** A write refused because other writes hold the namespace's lock: retried, no rate in question. */
function lockContention(ctx: SignalContext, wait: Wait | null): Interpretation {
  return retryableBy("contention", wait, {
    writeNotProcessed: true,
    scope: { lock: "namespace" },
    budget: null,
    reason: `Dropbox ${ctx.status} ${LOCK_CONTENTION}: namespace lock contention (other writes to the same Dropbox or shared folder), not the token's rate; the write was not done, retry it; ${describeWait(wait)}.`,
  });
}

function rateLimited(ctx: SignalContext): Interpretation {
  const wait = longestWait(readExplicitWaits(ctx), secondsWait(ctx, field(ctx.body, "error", "retry_after"), BODY_WAIT));
  const reason = rateLimitReason(ctx);
  if (reason === LOCK_CONTENTION) return lockContention(ctx, wait);
  return throttledBy("burst", wait, {
    scope: {},
    reason: `Dropbox 429 ${reason}: the access token's rate limit is spent (rate-limited calls count too); ${describeWait(wait)}.`,
  });
}

/** The monthly data transport limit: 403 invalid_account_type/feature whose user_message says so (TRANSPORT_DOC). */
function dataTransportSpent(ctx: SignalContext): boolean {
  if (ctx.status !== 403) return false;
  const [tag, detail] = summarySegments(ctx);
  if (tag !== "invalid_account_type" || detail !== "feature") return false;
  return /data transport/i.test(asString(field(ctx.body, "user_message", "text")) ?? "");
}

function interpret(ctx: SignalContext): Interpretation {
  if (ctx.status === 429) return rateLimited(ctx);
  const retryAfter = readExplicitWaits(ctx);
  const errorTag = asString(field(ctx.body, "error", ".tag"));
  if (ctx.status === 409 && (errorTag === LOCK_CONTENTION || summarySegments(ctx).includes(LOCK_CONTENTION))) {
    return lockContention(ctx, retryAfter);
  }
  if (dataTransportSpent(ctx)) {
    return throttledBy("quota", null, {
      scope: { limit: "data_transport" },
      retryable: false,
      reason: "Dropbox 403 invalid_account_type/feature: the team's data transport calls for the month are spent; the limit resets on the 1st of the month, so not retried in this run.",
    });
  }
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
}

export const dropbox: Dialect = {
  id: "dropbox",
  label: "Dropbox",
  hosts: ["api.dropboxapi.com", "content.dropboxapi.com", "notify.dropboxapi.com"],
  docs: [INGRESS_DOC, PERFORMANCE_DOC, TRANSPORT_DOC, AUTH_SPEC, FILES_SPEC, SDK_SOURCE],
  interpret,
};
