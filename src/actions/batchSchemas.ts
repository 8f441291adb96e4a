/** Example payloads and output schemas of Send Batch and Take Parked Items (see schemas.ts for why they exist). */
import { isoTime, nullable, type Schema } from "./schemas";

const idSchema: Schema = { anyOf: [{ type: "string" }, { type: "number" }], description: "The item's id as given, or its index in Requests (from 0) when it had none." };

/** A request that was not done: the request object as given, with when and why. */
const deferredItemSchema: Schema = {
  type: "object",
  required: ["id", "url", "notBefore", "reason"],
  description: "A request not done in this step: the request object as given (headers included, as given), with its id, notBefore and reason. Give it back to Send Batch as it is.",
  properties: {
    id: idSchema,
    method: { type: "string" },
    url: { type: "string" },
    data: { description: "The body, as given." },
    headers: { type: "object", description: "As given: header name to value." },
    queryParams: { type: "object", description: "As given: parameter name to value." },
    idempotencyKey: { anyOf: [{ type: "string" }, { type: "number" }] },
    notBefore: isoTime("Not before this time: the API's wait for its scope, or when the execution's time ran out, now (ISO 8601, UTC)."),
    reason: { type: "string", description: "Why it was not done, in one sentence." },
  },
};

const resultSchema: Schema = {
  type: "object",
  required: ["id", "outcome", "status", "data", "reason", "attempts"],
  properties: {
    id: idSchema,
    outcome: { type: "string", enum: ["success", "failed", "deferred"], description: "success: a final answer below 400; failed: a final error answer (404, 400...), retries spent, or a write whose outcome is unknown; deferred: not done now (see notBefore)." },
    status: nullable({ type: "integer", description: "The final HTTP status; null when no answer came or nothing was sent." }),
    data: { description: "The response body (connection secrets removed); null when there was none." },
    notBefore: isoTime("For a deferred item: not before this time (ISO 8601, UTC)."),
    reason: { type: "string", description: "What happened, in one sentence." },
    attempts: { type: ["integer", "null"], minimum: 0, description: "Calls made for this item (0: deferred without calling); null when a failure did not tell." },
  },
};

const count = (description: string): Schema => ({ type: "integer", minimum: 0, description });

const batchSchema = (examples: unknown[]): Schema => ({
  type: "object",
  required: ["summary", "results", "deferred", "parkQueue", "warnings"],
  properties: {
    summary: {
      type: "object",
      required: ["total", "succeeded", "failed", "deferred", "parked"],
      properties: {
        total: count("Requests given."),
        succeeded: count("Items with a final answer below 400."),
        failed: count("Items that failed (reported in results, not thrown)."),
        deferred: count("Items not done now: parked, or listed in deferred."),
        parked: count("Deferred items kept in the Park Queue."),
      },
    },
    results: { type: "array", items: resultSchema, description: "One entry per request, in the order given." },
    deferred: { type: "array", items: deferredItemSchema, description: "The requests not done and not parked (all deferred items when no Park Queue is set; the ones that did not fit when it is full)." },
    parkQueue: nullable({
      type: "object",
      required: ["name", "parked", "waiting"],
      description: "The park queue deferred items went to; null when none was parked.",
      properties: { name: { type: "string" }, parked: count("Items parked by this step."), waiting: count("Items in the queue now.") },
    }),
    warnings: { type: "array", items: { type: "string" }, description: "Anything that needs a look, e.g. a full park queue." },
  },
  examples,
});

const at = "2026-03-02T11:00:00.000Z";
const contact = (n: number) => ({ id: `c-${n}`, method: "POST", url: "/contacts", data: { email: `person${n}@example.com` }, idempotencyKey: `c-${n}` });

export const batchExamples = {
  Success: {
    summary: { total: 2, succeeded: 1, failed: 1, deferred: 0, parked: 0 },
    results: [
      { id: "c-1", outcome: "success" as const, status: 201, data: { id: 501 }, reason: "201: not a throttle (58 of 60 requests left).", attempts: 1 },
      { id: "c-2", outcome: "failed" as const, status: 422, data: { error: "email is invalid" }, reason: "422: a validation error; not retried.", attempts: 1 },
    ],
    deferred: [],
    parkQueue: null,
    warnings: [],
  },
  Deferred: {
    summary: { total: 3, succeeded: 1, failed: 0, deferred: 2, parked: 2 },
    results: [
      { id: "c-1", outcome: "success" as const, status: 201, data: { id: 501 }, reason: "201: not a throttle (0 of 60 requests left).", attempts: 1 },
      { id: "c-2", outcome: "deferred" as const, status: 429, data: null, notBefore: at, reason: "A quota limit that is not retried inline; the work can resume at 2026-03-02T11:00:00.000Z (in 3600 s).", attempts: 1 },
      { id: "c-3", outcome: "deferred" as const, status: null, data: null, notBefore: at, reason: "Not sent: an earlier item to the same API cannot start before 2026-03-02T11:00:00.000Z: A quota limit that is not retried inline; the work can resume at 2026-03-02T11:00:00.000Z (in 3600 s).", attempts: 0 },
    ],
    deferred: [],
    parkQueue: { name: "crm-contacts", parked: 2, waiting: 2 },
    warnings: [],
  },
};

export const batchSchemas = {
  Success: batchSchema([batchExamples.Success]),
  Deferred: batchSchema([batchExamples.Deferred, { ...batchExamples.Deferred, summary: { ...batchExamples.Deferred.summary, parked: 0 }, deferred: [2, 3].map((n) => ({ ...contact(n), notBefore: at, reason: "Not sent: an earlier item to the same API cannot start before 2026-03-02T11:00:00.000Z: A quota limit that is not retried inline." })), parkQueue: null }]),
};

export const takeParkedExample = {
  items: [{ ...contact(2), notBefore: at, reason: "A quota limit that is not retried inline; the work can resume at 2026-03-02T11:00:00.000Z (in 3600 s)." }],
  remaining: 1,
  nextNotBefore: "2026-03-02T11:05:00.000Z",
};

export const takeParkedSchema: Schema = {
  type: "object",
  required: ["items", "remaining", "nextNotBefore"],
  properties: {
    items: { type: "array", items: deferredItemSchema, description: "The parked requests whose notBefore has passed, in the order they were parked, now removed from the queue. Give them to Send Batch (with new ones if you like)." },
    remaining: count("Items still in the queue (their notBefore has not passed, or past Max Items)."),
    nextNotBefore: nullable(isoTime("The earliest notBefore among the items still in the queue; null when it is empty.")),
  },
  examples: [takeParkedExample],
};
