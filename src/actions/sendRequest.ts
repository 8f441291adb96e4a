import { action, type ActionContext } from "@prismatic-io/spectral";
import { WriteOutcomeUnknownError, type ThrottleResult } from "../client";
import { authFromConnection } from "../connections";
import { checkUrl, parseDebugRequest, parsePolicy, parseRequest, sendRequestInputs, type ParsedRequest, type StepPolicy } from "../inputs";
import { createDebugLog, type DebugLog } from "./debugLog";
import { toMultipartBody } from "./multipart";
import { attemptsSchema, isoTime, NOT_BEFORE_DESCRIPTION, nullable, scopeSchema, verdictSchema, type Schema } from "./schemas";
import { openStore, throttleClientFor } from "./shared";

/** The client's wording names code options; the designer's names the inputs a builder sees. */
function inDesignerTerms(text: string): string {
  return text.replace(/\bset (?:an idempotency key|idempotencyKey)\b/g, "fill in Idempotency Key");
}

const exampleVerdict = {
  provider: "generic",
  status: 200,
  throttled: false,
  retryable: false,
  limitType: "none" as const,
  minWaitMs: null,
  waitSource: null,
  retryAllowed: null,
  writeNotProcessed: false,
  scope: {},
  budget: { remaining: 59, limit: 60, resetAt: "2026-03-02T10:01:00.000Z", source: "x-ratelimit-remaining" },
  ignored: [],
  deviations: [],
  reason: "200: not a throttle (59 of 60 requests left until 2026-03-02T10:01:00.000Z).",
};

export const sendRequestExamples = {
  Success: {
    status: 200,
    headers: { "content-type": "application/json", "x-ratelimit-remaining": "59" },
    data: { id: "item_1042", name: "Widget" },
    outcome: "success" as const,
    attempts: [
      { status: 429, waitMs: 1040, waitSource: "retry-after" },
      { status: 200, waitMs: 0, waitSource: null },
    ],
    verdict: exampleVerdict,
  },
  Deferred: {
    outcome: "deferred" as const,
    notBefore: "2026-03-02T11:00:00.000Z",
    waitMs: 3_600_000,
    waitSeconds: 3600,
    reason: "429: Retry-After asks for 3600 s, longer than Max Inline Wait (120 s).",
    scope: "generic|api.example.com|3f9a1c0d2b7e4a56",
    attempts: [{ status: 429, waitMs: 0, waitSource: null }],
    verdict: { ...exampleVerdict, status: 429, throttled: true, retryable: true, limitType: "burst" as const, minWaitMs: 3_600_000, waitSource: "retry-after", budget: null, reason: "429 with Retry-After: 3600." },
  },
};

const successSchema: Schema = {
  type: "object",
  required: ["status", "headers", "data", "outcome", "attempts", "verdict"],
  properties: {
    status: { type: "integer", description: "The final HTTP status (below 400)." },
    headers: { type: "object", additionalProperties: { type: "string" }, description: "The response headers, lower-case names; credential headers removed." },
    data: { description: "The response body: parsed JSON, text, or binary, per Response Type. Secrets of the connection are removed." },
    outcome: { type: "string", enum: ["success"] },
    attempts: attemptsSchema,
    verdict: nullable(verdictSchema),
  },
  examples: [sendRequestExamples.Success],
};

const deferredSchema: Schema = {
  type: "object",
  required: ["outcome", "notBefore", "waitMs", "waitSeconds", "reason", "scope", "attempts", "verdict"],
  properties: {
    outcome: { type: "string", enum: ["deferred"] },
    notBefore: isoTime(`${NOT_BEFORE_DESCRIPTION} Saved in cross-flow state: later steps and executions wait for it without calling.`),
    waitMs: { type: "integer", minimum: 0, description: "The wait not taken in this step, in milliseconds." },
    waitSeconds: { type: "integer", minimum: 0, description: "The same wait, in whole seconds (rounded up)." },
    reason: { type: "string", description: "Why the step deferred." },
    scope: scopeSchema,
    attempts: { ...attemptsSchema, description: "The calls made; none when a recorded not_before stopped the step before calling." },
    verdict: nullable(verdictSchema),
  },
  examples: [sendRequestExamples.Deferred],
};

async function bodyOf(request: ParsedRequest): Promise<{ data: unknown; headers: Record<string, string>; bodySummary?: string }> {
  const multipart = await toMultipartBody(request.formData, request.fileData, request.fileDataFileNames);
  if (!multipart) return { data: request.data, headers: request.headers };
  // The caller's own Content-Type would lose the boundary; the multipart one wins.
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name.toLowerCase() !== "content-type"));
  return { data: multipart.body, headers: { ...headers, "Content-Type": multipart.contentType }, bodySummary: multipart.summary };
}

/** Sends the request; with Debug Request on, logs it and its answer (or its failure) without credentials. */
async function send(context: ActionContext, params: Record<string, unknown>, request: ParsedRequest, policy: StepPolicy, nowMs: number) {
  const auth = authFromConnection(params.connection as Parameters<typeof authFromConnection>[0]);
  checkUrl(request.url, auth);
  const store = openStore(context, params);
  try {
    const client = throttleClientFor({ context, auth, policy, store, nowMs });
    const body = await bodyOf(request);
    const debug: DebugLog | null = parseDebugRequest(params) ? createDebugLog(context, auth, request.headers) : null;
    debug?.request({ method: request.method, url: request.url, baseUrl: auth.baseUrl, queryParams: request.queryParams, headers: body.headers, body: body.data, bodySummary: body.bodySummary });
    try {
      const result = await client.request({ method: request.method, url: request.url, data: body.data, headers: body.headers, params: request.queryParams, idempotencyKey: request.idempotencyKey, responseType: request.responseType });
      debug?.response(result);
      // Only this component's own key: the waits and what its governors learned.
      return { result, crossFlowState: await store.toCrossFlowState() };
    } catch (error) {
      debug?.failure(error);
      if (error instanceof WriteOutcomeUnknownError) error.message = inDesignerTerms(error.message);
      throw error;
    }
  } finally {
    // No socket or timer outlives the step (the shared store's connection is per step).
    await store.close();
  }
}

function successData(result: ThrottleResult) {
  return { status: result.status, headers: result.headers, data: result.data, outcome: "success" as const, attempts: result.attempts, verdict: result.verdict };
}

function deferredData(result: ThrottleResult) {
  const waitMs = result.waitMs ?? 0;
  return { outcome: "deferred" as const, notBefore: result.notBefore ?? null, waitMs, waitSeconds: Math.ceil(waitMs / 1000), reason: result.reason, scope: result.scope, attempts: result.attempts, verdict: result.verdict };
}

/** What the step returns: the branch, its data, the governors in cross-flow state (our key only), and for respond mode the flow's HTTP answer. */
type SendRequestReturn =
  | { branch: "Success"; data: ReturnType<typeof successData>; crossFlowState?: Record<string, unknown> }
  | { branch: "Deferred"; data: ReturnType<typeof deferredData>; crossFlowState?: Record<string, unknown>; statusCode?: number; contentType?: string; headers?: Record<string, string> };

/**
 * Send Request: Raw Request with the throttle engine behind it. Long waits go to On Long Wait:
 * fail (throw, Flow retry re-runs later), defer (branch Deferred, not_before saved in cross-flow
 * state), respond (Deferred, plus a 429/503 with Retry-After for a synchronous caller).
 */
export const sendRequest = action({
  display: {
    label: "Send Request",
    description: "Send an HTTP request that waits as long as the API asks, shares waits per rate-limit scope, and defers long waits.",
    directions:
      "Works like Raw Request, with the API's rate limits read for you: a wait the API asks for (Retry-After, rate-limit headers, throttle errors) is taken in full before calling again, up to Max Inline Wait. A longer wait goes to On Long Wait. The wait is recorded as a not_before (no request before that time) under the rate-limit scope (provider, host and a hash of the connection's credential), so other steps and executions using the same connection wait too.",
  },
  inputs: sendRequestInputs,
  allowsBranching: true,
  staticBranchNames: ["Success", "Deferred"],
  // Calls an external API (and may write) and changes cross-flow state: never run it just to fill the designer.
  performSafety: "notAllowed",
  examplePayload: { branch: "Success", data: sendRequestExamples.Success },
  outputSchema: { type: "branchingOutput", branchSchemas: { Success: successSchema, Deferred: deferredSchema } },
  perform: async (context, params): Promise<SendRequestReturn> => {
    const request = parseRequest(params);
    const policy = parsePolicy(params);
    const { result, crossFlowState } = await send(context, params, request, policy, Date.now());

    if (result.outcome === "deferred") {
      const data = deferredData(result);
      if (policy.onLongWait === "respond") {
        const retryAfterSeconds = Math.max(1, data.waitSeconds);
        const statusCode = result.verdict?.limitType === "server" ? 503 : 429;
        return { branch: "Deferred", data, crossFlowState, statusCode, contentType: "application/json", headers: { "Retry-After": String(retryAfterSeconds) } };
      }
      return { branch: "Deferred", data, crossFlowState };
    }
    if (result.outcome === "success") {
      return { branch: "Success", data: successData(result), crossFlowState };
    }
    // http_error / gave_up: fail the step like Raw Request does, with the reason in one line.
    const statusText = result.status === null ? "no response" : `HTTP ${result.status}`;
    const responseBody = (typeof result.data === "string" ? result.data : JSON.stringify(result.data ?? "")).replace(/\s+/g, " ");
    throw new Error(`${request.method} request ${result.outcome === "gave_up" ? "gave up" : "failed"} after ${result.attempts.length} call(s), ${statusText}: ${inDesignerTerms(result.reason)} ${responseBody.slice(0, 300)}`.trim());
  },
});
