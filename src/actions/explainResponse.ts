import { action, input } from "@prismatic-io/spectral";
import { ThrottleInputError } from "../client";
import { classify, headerLinesOf, type Verdict } from "../engine";
import { parseJsonish, parseOptionalText, parseWhole, policyInputs, parseProvider, type NumberSpec } from "../inputs";
import { isoTime, NOT_BEFORE_DESCRIPTION, nullable, verdictSchema, type Schema } from "./schemas";

const STATUS: NumberSpec = { label: "Status", fallback: 200, min: 100, max: 599 };

function parseHeaders(value: unknown): Record<string, string> | undefined {
  // Header lines as a browser or curl -i shows them ("Retry-After: 30", one a line) are read too.
  const lines = typeof value === "string" && !/^\s*[[{]/.test(value) ? headerLinesOf(value) : null;
  if (lines !== null) return lines;
  const headers = parseJsonish("Headers", value);
  if (headers !== undefined && (headers === null || typeof headers !== "object" || Array.isArray(headers))) {
    throw new ThrottleInputError('Invalid Headers: expected an object of header names to values, its JSON text, or header lines ("Retry-After: 30", one a line). Reference the headers of the step whose response you explain.');
  }
  return headers as Record<string, string> | undefined;
}

type ExplainData = Verdict & { notBefore: string | null; waitSeconds: number | null };

const throttledExample: ExplainData = {
  provider: "generic",
  status: 429,
  throttled: true,
  retryable: true,
  limitType: "burst",
  minWaitMs: 30_000,
  waitSource: "retry-after",
  retryAllowed: null,
  writeNotProcessed: false,
  scope: {},
  budget: null,
  ignored: [],
  deviations: [],
  reason: "429 with Retry-After: 30.",
  notBefore: "2026-03-02T10:00:30.000Z",
  waitSeconds: 30,
};

const notThrottledExample: ExplainData = {
  ...throttledExample,
  status: 200,
  throttled: false,
  retryable: false,
  limitType: "none",
  minWaitMs: null,
  waitSource: null,
  budget: { remaining: 10, limit: 100, resetAt: null, source: "x-ratelimit-remaining" },
  reason: "200: not a throttle (10 of 100 requests left).",
  notBefore: null,
  waitSeconds: null,
};

const explainSchema = (example: ExplainData): Schema => ({
  ...verdictSchema,
  required: [...(verdictSchema.required as string[]), "notBefore", "waitSeconds"],
  properties: {
    ...verdictSchema.properties,
    notBefore: nullable(isoTime(`${NOT_BEFORE_DESCRIPTION} Now plus the wait the response asks for; null when it names none. Pass this output to Record Backoff to save it.`)),
    waitSeconds: nullable({ type: "integer", minimum: 0, description: "The wait the response asks for, in whole seconds (rounded up); null when it names none." }),
  },
  examples: [example],
});

/** Explain Throttle Response: the verdict for a response another component's step received. */
export const explainResponse = action({
  display: {
    label: "Explain Throttle Response",
    description: "Read a status, headers and body from another step and say whether it is a throttle, how long to wait and why.",
    directions: "Reference the status, headers and body of another component's HTTP step (its error output, or an ignored error). The Throttled branch carries the wait; pass this step's output as Verdict to Record Backoff to make other steps wait for it.",
  },
  inputs: {
    status: input({ label: STATUS.label, type: "string", required: true, comments: "The HTTP status code of the response, e.g. 429.", example: "429", placeholder: "429", clean: (v: unknown) => parseWhole(STATUS, v) }),
    headers: input({
      label: "Headers",
      type: "data",
      required: false,
      comments: "The response headers: an object of names to values, its JSON text, or the header lines as curl -i or a browser shows them (Retry-After: 30, one a line). Rate-limit signals (Retry-After, X-RateLimit-*) are read from here.",
      example: '{"Retry-After": "30"}',
      placeholder: '{"Retry-After": "30"}',
      clean: parseHeaders,
    }),
    body: input({
      label: "Body",
      type: "data",
      required: false,
      comments: "The response body: an object, or text. Some APIs say they are throttling only in the body (Shopify's THROTTLED, Slack's ratelimited).",
      example: '{"error": "rate_limited"}',
      placeholder: '{"error": "rate_limited"}',
      clean: (v: unknown) => parseJsonish("Body", v),
    }),
    url: input({ label: "Request URL", type: "string", required: false, comments: "The URL that was called: its host picks the provider's rules when Provider is Automatic.", example: "https://api.example.com/v1/items", placeholder: "https://api.example.com/v1/items", clean: parseOptionalText }),
    method: input({ label: "Request Method", type: "string", required: false, default: "GET", comments: "The HTTP method that was used.", example: "POST", placeholder: "GET", clean: parseOptionalText }),
    provider: policyInputs.provider,
  },
  allowsBranching: true,
  staticBranchNames: ["Throttled", "Not Throttled"],
  // A pure reading of its inputs: no network call, no state read or written. Safe to run inline.
  performSafety: "safe",
  examplePayload: { branch: "Throttled", data: throttledExample },
  outputSchema: { type: "branchingOutput", branchSchemas: { Throttled: explainSchema(throttledExample), "Not Throttled": explainSchema(notThrottledExample) } },
  perform: async (_context, params): Promise<{ branch: "Throttled" | "Not Throttled"; data: ExplainData }> => {
    const nowMs = Date.now();
    const verdict = classify(
      {
        request: { method: parseOptionalText(params.method) ?? "GET", url: parseOptionalText(params.url) },
        response: { status: parseWhole(STATUS, params.status), headers: parseHeaders(params.headers), body: parseJsonish("Body", params.body) },
        provider: parseProvider(params.provider),
      },
      { nowMs },
    );
    const notBefore = verdict.minWaitMs === null ? null : new Date(nowMs + verdict.minWaitMs).toISOString();
    const waitSeconds = verdict.minWaitMs === null ? null : Math.ceil(verdict.minWaitMs / 1000);
    return { branch: verdict.throttled ? "Throttled" : "Not Throttled", data: { ...verdict, notBefore, waitSeconds } };
  },
});
