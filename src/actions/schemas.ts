/**
 * JSON Schema pieces for the actions' outputSchema (what the designer offers for references to a
 * step's output before any run). Spectral 10.31 types them as JsonSchema; they describe `data`
 * only and are not enforced at run time, so test/component-metadata.test.ts validates real
 * outputs against them.
 */
import type { OutputSchema } from "@prismatic-io/spectral";

type AnySchema = Extract<OutputSchema, { type: "actionOutput" }>["schema"];
/** The draft-7 member of spectral's JsonSchema union (the one with `examples`); spectral does not export it by name. */
export type Schema = AnySchema extends infer T ? (T extends unknown ? ("examples" extends keyof T ? T : never) : never) : never;

export const isoTime = (description: string): Schema => ({ type: "string", format: "date-time", description });
export const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: "null" }] });
const text = (description: string): Schema => ({ type: "string", description });
const count = (description: string): Schema => ({ type: "integer", minimum: 0, description });

export const SCOPE_DESCRIPTION =
  "The rate-limit scope: the bucket waits are recorded under and shared through. By default provider|host|a hash of the connection's credential (never the credential itself).";
export const NOT_BEFORE_DESCRIPTION = "The not_before: no request to this scope before this time (ISO 8601, UTC).";

export const scopeSchema: Schema = text(SCOPE_DESCRIPTION);

/** The engine's reading of a response (src/engine/types.ts Verdict). */
export const verdictSchema: Schema = {
  type: "object",
  description: "How the response was read: throttled or not, what kind of limit, how long to wait and why.",
  required: ["provider", "status", "throttled", "retryable", "limitType", "minWaitMs", "waitSource", "reason"],
  properties: {
    provider: text("The provider rules used (a dialect id such as github, or generic)."),
    status: { type: "integer", description: "The HTTP status read (0 when no response came)." },
    throttled: { type: "boolean", description: "The API refused the request because of a usage limit or back-pressure." },
    retryable: { type: "boolean", description: "Calling again later in this run is the right reaction." },
    limitType: { type: "string", enum: ["burst", "quota", "concurrency", "cost", "contention", "server", "permission", "validation", "none"], description: "What kind of limit the response speaks of." },
    minWaitMs: nullable({ type: "integer", minimum: 0, description: "The wait the response asks for, in milliseconds." }),
    waitSource: nullable(text("Which signal gave the wait, e.g. retry-after or x-ratelimit-reset.")),
    retryAllowed: nullable({ type: "boolean", description: "The server's own retry verdict (Stripe-Should-Retry...), when it gives one." }),
    writeNotProcessed: { type: "boolean", description: "The provider documents that a write given this answer was not carried out." },
    scope: { type: "object", additionalProperties: { type: "string" }, description: "The parts naming the limit's own scope (GitHub resource, Shopify store...)." },
    budget: nullable({
      type: "object",
      description: "The remaining allowance the response shows.",
      properties: { remaining: { type: "number" }, limit: nullable({ type: "number" }), resetAt: nullable(isoTime("When the allowance resets.")), source: { type: "string" } },
    }),
    ignored: { type: "array", description: "Signals present but not usable, and why.", items: { type: "object", properties: { signal: { type: "string" }, value: { type: "string" }, why: { type: "string" } } } },
    deviations: { type: "array", items: { type: "string" }, description: "Departures from the standards that were read anyway." },
    reason: text("One sentence a person can read."),
  },
};

/** One call the step made (src/client/types.ts AttemptRecord). */
export const attemptsSchema: Schema = {
  type: "array",
  description: "One entry per call made, in order.",
  items: {
    type: "object",
    required: ["status", "waitMs", "waitSource"],
    properties: {
      status: nullable({ type: "integer", description: "The HTTP status, or null when no response came (timeout, dropped connection)." }),
      waitMs: count("The wait taken after this call before the next one, in milliseconds (0 for the last)."),
      waitSource: nullable(text("What set that wait: retry-after, a rate-limit header, or backoff.")),
    },
  },
};

/** What is recorded for a scope (src/actions/shared.ts ScopeView). */
export const scopeViewSchema: Schema = {
  type: "object",
  description: "What is recorded for the scope.",
  required: ["notBefore", "nextStart", "reason", "limitType", "breaker", "throttlesInARow", "budget", "updatedAt"],
  properties: {
    notBefore: nullable(isoTime(`${NOT_BEFORE_DESCRIPTION} Null when none is ahead.`)),
    nextStart: nullable(isoTime("The earliest time the scope's budget lets the next request start (the API's wait, or a budget spent until it refills); null when now.")),
    reason: text("Why the scope is held back, or that nothing holds it."),
    limitType: text("What kind of limit the wait came from (burst, quota, cost, server...)."),
    breaker: {
      type: "string",
      enum: ["closed", "open", "half_open"],
      description: "The scope's breaker: closed (normal); open (after Breaker Threshold throttles in a row: after the not_before, one request goes first); half_open (that one request, the probe, is out; the others wait for its answer).",
    },
    throttlesInARow: count("Throttled answers in a row for this scope."),
    budget: {
      type: "object",
      description: "The API's budget as the scope learned it from the API's own answers.",
      required: ["limit", "windowSeconds", "remaining", "resetAt", "learnedFrom"],
      properties: {
        limit: { type: ["number", "null"], description: "Requests (or cost points) per window." },
        windowSeconds: { type: ["number", "null"], description: "The window's length in seconds." },
        remaining: { type: ["number", "null"], description: "What the last answer showed as left." },
        resetAt: nullable(isoTime("When the last answer said the budget resets.")),
        learnedFrom: { type: ["string", "null"], enum: ["shown", "inferred", "assumed", null], description: "shown: the API states its window; inferred: learned from resets and throttles; assumed: one second, taken when a throttle told no wait, until throttles and a success bound it." },
      },
    },
    updatedAt: isoTime("When the scope was last updated."),
  },
};

/** Recorded scopes of the same host under a credential, which a step without a connection does not act on. */
export const credentialScopesSchema: Schema = {
  type: "array",
  description: "Scopes for the same host recorded under a credential (only looked up when no connection and no Scope Key were given).",
  items: {
    type: "object",
    required: ["scope", "notBefore", "breaker"],
    properties: { scope: scopeSchema, notBefore: isoTime(NOT_BEFORE_DESCRIPTION), breaker: { type: "string", enum: ["closed", "open", "half_open"] } },
  },
};

export const warningSchema: Schema = nullable(text("Set when this step may not be acting on the scope you meant: read it, then pick the same connection (or Scope Key) as the Send Request steps."));
