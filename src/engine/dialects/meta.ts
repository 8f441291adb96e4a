/**
 * Meta's Graph API (Facebook Pages, the Marketing API, Instagram, WhatsApp Cloud). A throttle is
 * an error object in the body, { error: { message, type, code, error_subcode, is_transient } },
 * answered 400 (sometimes 403 or 429): the status alone reads it as a request that can never
 * succeed. The code names the limit (RATE_DOC, "Error Codes"; MARKETING_DOC):
 * - 4 the app's, 17 the user's, 32 a Page's, 613 a custom limit (also an ad account's, subcode
 *   1487742): Platform Rate Limits, counted over a rolling hour; no wait is given.
 * - 80000 to 80014: a Business Use Case limit (ads_insights, pages, instagram, custom_audience,
 *   ads_management, leadgen, messenger, whatsapp, catalog...), whose X-Business-Use-Case-Usage
 *   header gives, per business and type, estimated_time_to_regain_access in minutes.
 * - WhatsApp Cloud API: 130429 (throughput), 131056 (messages to one user), 80007 (the business
 *   account's limit) (WHATSAPP_DOC).
 * "API requests made by a throttled user or app will fail" (RATE_DOC): not executed, so a write so
 * answered may be sent again. The usage headers (X-App-Usage, X-Business-Use-Case-Usage,
 * X-Ad-Account-Usage) are percentages of limits that count calls, CPU time and total time at
 * once, so they are given in the reason and not as a count of requests left. Code 10, 190 and
 * 200 to 299 are permission and token errors, 368 a policy block: none is a limit.
 * https://developers.facebook.com/docs/graph-api/overview/rate-limiting/
 * https://developers.facebook.com/docs/marketing-api/overview/rate-limiting
 * https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 * https://developers.facebook.com/docs/graph-api/guides/error-handling
 */
import type { SignalContext } from "../context";
import { asArray, asNumber, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readRetryAfter, type Wait } from "../signals";
import type { Interpretation, ScopeParts } from "../types";
import { describeWait, longestWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://developers.facebook.com/docs/graph-api/overview/rate-limiting/";
const MARKETING_DOC = "https://developers.facebook.com/docs/marketing-api/overview/rate-limiting";
const WHATSAPP_DOC = "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes";
const ERRORS_DOC = "https://developers.facebook.com/docs/graph-api/guides/error-handling";

/** Platform Rate Limits by code (RATE_DOC). */
const PLATFORM_LIMITS: Readonly<Record<number, string>> = { 4: "app", 17: "user", 32: "page", 613: "custom" };
/** WhatsApp Cloud API limits by code (WHATSAPP_DOC). */
const WHATSAPP_LIMITS: Readonly<Record<number, string>> = { 130429: "throughput", 131056: "pair", 80007: "whatsapp-business-account" };
/** A usage header is a short JSON object; anything longer is not one. */
const MAX_USAGE_HEADER_CHARS = 8192;

interface GraphError {
  code: number;
  subcode: number | undefined;
  message: string;
  transient: boolean;
}

function readError(ctx: SignalContext): GraphError | null {
  const error = field(ctx.body, "error");
  const code = asNumber(field(error, "code"));
  if (code === undefined) return null;
  return { code, subcode: asNumber(field(error, "error_subcode")), message: asString(field(error, "message")) ?? "", transient: field(error, "is_transient") === true };
}

/** A usage header's JSON, or undefined (recorded as ignored) when it is not an object. */
function usageHeader(ctx: SignalContext, name: string): unknown {
  const raw = ctx.header(name);
  if (raw === undefined) return undefined;
  try {
    const parsed: unknown = raw.length <= MAX_USAGE_HEADER_CHARS ? JSON.parse(raw) : undefined;
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
  } catch {
    // Not JSON: recorded below.
  }
  ctx.ignore(name, raw, "not a JSON object");
  return undefined;
}

/** The Business Use Case entry that waits longest: its type and wait (estimated_time_to_regain_access, minutes). */
function businessUseCaseWait(ctx: SignalContext): { type: string | undefined; wait: Wait | null } {
  const usage = usageHeader(ctx, "x-business-use-case-usage");
  let best: { type: string | undefined; wait: Wait | null } = { type: undefined, wait: null };
  if (usage === undefined) return best;
  for (const entries of Object.values(usage as Record<string, unknown>)) {
    for (const entry of asArray(entries)) {
      const minutes = asNumber(field(entry, "estimated_time_to_regain_access"));
      const type = asString(field(entry, "type"));
      if (minutes === undefined || minutes < 0) continue;
      const wait = minutes > 0 ? { waitMs: minutes * 60_000, source: "x-business-use-case-usage" } : null;
      if (best.type === undefined || (wait?.waitMs ?? 0) > (best.wait?.waitMs ?? 0)) best = { type, wait };
    }
  }
  return best;
}

/** X-Ad-Account-Usage's reset_time_duration (seconds), where the ad account's limit is the one spent. */
function adAccountWait(ctx: SignalContext): Wait | null {
  const seconds = asNumber(field(usageHeader(ctx, "x-ad-account-usage"), "reset_time_duration"));
  return seconds !== undefined && seconds > 0 ? { waitMs: seconds * 1000, source: "x-ad-account-usage" } : null;
}

/** The highest percentage a usage header shows (call count, CPU time, total time), for the reason. */
function usageNote(ctx: SignalContext): string {
  const app = usageHeader(ctx, "x-app-usage") ?? usageHeader(ctx, "x-page-usage");
  if (app === undefined) return "";
  const shares = ["call_count", "total_cputime", "total_time"].map((k) => asNumber(field(app, k))).filter((v): v is number => v !== undefined);
  return shares.length > 0 ? ` (usage at ${Math.max(...shares)} % of the hour's allowance)` : "";
}

function throttle(ctx: SignalContext, error: GraphError, what: string, scope: ScopeParts, wait: Wait | null): Interpretation {
  return throttledBy("burst", wait, {
    scope,
    writeNotProcessed: true,
    reason: `Meta Graph API error ${error.code}${error.subcode === undefined ? "" : `/${error.subcode}`}: ${what}${usageNote(ctx)}; ${describeWait(wait)}.`,
  });
}

function notALimit(error: GraphError, limitType: "permission" | "none", what: string): Interpretation {
  return { throttled: false, retryable: false, limitType, minWaitMs: null, waitSource: null, reason: `Meta Graph API error ${error.code}: ${what}; not a rate limit, not retried.` };
}

function interpretMeta(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const error = readError(ctx);
  if (error === null) return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
  const platform = PLATFORM_LIMITS[error.code];
  if (platform !== undefined) {
    // An ad account's limit (613/1487742, 17/2446079, MARKETING_DOC) tells its reset; the others only the usage.
    const adAccount = error.subcode === 1487742 || error.subcode === 2446079;
    const wait = longestWait(retryAfter, adAccount ? adAccountWait(ctx) : null, businessUseCaseWait(ctx).wait);
    return throttle(ctx, error, `the ${adAccount ? "ad account's" : `${platform}'s`} rate limit (a rolling hour)`, { limit: adAccount ? "ad-account" : platform }, wait);
  }
  if (error.code >= 80000 && error.code <= 80014 && error.code !== 80007) {
    const buc = businessUseCaseWait(ctx);
    return throttle(ctx, error, `a Business Use Case rate limit${buc.type ? ` (${buc.type})` : ""}`, { limit: buc.type ?? `buc-${error.code}` }, longestWait(retryAfter, buc.wait));
  }
  const whatsapp = WHATSAPP_LIMITS[error.code];
  if (whatsapp !== undefined) return throttle(ctx, error, `the WhatsApp Cloud API's ${whatsapp} limit`, { limit: whatsapp }, retryAfter);
  if (error.code === 190) return notALimit(error, "none", "the access token is invalid or expired");
  if (error.code === 10 || (error.code >= 200 && error.code <= 299)) return notALimit(error, "permission", "a permission the token lacks");
  if (error.code === 368) return notALimit(error, "permission", "the action is blocked for a policy, not for a rate");
  // is_transient marks a temporary failure worth retrying (ERRORS_DOC), e.g. code 1 or 2.
  if (error.transient) {
    return { throttled: false, retryable: true, limitType: "server", minWaitMs: retryAfter?.waitMs ?? null, waitSource: retryAfter?.source ?? null, reason: `Meta Graph API error ${error.code} marked is_transient: a temporary failure; retry with backoff.` };
  }
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
}

export const meta: Dialect = {
  id: "meta",
  label: "Meta Graph API (Facebook, Instagram, WhatsApp)",
  hosts: ["graph.facebook.com", "graph-video.facebook.com", "graph.instagram.com"],
  docs: [RATE_DOC, MARKETING_DOC, WHATSAPP_DOC, ERRORS_DOC],
  interpret: interpretMeta,
};
