/**
 * Okta's management and authentication APIs. Limits are per endpoint bucket, per minute ("We
 * enforce limits at the individual API endpoint level as requests per minute", MGMT_DOC; the
 * end-user endpoints likewise, ENDUSER_DOC). Every answer shows the bucket of its request in
 * X-Rate-Limit-Limit, X-Rate-Limit-Remaining and X-Rate-Limit-Reset, "the time at which the rate
 * limit resets, specified in UTC epoch time (in seconds)"; over it, a 429 with those headers
 * (remaining 0) and the body's errorCode E0000047, "API call exceeded rate limit due to too many
 * requests" (RATE_DOC, ERRORS_DOC). Okta's own SDK waits from the answer's Date to that reset on
 * any 429 (okta-sdk-nodejs src/default-request-executor.js, getRetryDelayMs, SDK_SOURCE). Two more
 * 429 codes name their own wait: E0000109 "An SMS message was recently sent. Please wait 30 seconds
 * before trying again." and E0000113, the same for a phone call (ERRORS_DOC): 30 s is their floor.
 * https://developer.okta.com/docs/reference/rl-best-practices/
 * https://developer.okta.com/docs/reference/rl-global-mgmt/
 * https://developer.okta.com/docs/reference/rl-global-enduser/
 * https://developer.okta.com/docs/reference/rl-additional-limits/#concurrent-rate-limits
 * https://developer.okta.com/docs/reference/error-codes/
 * https://github.com/okta/okta-sdk-nodejs/blob/master/src/default-request-executor.js
 *
 * Okta also limits the org's requests in flight at once (CONCURRENCY_DOC), whatever the endpoint.
 * Over that limit, "the headers report the concurrent values": "The first two header values are
 * always 0 for concurrent rate limit errors" and the reset is "an estimated time interval when the
 * concurrent rate limit may be resolved" (RATE_DOC). So a 429 whose X-Rate-Limit-Limit is 0 is the
 * concurrency limit, the org's (no endpoint in its scope), waited to the estimate as the SDK does.
 *
 * A request's scope is its documented bucket, known from its method and path: /api/v1/users and
 * /api/v1/users/{id} are two buckets with limits of their own, and so are GETs and writes of one
 * user (MGMT_DOC), so the ids are taken out of the path the way the tables write them.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readExplicitWaits, readLimitFamily } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://developer.okta.com/docs/reference/rl-best-practices/";
const MGMT_DOC = "https://developer.okta.com/docs/reference/rl-global-mgmt/";
const ENDUSER_DOC = "https://developer.okta.com/docs/reference/rl-global-enduser/";
const CONCURRENCY_DOC = "https://developer.okta.com/docs/reference/rl-additional-limits/#concurrent-rate-limits";
const ERRORS_DOC = "https://developer.okta.com/docs/reference/error-codes/";
const SDK_SOURCE = "https://github.com/okta/okta-sdk-nodejs/blob/master/src/default-request-executor.js";

const NAMES = { limit: "x-rate-limit-limit", remaining: "x-rate-limit-remaining", reset: "x-rate-limit-reset" };
/** "API call exceeded rate limit due to too many requests." (ERRORS_DOC, HTTP 429). */
const RATE_LIMIT_CODE = "E0000047";
/** SMS and call challenges: "Please wait 30 seconds before trying again." (ERRORS_DOC, HTTP 429). */
const CHALLENGE_CODES: ReadonlySet<string> = new Set(["E0000109", "E0000113"]);

/**
 * The documented buckets, first match wins (MGMT_DOC, ENDUSER_DOC). Apps: "/api/v1/apps and all
 * other endpoints of the form /api/v1/apps/*" except the app itself; groups: "/api/v1/groups except
 * /api/v1/groups/{id}"; users: "Only GET or POST to /api/v1/users", "Only GET to
 * /api/v1/users/{idOrLogin}", "Only POST, PUT or DELETE to /api/v1/users/{id}"; the rest of
 * /api/v1 is "Most other API actions", and of /oauth2 "All other OAuth2 requests".
 */
const BUCKETS: readonly (readonly [RegExp, string])[] = [
  [/^\/api\/v1\/apps\/[^/]+$/, "/api/v1/apps/{id}"],
  [/^\/api\/v1\/apps(?:\/|$)/, "/api/v1/apps"],
  [/^\/api\/v1\/groups\/[^/]+$/, "/api/v1/groups/{id}"],
  [/^\/api\/v1\/groups(?:\/|$)/, "/api/v1/groups"],
  [/^\/api\/v1\/users$/, "/api/v1/users"],
  [/^\/api\/v1\/(logs|events|sessions|certificateAuthorities|devices)(?:\/|$)/, "/api/v1/$1"],
  [/^\/api\/v1\/authn$/, "/api/v1/authn"],
  [/^\/api\/v1\/authn\/factors\/[^/]+\/verify$/, "/api/v1/authn/factors/{factorIdOrFactorType}/verify"],
  [/^\/api\/v1(?:\/|$)/, "/api/v1"],
  [/^\/oauth2\/v1\/clients(?:\/|$)/, "/oauth2/v1/clients"],
  [/^\/oauth2\/v1(?:\/|$)/, "/oauth2/v1"],
  [/^\/oauth2\/[^/]+\/v1(?:\/|$)/, "/oauth2/{authorizationServerId}/v1"],
  [/^\/oauth2(?:\/|$)/, "/oauth2"],
];

const ONE_USER = /^\/api\/v1\/users\/[^/]+$/;

/** The bucket a request counts against: its documented endpoint, or its path's first segment where no table names it. */
export function oktaEndpointOf(method: string, rawPath: string): string {
  const path = rawPath.split("?")[0]!.replace(/\/+$/, "") || "/";
  if (ONE_USER.test(path)) return method === "GET" || method === "HEAD" ? "/api/v1/users/{idOrLogin}" : "/api/v1/users/{id}";
  for (const [pattern, name] of BUCKETS) {
    const match = pattern.exec(path);
    if (match) return name.replace("$1", match[1] ?? "");
  }
  return `/${path.split("/")[1] ?? ""}`;
}

function endpointScope(method: string, path: string): ScopeParts {
  return { endpoint: oktaEndpointOf(method, path) };
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readExplicitWaits(ctx);
  const family = readLimitFamily(ctx, NAMES, "epoch-seconds");
  const code = asString(field(ctx.body, "errorCode"))?.trim().toUpperCase();
  if (ctx.status !== 429 && code !== RATE_LIMIT_CODE) {
    // An answer that shows no count names no scope, as a plain success does (classify.ts quietSuccess).
    return interpretStatus(ctx, { retryAfter, budget: family.budget, reset: family.reset }, family.budget === null ? undefined : endpointScope(ctx.method, ctx.path));
  }
  const challenge = code !== undefined && CHALLENGE_CODES.has(code);
  const wait = longestWait(retryAfter, family.reset, challenge ? docWait(30) : null);
  const codeText = code ? ` ${code}` : "";
  if (family.budget?.limit === 0) {
    // Limit and remaining 0: the concurrent values (RATE_DOC). A place frees when a request of the
    // org's finishes; the reset is only Okta's estimate of when, so no window is shown as spent.
    const places: Budget = { remaining: 0, limit: null, resetAt: null, source: NAMES.remaining, concurrent: true };
    return throttledBy("concurrency", wait, {
      scope: {},
      budget: places,
      reason: `Okta ${ctx.status}${codeText} over the org's concurrent rate limit (X-Rate-Limit-Limit 0: requests in flight, any endpoint); ${describeWait(wait)}${wait?.source === NAMES.reset ? ", Okta's estimate of when a place frees" : ""}.`,
    });
  }
  const what = challenge ? "an SMS or call challenge was sent to this phone in the last 30 s" : "the endpoint's per-minute rate limit is spent";
  return throttledBy("burst", wait, {
    scope: endpointScope(ctx.method, ctx.path),
    budget: family.budget,
    reason: `Okta ${ctx.status}${codeText}: ${what}; ${describeWait(wait)}.`,
  });
}

export const okta: Dialect = {
  id: "okta",
  label: "Okta",
  hosts: [".okta.com", ".oktapreview.com", ".okta-emea.com"],
  docs: [RATE_DOC, MGMT_DOC, ENDUSER_DOC, CONCURRENCY_DOC, ERRORS_DOC, SDK_SOURCE],
  interpret,
  requestScope: ({ method, path }) => endpointScope(method, path),
};
