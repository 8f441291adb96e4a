/**
 * How the lab's server says "not yet", one dialect per provider family, following
 * the providers' documentation (the doc URLs cited by test/fixtures/*.json). The limiter
 * decides; the dialect only renders its admission as status, headers and body.
 */
import type { Admission } from "./limiters";
import type { DialectId, RetryAfterForm } from "./types";

export interface LabResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface RenderContext {
  nowMs: number;
  retryAfter: RetryAfterForm;
  /** Whether successes carry budget headers. */
  budgetHeaders: boolean;
  /** GraphQL cost of this request, points. */
  cost: number;
  /** The 429's body text (generic) or problem detail (IETF) in place of the dialect's, when the scenario sets one. */
  throttleBody?: string;
  jobId: string;
}

/** IMF-fixdate, as RFC 9110 §5.6.7 wants senders to write it. */
export function httpDate(epochMs: number): string {
  return new Date(epochMs).toUTCString();
}

const ceilSeconds = (ms: number): number => Math.max(0, Math.ceil(ms / 1000));

/** The wait a throttled answer should announce: the limiter's, else (unknown, e.g. concurrency) none. */
function waitOf(a: Admission): number | null {
  return a.waitMs;
}

function retryAfterHeader(form: RetryAfterForm, waitMs: number | null, nowMs: number): Record<string, string> {
  if (waitMs === null || form === "absent") return {};
  if (form === "http-date") {
    // An HTTP-date has whole seconds: round the instant up so the wait is never understated.
    return { "retry-after": httpDate(Math.ceil((nowMs + waitMs) / 1000) * 1000) };
  }
  return { "retry-after": String(ceilSeconds(waitMs)) };
}

const dateHeader = (nowMs: number): Record<string, string> => ({ date: httpDate(nowMs) });

function xRateLimit(a: Admission, nowMs: number): Record<string, string> {
  return {
    "x-ratelimit-limit": String(a.limit),
    "x-ratelimit-remaining": String(a.remaining),
    "x-ratelimit-reset": String(Math.ceil((nowMs + a.resetMs) / 1000)),
  };
}

function ietfFields(a: Admission): Record<string, string> {
  const windowSeconds = Math.max(1, Math.round(a.windowMs / 1000));
  const unit = a.unit === "concurrent" ? ";qu=\"concurrent-requests\"" : "";
  return {
    "ratelimit-policy": `"default";q=${a.limit};w=${windowSeconds}${unit}`,
    ratelimit: `"default";r=${a.remaining};t=${ceilSeconds(a.resetMs)}`,
  };
}

function shopifyCost(a: Admission, cost: number, actual: number | null): Record<string, unknown> {
  const restoreRatePerSecond = (a.limit * 1000) / a.windowMs;
  return {
    cost: {
      requestedQueryCost: cost,
      actualQueryCost: actual,
      throttleStatus: { maximumAvailable: a.limit, currentlyAvailable: a.remaining, restoreRate: restoreRatePerSecond },
    },
  };
}

function hubspotHeaders(a: Admission): Record<string, string> {
  if (a.quota) return { "x-hubspot-ratelimit-daily": String(a.limit), "x-hubspot-ratelimit-daily-remaining": String(a.remaining) };
  return {
    "x-hubspot-ratelimit-max": String(a.limit),
    "x-hubspot-ratelimit-remaining": String(a.remaining),
    "x-hubspot-ratelimit-interval-milliseconds": String(a.windowMs),
  };
}

const marketoRequestId = (jobId: string): string => `${jobId}#lab`;

/**
 * Marketo answers its limits with 200 and success false (https://experienceleague.adobe.com/en/docs/marketo-developer/marketo/rest/error-codes):
 * 606 names the rolling window's limit and length, 615 the calls in flight, 607 the daily quota. No
 * count is shown anywhere, and no wait.
 */
function marketoFailure(a: Admission, jobId: string): Record<string, unknown> {
  const error = a.quota
    ? { code: "607", message: "Daily quota reached" }
    : a.unit === "concurrent"
      ? { code: "615", message: "Concurrent access limit reached" }
      : { code: "606", message: `Max rate limit '${a.limit}' exceeded with in '${Math.max(1, Math.round(a.windowMs / 1000))}' secs` };
  return { requestId: marketoRequestId(jobId), success: false, errors: [error] };
}

/** The answer to a request the limiter rejected. */
export function renderThrottled(dialect: DialectId, a: Admission, ctx: RenderContext): LabResponse {
  const waitMs = waitOf(a);
  const base = dateHeader(ctx.nowMs);
  switch (dialect) {
    case "generic":
      return { status: 429, headers: { ...base, ...retryAfterHeader(ctx.retryAfter, waitMs, ctx.nowMs), ...(ctx.budgetHeaders ? xRateLimit(a, ctx.nowMs) : {}) }, body: ctx.throttleBody ?? "Too Many Requests" };
    case "ietf":
      return {
        status: 429,
        headers: { ...base, ...retryAfterHeader(ctx.retryAfter, waitMs, ctx.nowMs), ...ietfFields(a), "content-type": "application/problem+json" },
        body: { type: "https://iana.org/assignments/http-problem-types#quota-exceeded", title: "Request cannot be satisfied as assigned quota has been exceeded", status: 429, "violated-policies": ["default"], ...(ctx.throttleBody === undefined ? {} : { detail: ctx.throttleBody }) },
      };
    case "github":
      // Primary limit: 403, remaining 0, reset in epoch seconds; the body names the limit.
      return {
        status: 403,
        headers: { ...base, ...xRateLimit({ ...a, remaining: 0 }, ctx.nowMs), "x-ratelimit-used": String(a.limit), "x-ratelimit-resource": "core" },
        body: { message: "API rate limit exceeded for installation ID 1.", documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api" },
      };
    case "github-secondary":
      // Secondary limit: 403 with retry-after (seconds) and the "secondary rate limit" wording.
      return {
        status: 403,
        headers: { ...base, ...(waitMs === null ? {} : { "retry-after": String(ceilSeconds(waitMs)) }) },
        body: {
          message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
          documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
        },
      };
    case "shopify-rest": {
      // Retry-After in decimal seconds ("2.0"), not RFC-valid; the bucket as used/limit.
      const seconds = waitMs === null ? 2 : Math.ceil(waitMs / 100) / 10;
      return {
        status: 429,
        headers: { ...base, "retry-after": seconds.toFixed(1), "x-shopify-shop-api-call-limit": `${a.limit - a.remaining}/${a.limit}` },
        body: { errors: "Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service." },
      };
    }
    case "shopify-graphql":
      // 200 OK with errors[].extensions.code THROTTLED and the cost fields at the top level.
      return {
        status: 200,
        headers: { ...base, "content-type": "application/json" },
        body: {
          errors: [{ message: "Throttled", extensions: { code: "THROTTLED", documentation: "https://shopify.dev/api/usage/rate-limits" } }],
          extensions: shopifyCost(a, ctx.cost, null),
        },
      };
    case "stripe":
      // No wait documented; the reason header marks a rate limiter (not a lock timeout), and which:
      // global-concurrency for the limit on requests in flight, global-rate for the rate
      // (https://docs.stripe.com/rate-limits).
      return {
        status: 429,
        headers: { ...base, "stripe-rate-limited-reason": a.unit === "concurrent" ? "global-concurrency" : "global-rate", "request-id": `req_${ctx.jobId}` },
        body: { error: { type: "invalid_request_error", code: "rate_limit", message: "Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits." } },
      };
    case "slack":
      return { status: 429, headers: { ...base, "retry-after": String(waitMs === null ? 1 : ceilSeconds(waitMs)) }, body: { ok: false, error: "ratelimited" } };
    case "hubspot":
      return {
        status: 429,
        headers: { ...base, ...hubspotHeaders({ ...a, remaining: 0 }) },
        body: {
          status: "error",
          message: a.quota ? "You have reached your daily limit." : "You have reached your ten_secondly_rolling limit.",
          errorType: "RATE_LIMIT",
          correlationId: `corr-${ctx.jobId}`,
          policyName: a.quota ? "DAILY" : "TEN_SECONDLY_ROLLING",
        },
      };
    case "marketo":
      return { status: 200, headers: { ...base, "content-type": "application/json" }, body: marketoFailure(a, ctx.jobId) };
  }
}

/** The answer to an admitted request; budget headers when the scenario turns them on. */
export function renderOk(dialect: DialectId, a: Admission, ctx: RenderContext, data: Record<string, unknown>): LabResponse {
  const base = { ...dateHeader(ctx.nowMs), "content-type": "application/json" };
  const budget = ctx.budgetHeaders;
  switch (dialect) {
    case "generic":
      return { status: 200, headers: { ...base, ...(budget ? xRateLimit(a, ctx.nowMs) : {}) }, body: data };
    case "ietf":
      return { status: 200, headers: { ...base, ...(budget ? ietfFields(a) : {}) }, body: data };
    case "github":
    case "github-secondary":
      return { status: 200, headers: { ...base, ...(budget ? { ...xRateLimit(a, ctx.nowMs), "x-ratelimit-resource": "core" } : {}) }, body: data };
    case "shopify-rest":
      return { status: 200, headers: { ...base, ...(budget ? { "x-shopify-shop-api-call-limit": `${a.limit - a.remaining}/${a.limit}` } : {}) }, body: data };
    case "shopify-graphql":
      return { status: 200, headers: base, body: { data, extensions: shopifyCost(a, ctx.cost, ctx.cost) } };
    case "stripe":
      return { status: 200, headers: { ...base, "request-id": `req_${ctx.jobId}` }, body: data };
    case "slack":
      return { status: 200, headers: base, body: { ok: true, ...data } };
    case "hubspot":
      return { status: 200, headers: { ...base, ...(budget ? hubspotHeaders(a) : {}) }, body: data };
    case "marketo":
      return { status: 200, headers: base, body: { requestId: marketoRequestId(ctx.jobId), success: true, result: [data] } };
  }
}

/** A 503 fault (not a limit): no Retry-After, not executed. */
export function renderUnavailable(nowMs: number): LabResponse {
  return { status: 503, headers: dateHeader(nowMs), body: "Service Unavailable" };
}

/** Whether a response is the success the job wanted (GraphQL and Slack throttle with 200). */
export function isSuccess(status: number, body: unknown): boolean {
  if (status < 200 || status >= 300) return false;
  if (body !== null && typeof body === "object") {
    const record = body as Record<string, unknown>;
    if (Array.isArray(record.errors) && record.errors.length > 0) return false;
    if (record.ok === false) return false;
    if (record.success === false) return false;
  }
  return true;
}
