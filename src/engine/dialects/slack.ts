/**
 * Slack Web API.
 * https://docs.slack.dev/apis/web-api/rate-limits
 * https://docs.slack.dev/reference/methods/chat.postMessage (error rate_limited)
 *
 * Limits apply per method, per workspace, per app; a 429 carries Retry-After (integer seconds).
 * Method errors arrive as HTTP 200 with ok:false, so the body is read too: "ratelimited" (and
 * chat.postMessage's "rate_limited") is a throttle; any other ok:false is an ordinary error.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readRetryAfter } from "../signals";
import type { Interpretation, ScopeParts } from "../types";
import { describeWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://docs.slack.dev/apis/web-api/rate-limits";

/** Errors about the token or its grants (https://docs.slack.dev/reference/methods, "Errors"). */
const PERMISSION_ERRORS = new Set([
  "not_authed",
  "invalid_auth",
  "account_inactive",
  "token_revoked",
  "token_expired",
  "no_permission",
  "missing_scope",
  "not_allowed_token_type",
  "ekm_access_denied",
  "access_denied",
  "org_login_required",
  "team_access_not_granted",
  "two_factor_setup_required",
  "not_in_channel",
  "restricted_action",
]);
/** Errors Slack itself documents as transient. */
const SERVER_ERRORS = new Set(["internal_error", "fatal_error", "service_unavailable", "request_timeout"]);

/** /api/chat.postMessage -> chat.postMessage: Slack's limit tiers are per method (RATE_DOC). */
function slackMethodOf(path: string): string | undefined {
  return /\/api\/([A-Za-z0-9_.]+)/.exec(path)?.[1];
}

function interpretSlack(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const method = slackMethodOf(ctx.path);
  const scope: ScopeParts = method ? { method } : {};
  const ok = field(ctx.body, "ok");
  const error = asString(field(ctx.body, "error"));
  const base = { scope, budget: null };
  const bodyThrottle = ok === false && (error === "ratelimited" || error === "rate_limited");

  if (ctx.status === 429 || bodyThrottle) {
    return throttledBy("burst", retryAfter, {
      ...base,
      reason: `Slack rate limit for ${method ?? "this method"} (${ctx.status}${error ? ` ${error}` : ""}); ${describeWait(retryAfter)}.`,
    });
  }
  if (ok === false && ctx.status >= 200 && ctx.status < 300) {
    const what = error ?? "unknown_error";
    if (PERMISSION_ERRORS.has(what)) {
      return { ...base, throttled: false, retryable: false, limitType: "permission", minWaitMs: null, waitSource: null, reason: `Slack ${method ?? "method"} error ${what}: an access error, not a rate limit.` };
    }
    if (SERVER_ERRORS.has(what)) {
      return { ...base, throttled: false, retryable: true, limitType: "server", minWaitMs: null, waitSource: null, reason: `Slack ${method ?? "method"} error ${what}: a transient server failure; retry with backoff if safe.` };
    }
    return { ...base, throttled: false, retryable: false, limitType: "validation", minWaitMs: null, waitSource: null, reason: `Slack ${method ?? "method"} error ${what} (HTTP ${ctx.status}, ok:false): not a rate limit; retrying will not help.` };
  }
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null }, scope);
}

export const slack: Dialect = {
  id: "slack",
  readsSuccesses: true,
  label: "Slack Web API",
  hosts: ["slack.com", "api.slack.com", "hooks.slack.com"],
  docs: [RATE_DOC],
  interpret: interpretSlack,
  requestScope: ({ path }): ScopeParts => {
    const method = slackMethodOf(path);
    return method ? { method } : {};
  },
};
