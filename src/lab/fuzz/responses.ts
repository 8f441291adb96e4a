/**
 * Random responses in classify's input shape: statuses (odd ones included), header maps built
 * from the names dialects read with values that break naive parsers, and bodies from the
 * providers' own shapes to plain garbage. Shared by the classify, plan and write-safety targets.
 */
import { dialects } from "../../engine";
import type { ClassifyInput } from "../../engine";
import type { Gen } from "./random";

const HEADER_NAMES = [
  "retry-after", "retry-after-ms", "x-amz-retry-after", "date", "x-ratelimit-remaining", "x-ratelimit-reset", "x-ratelimit-limit",
  "x-ratelimit-resource", "ratelimit", "ratelimit-policy", "ratelimit-remaining", "ratelimit-reset", "ratelimit-limit", "x-rate-limit-reset",
  "x-rate-limit-remaining", "x-shopify-shop-api-call-limit", "sforce-limit-info", "stripe-should-retry", "stripe-rate-limited-reason",
  "x-should-retry", "x-ratelimit-reset-requests", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens", "anthropic-ratelimit-requests-reset",
  "anthropic-ratelimit-requests-remaining", "x-ratelimit-reset-after", "x-ratelimit-scope", "x-rate-limit-problem", "x-ratelimit-type",
  "x-hubspot-ratelimit-remaining", "x-hubspot-ratelimit-daily-remaining", "x-ratelimit-bucket", "x-daylimit-remaining", "beta-ratelimit",
  "beta-ratelimit-policy", "ratelimit-reason",
];

const BODIES: unknown[] = [
  { errors: [{ extensions: { code: "THROTTLED" } }], extensions: { cost: { requestedQueryCost: 50, throttleStatus: { currentlyAvailable: 0, restoreRate: 50, maximumAvailable: 1000 } } } },
  { ok: false, error: "ratelimited" },
  [{ errorCode: "REQUEST_LIMIT_EXCEEDED", message: "TotalRequests Limit exceeded." }],
  [{ errorCode: "UNABLE_TO_LOCK_ROW", message: "unable to obtain exclusive access to this record" }],
  { error: { code: "insufficient_quota", type: "insufficient_quota" } },
  { error: { code: "rate_limit_exceeded", type: "requests", message: "Rate limit reached on requests per day (RPD)" } },
  { error: { status: "RESOURCE_EXHAUSTED", message: "Quota exceeded for quota metric 'Queries' and limit 'Queries per day' of service 'x'" } },
  { error: { errors: [{ reason: "userRateLimitExceeded" }] } },
  { message: "API rate limit exceeded for user ID 1." },
  { message: "You have exceeded a secondary rate limit." },
  { message: "Bad credentials" },
  { policyName: "DAILY", errorType: "RATE_LIMIT" },
  { policyName: "TEN_SECONDLY_ROLLING" },
  { code: 20429 },
  { retry_after: 1.5, global: true },
  { error: { code: "0x80072321" } },
  { Fault: { Error: [{ code: "3001" }] } },
  '<IntuitResponse><Fault><Error code="3001"><Message>ThrottleExceeded</Message></Error></Fault></IntuitResponse>',
  { type: "error", error: { type: "overloaded_error" } },
  { error: { type: "rate_limit_error" } },
  { code: "rate_limited" },
  { errors: [{ code: "rate_limit_exceeded" }] },
  { error: "TOO_MANY_REQUESTS" },
  { errors: [{ type: "RATE_LIMITED" }] },
  { extensions: { cost: { requestedQueryCost: 1e308, throttleStatus: { currentlyAvailable: -1, restoreRate: 1e-300, maximumAvailable: 1e308 } } } },
];

const STATUSES = [200, 200, 401, 403, 403, 408, 409, 413, 423, 429, 429, 429, 500, 502, 503, 503, 504, 529, 400, 422];

export const HOSTS = ["api.example.test", ...dialects.flatMap((d) => d.hosts).map((h) => (h.startsWith(".") ? `tenant${h}` : h))];

function headerValue(gen: Gen): string | string[] | number {
  switch (gen.int(0, 9)) {
    case 0:
      return new Date(Math.max(-8.64e15, Math.min(8.64e15, gen.instantMs()))).toUTCString();
    case 1:
      return new Date(Math.max(-8.64e15, Math.min(8.64e15, gen.instantMs()))).toISOString();
    case 2:
      return gen.text(30);
    case 3:
      return gen.pick(['"default";r=0;t=30', "r=0;t=", "32/40", "api-usage=5000/5000", "6m0s", "20ms", "true", "false", "day", "shared", "Daily-limit", "1.5"]);
    case 4:
      return [gen.numberText(), gen.numberText()];
    case 5:
      return gen.chance(0.1) ? gen.longRun() : gen.numberText();
    case 6:
      return gen.int(-1000, 1_000_000);
    default:
      return gen.numberText();
  }
}

function body(gen: Gen): unknown {
  switch (gen.int(0, 5)) {
    case 0:
      return undefined;
    case 1:
      return gen.text(60);
    case 2:
      return gen.chance(0.1) ? gen.longRun() : JSON.stringify(gen.pick(BODIES));
    default:
      return gen.pick(BODIES);
  }
}

function status(gen: Gen): number {
  if (gen.chance(0.9)) return gen.pick(STATUSES);
  return gen.pick([gen.int(100, 599), gen.int(-5, 1000), 429.5, Number.NaN, 0]);
}

/** One random response; `headers` keeps lower-case names unique, so what was sent is what is read. */
export function randomResponse(gen: Gen): ClassifyInput & { response: { headers: Record<string, string | string[] | number> } } {
  const headers: Record<string, string | string[] | number> = {};
  const count = gen.int(0, 6);
  for (let i = 0; i < count; i++) headers[gen.chance(0.95) ? gen.pick(HEADER_NAMES) : gen.text(10).toLowerCase()] = headerValue(gen);
  const host = gen.pick(HOSTS);
  const path = gen.pick(["/x", "/graphql", "/admin/api/2025-01/graphql.json", "/api/chat.postMessage", "/search/issues", "/v3/company/1/query", "/rest/api/3/issue/A-1"]);
  return {
    request: { method: gen.pick(["GET", "POST", "PATCH", "PUT", "DELETE"]), url: gen.chance(0.97) ? `https://${host}${gen.chance(0.05) ? "." : ""}${path}` : gen.text(20) },
    response: { status: status(gen), headers, body: body(gen) },
    ...(gen.chance(0.1) ? { provider: gen.pick([...dialects.map((d) => d.id), "nope", "auto"]) } : {}),
  };
}
