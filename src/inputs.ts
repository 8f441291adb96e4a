/**
 * Step inputs, in groups that later actions can spread:
 *   - requestInputs: one HTTP request, mirroring spectral's Raw Request (parseRequest);
 *   - policyInputs: how to wait, retry and defer, shared by every request of a step (parsePolicy);
 *   - scopeInputs: which rate-limit scope Check, Record and Clear Backoff act on (parseScope).
 * Times are seconds everywhere in the designer (decimals allowed); the parsers return ms.
 * Every parser throws one line naming the input's LABEL, what was wrong and what to enter: they
 * run as `clean` in Prismatic and again in perform (spectral's testing.invoke skips clean).
 */
import { input, util, type KeyValuePair } from "@prismatic-io/spectral";
import { createRedactor, ThrottleInputError } from "./client";
import { DEFAULT_POLICY, dialects, type JitterKind } from "./engine";

export type OnLongWaitInput = "fail" | "defer" | "respond";
export type ResponseTypeInput = "json" | "text" | "arraybuffer";

function blank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === "string" && value.trim() === "");
}

function shown(value: unknown): string {
  return (typeof value === "string" ? value : JSON.stringify(value) ?? String(value)).trim().slice(0, 40);
}

/** A number input: its label, the value used when it is left blank, and its bounds. */
export interface NumberSpec {
  label: string;
  fallback: number;
  min: number;
  max: number;
}

/** A whole number within bounds, or the fallback when left blank. */
export function parseWhole(spec: NumberSpec, value: unknown): number {
  if (blank(value)) return spec.fallback;
  const textValue = String(value).trim();
  const parsed = typeof value === "number" ? value : /^-?\d+$/.test(textValue) ? Number(textValue) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < spec.min || parsed > spec.max) {
    throw new ThrottleInputError(`Invalid ${spec.label}: "${shown(value)}" is not a whole number from ${spec.min} to ${spec.max}. Enter digits only, e.g. ${spec.fallback}.`);
  }
  return parsed;
}

/** A number of seconds within bounds (decimals allowed, e.g. 0.5), or the fallback when left blank. */
export function parseSeconds(spec: NumberSpec, value: unknown): number {
  if (blank(value)) return spec.fallback;
  const textValue = String(value).trim();
  const parsed = typeof value === "number" ? value : /^\d+(\.\d+)?$|^\.\d+$/.test(textValue) ? Number(textValue) : Number.NaN;
  if (!Number.isFinite(parsed) || parsed < spec.min || parsed > spec.max) {
    throw new ThrottleInputError(`Invalid ${spec.label}: "${shown(value)}" is not a number of seconds from ${spec.min} to ${spec.max}. Enter e.g. ${spec.fallback} (decimals such as 0.5 are allowed).`);
  }
  return parsed;
}

export function parseChoice<T extends string>(label: string, value: unknown, choices: readonly T[], fallback: T): T {
  if (blank(value)) return fallback;
  const textValue = String(value).trim().toLowerCase();
  const found = choices.find((c) => c.toLowerCase() === textValue);
  if (!found) throw new ThrottleInputError(`Invalid ${label}: "${shown(value)}". Use one of: ${choices.join(", ")}.`);
  return found;
}

/** A boolean input: true/false (and the yes/no words spectral's util.types.toBool accepts). */
export function parseBoolean(label: string, value: unknown, fallback: boolean): boolean {
  if (blank(value)) return fallback;
  if (typeof value === "boolean") return value;
  const word = String(value).trim().toLowerCase();
  if (["t", "true", "y", "yes", "f", "false", "n", "no"].includes(word)) return util.types.toBool(word);
  throw new ThrottleInputError(`Invalid ${label}: "${shown(value)}". Use true or false.`);
}

export function parseOptionalText(value: unknown): string | undefined {
  if (blank(value)) return undefined;
  return String(value).trim();
}

/** One key/value row; the value untouched (a file from a previous step stays a Buffer). */
export interface KeyValueEntry {
  key: string;
  value: unknown;
}

/** A keyvaluelist (or an object from a reference) as rows, blank keys dropped; idempotent on its own output. */
export function parseKeyValueEntries(label: string, value: unknown): KeyValueEntry[] {
  if (blank(value)) return [];
  if (Array.isArray(value)) {
    const out: KeyValueEntry[] = [];
    for (const item of value as KeyValuePair[]) {
      if (!item || typeof item !== "object" || typeof item.key !== "string") throw new ThrottleInputError(`Invalid ${label}: each entry needs a key and a value.`);
      if (item.key.trim() !== "") out.push({ key: item.key.trim(), value: item.value });
    }
    return out;
  }
  if (typeof value === "object") return Object.entries(value as Record<string, unknown>).map(([key, v]) => ({ key, value: v }));
  throw new ThrottleInputError(`Invalid ${label}: expected a list of key/value pairs. Add one row per entry, or pass an object from a previous step.`);
}

/** A keyvaluelist as a plain string map (headers, query parameters). */
export function parseKeyValues(label: string, value: unknown): Record<string, string> {
  return Object.fromEntries(parseKeyValueEntries(label, value).map(({ key, value: v }) => [key, typeof v === "string" ? v : JSON.stringify(v)]));
}

/** A JSON object given as an object or as JSON text (headers and bodies from another step). */
export function parseJsonish(label: string, value: unknown): unknown {
  if (blank(value)) return undefined;
  if (typeof value !== "string") return value;
  const trimmed = value.trim();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return value;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    throw new ThrottleInputError(`Invalid ${label}: it starts like JSON but does not parse. Fix the JSON, or pass the value from a previous step by reference.`);
  }
}

// ---------------------------------------------------------------------------------------------
// Shared wording: the terms the designer shows, each explained once in plain words.

/** What a scope is, for every input that names one. */
const SCOPE_MEANS =
  "The scope is the bucket a wait is recorded under and shared through: by default the provider, the API's host and a hash of the connection's credential (never the credential itself).";
/** What a not_before is. */
const NOT_BEFORE_MEANS = "A not_before is the time before which no request to that API should be made.";

// ---------------------------------------------------------------------------------------------
// Request inputs: one HTTP request, as in spectral's Raw Request.

const METHOD_CHOICES = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;
const RESPONSE_TYPES: readonly ResponseTypeInput[] = ["json", "text", "arraybuffer"];

/** Automatic first, then every dialect by its label; the values stay the dialect ids. */
const PROVIDER_MODEL = [{ label: "Automatic (by the URL's host)", value: "auto" }, ...dialects.map((d) => ({ label: d.label, value: d.id })).sort((a, b) => a.label.localeCompare(b.label))];
const PROVIDER_CHOICES = PROVIDER_MODEL.map((m) => m.value);

export function parseProvider(value: unknown): string {
  return parseChoice("Provider", value, PROVIDER_CHOICES, "auto");
}

export const sharedStoreInput = input({
  label: "Shared Store",
  type: "connection",
  required: false,
  comments:
    "Optional: a Redis (Shared Store) connection. With it, waits and rate-limit slots are written to Redis the moment they are known and shared at once by every execution, flow and instance that uses the same Redis: a failed execution's wait is kept, and concurrent executions take turns. Each step opens one connection and closes it when it ends. If Redis does not answer within about a second, the step goes on with cross-flow state and logs one warning. Use the same Shared Store in the Check, Record and Clear Backoff steps that work with this step.",
});

export const connectionInput = input({
  label: "Connection",
  type: "connection",
  required: false,
  comments: `Optional: how to authenticate, and a Base URL so that URL can be a path. It also picks the rate-limit scope. ${SCOPE_MEANS} Check, Record and Clear Backoff steps must use this same connection to see this step's waits.`,
});

const URL_LABEL = "URL";

export const urlInput = input({
  label: URL_LABEL,
  type: "string",
  required: true,
  comments: "A full URL, or a path when the connection has a Base URL.",
  example: "https://api.example.com/v1/items",
  placeholder: "https://api.example.com/v1/items",
  clean: (value: unknown): string => {
    const textValue = parseOptionalText(value);
    if (!textValue) throw new ThrottleInputError("Invalid URL: it is empty. Enter a full URL such as https://api.example.com/items, or a path with a connection that has a Base URL.");
    return textValue;
  },
});

/**
 * The URL as the client will resolve it (absolute, or the connection's Base URL + a path), checked
 * here so that the designer's error names the URL input. Known secrets are removed from the echo.
 */
export function checkUrl(url: string, auth: { baseUrl?: string; secrets: readonly string[] }): void {
  const redact = createRedactor(auth.secrets).text;
  const absolute = /^https?:\/\//i.test(url);
  if (!absolute && !auth.baseUrl) {
    throw new ThrottleInputError(`Invalid URL "${redact(url).slice(0, 200)}": it is not a full http(s) URL and the connection has no Base URL. Enter a full URL such as https://api.example.com/items, or pick a connection with a Base URL.`);
  }
  const full = absolute || !auth.baseUrl ? url : `${auth.baseUrl.replace(/\/+$/, "")}/${url.replace(/^\/+/, "")}`;
  if (!URL.canParse(full) || !["http:", "https:"].includes(new URL(full).protocol)) {
    throw new ThrottleInputError(`Invalid URL "${redact(full).slice(0, 200)}": it cannot be read as an http(s) URL. Enter a full URL such as https://api.example.com/items, or a path with a connection that has a Base URL.`);
  }
}

export const requestInputs = {
  url: urlInput,
  method: input({
    label: "Method",
    type: "string",
    required: true,
    default: "GET",
    model: METHOD_CHOICES.map((m) => ({ label: m, value: m })),
    comments: "The HTTP method. GET, HEAD, OPTIONS, PUT and DELETE are retried freely; POST and PATCH only when it is safe (see Retry Writes After a Throttle and Idempotency Key).",
    clean: (value: unknown) => parseChoice("Method", value, METHOD_CHOICES, "GET"),
  }),
  data: input({
    label: "Data",
    type: "code",
    language: "json",
    required: false,
    comments: "The request body: JSON, or text. Leave it blank when you send Form Data or File Data.",
    example: '{"name": "Widget", "quantity": 2}',
    placeholder: '{"name": "Widget"}',
    clean: (value: unknown) => parseJsonish("Data", value),
  }),
  formData: input({
    label: "Form Data",
    type: "string",
    collection: "keyvaluelist",
    required: false,
    comments: "Fields sent as a multipart/form-data body (together with File Data). Not with Data.",
    example: "description: A red widget",
    placeholder: "Field name",
    clean: (value: unknown) => parseKeyValueEntries("Form Data", value),
  }),
  fileData: input({
    label: "File Data",
    type: "string",
    collection: "keyvaluelist",
    required: false,
    comments: "Files sent in the multipart/form-data body: the key is the form field, the value the file's contents (text, or a file from a previous step). The file name is the key unless File Data File Names gives one. Not with Data.",
    example: "attachment: (the file from a previous step)",
    placeholder: "Form field of the file",
    clean: (value: unknown) => parseKeyValueEntries("File Data", value),
  }),
  fileDataFileNames: input({
    label: "File Data File Names",
    type: "string",
    collection: "keyvaluelist",
    required: false,
    comments: "The file name to send for a File Data entry: the key is the same key as in File Data, the value the file name.",
    example: "attachment: report.pdf",
    placeholder: "Same key as in File Data",
    clean: (value: unknown) => parseKeyValues("File Data File Names", value),
  }),
  queryParams: input({
    label: "Query Parameters",
    type: "string",
    collection: "keyvaluelist",
    required: false,
    comments: "Added to the URL as ?key=value. Their values never appear in the step's log.",
    example: "limit: 100",
    placeholder: "Parameter name",
    clean: (value: unknown) => parseKeyValues("Query Parameters", value),
  }),
  headers: input({
    label: "Headers",
    type: "string",
    collection: "keyvaluelist",
    required: false,
    comments: "Sent on every attempt. Credential headers (Authorization, API keys, cookies) are never logged or returned.",
    example: "Accept: application/json",
    placeholder: "Header name",
    clean: (value: unknown) => parseKeyValues("Headers", value),
  }),
  responseType: input({
    label: "Response Type",
    type: "string",
    required: false,
    default: "json",
    model: [
      { label: "JSON (parsed)", value: "json" },
      { label: "Text", value: "text" },
      { label: "Binary (arraybuffer), for files", value: "arraybuffer" },
    ],
    comments: "How to read the response body.",
    clean: (value: unknown) => parseChoice("Response Type", value, RESPONSE_TYPES, "json"),
  }),
  idempotencyKey: input({
    label: "Idempotency Key",
    type: "string",
    required: false,
    comments:
      "Optional: a value unique to this write, e.g. the order id. It is sent as the Idempotency-Key header (PayPal-Request-Id for PayPal, the header it reads), the same on every attempt, so an API that supports it (Stripe, PayPal, and others that document the header) can tell a retry from a new request. With it, a POST or PATCH is also retried after a timeout, a dropped connection or a 5xx. For Stripe and PayPal one is generated when this is blank.",
    example: "order-1042",
    placeholder: "order-1042",
    clean: parseOptionalText,
  }),
};

/** Every request input, parsed and checked (idempotent: safe on values clean already produced). */
export function parseRequest(params: Record<string, unknown>) {
  const data = parseJsonish("Data", params.data);
  const formData = parseKeyValueEntries("Form Data", params.formData);
  const fileData = parseKeyValueEntries("File Data", params.fileData);
  if (data !== undefined && (formData.length > 0 || fileData.length > 0)) {
    throw new ThrottleInputError("Invalid Data: fill in either Data, or Form Data / File Data (a multipart upload), not both. Clear the one you do not need.");
  }
  return {
    url: urlInput.clean(params.url),
    method: parseChoice("Method", params.method, METHOD_CHOICES, "GET"),
    data,
    formData,
    fileData,
    fileDataFileNames: parseKeyValues("File Data File Names", params.fileDataFileNames),
    queryParams: parseKeyValues("Query Parameters", params.queryParams),
    headers: parseKeyValues("Headers", params.headers),
    responseType: parseChoice("Response Type", params.responseType, RESPONSE_TYPES, "json"),
    idempotencyKey: parseOptionalText(params.idempotencyKey),
  };
}
export type ParsedRequest = ReturnType<typeof parseRequest>;

// ---------------------------------------------------------------------------------------------
// Policy inputs: how to wait, retry and defer. One parser, parsePolicy, for every action that
// sends requests (Send Request now, Send Batch next), so they mean the same thing everywhere.

const TIMEOUT: NumberSpec = { label: "Timeout (seconds)", fallback: 30, min: 0.1, max: 900 };
const MAX_ATTEMPTS: NumberSpec = { label: "Max Attempts", fallback: DEFAULT_POLICY.maxAttempts, min: 1, max: 20 };
const MAX_INLINE_WAIT: NumberSpec = { label: "Max Inline Wait (seconds)", fallback: DEFAULT_POLICY.maxInlineWaitMs / 1000, min: 0, max: 840 };
const MAX_TOTAL: NumberSpec = { label: "Max Total (seconds)", fallback: DEFAULT_POLICY.maxTotalMs / 1000, min: 1, max: 900 };
const BACKOFF_BASE: NumberSpec = { label: "Backoff Base (seconds)", fallback: 0.5, min: 0.001, max: 600 };
const BACKOFF_CAP: NumberSpec = { label: "Backoff Cap (seconds)", fallback: 30, min: 0.001, max: 840 };
const BUDGET_THRESHOLD: NumberSpec = { label: "Budget Threshold", fallback: 0, min: 0, max: 1_000_000 };
const BREAKER_THRESHOLD: NumberSpec = { label: "Breaker Threshold", fallback: 3, min: 1, max: 100 };
const JITTER_CHOICES: readonly JitterKind[] = ["full", "equal", "decorrelated", "none"];
const ON_LONG_WAIT_CHOICES: readonly OnLongWaitInput[] = ["fail", "defer", "respond"];
const RETRY_WRITES_LABEL = "Retry Writes After a Throttle";

function secondsInput(spec: NumberSpec, comments: string, example: string) {
  return input({ label: spec.label, type: "string", required: false, default: String(spec.fallback), comments, example, placeholder: String(spec.fallback), clean: (value: unknown) => parseSeconds(spec, value) });
}

function wholeInput(spec: NumberSpec, comments: string, example: string) {
  return input({ label: spec.label, type: "string", required: false, default: String(spec.fallback), comments, example, placeholder: String(spec.fallback), clean: (value: unknown) => parseWhole(spec, value) });
}

export const policyInputs = {
  provider: input({
    label: "Provider",
    type: "string",
    required: false,
    default: "auto",
    model: PROVIDER_MODEL,
    comments: "Which API's rate-limit rules to read (its headers, error bodies and documented waits). Automatic picks them by the URL's host; choose one for a proxy or a custom domain.",
    clean: parseProvider,
  }),
  timeoutSeconds: secondsInput(
    TIMEOUT,
    "How long to wait for each attempt's answer (per attempt; the whole step is limited by Max Total). Decimals are allowed, e.g. 2.5. A read that times out is retried; a POST or PATCH only with an Idempotency Key.",
    "30",
  ),
  maxAttempts: wholeInput(MAX_ATTEMPTS, "Calls this step may make, the first one included (1 to 20).", String(DEFAULT_POLICY.maxAttempts)),
  maxInlineWaitSeconds: secondsInput(
    MAX_INLINE_WAIT,
    "The longest wait the API imposes (a Retry-After, a backoff after its throttles) that this step sleeps through before calling again. When the API asks for a longer wait, On Long Wait decides what happens. A turn the governor paces (the budget spent by the requests ahead) waits up to Max Total instead. Never past Prismatic's 15-minute execution limit.",
    String(DEFAULT_POLICY.maxInlineWaitMs / 1000),
  ),
  maxTotalSeconds: secondsInput(MAX_TOTAL, "The whole step's time budget, calls and waits included (1 to 900). A wait that would end after it goes to On Long Wait.", String(DEFAULT_POLICY.maxTotalMs / 1000)),
  onLongWait: input({
    label: "On Long Wait",
    type: "string",
    required: false,
    default: "fail",
    model: [
      { label: "Fail the step (Flow retry runs the flow again later)", value: "fail" },
      { label: "Take the Deferred branch and save the not_before", value: "defer" },
      { label: "Respond to a synchronous caller with 429 and Retry-After", value: "respond" },
    ],
    comments: `What to do when the API asks for a wait longer than Max Inline Wait. ${NOT_BEFORE_MEANS} Fail: the execution fails and the trigger's Flow retry runs it again later. Defer: the step succeeds on its Deferred branch and saves the not_before, so later executions wait for it without calling. Respond: as Defer, and a synchronous caller gets 429 with Retry-After.`,
    clean: (value: unknown) => parseChoice("On Long Wait", value, ON_LONG_WAIT_CHOICES, "fail"),
  }),
  retryWritesAfterThrottle: input({
    label: RETRY_WRITES_LABEL,
    type: "boolean",
    required: false,
    default: "true",
    comments:
      "A 429 (or another throttle answer) means the API refused the request without doing it, so repeating a POST or PATCH after the wait is safe. Timeouts, dropped connections and 5xx errors stay unsafe: the write may have happened, so they are retried only with an Idempotency Key. Turn this off for an API that may act on a request it answers with 429.",
    clean: (value: unknown) => parseBoolean(RETRY_WRITES_LABEL, value, true),
  }),
  jitter: input({
    label: "Jitter",
    type: "string",
    required: false,
    default: DEFAULT_POLICY.jitter,
    model: [
      { label: "Equal: half the backoff plus a random half", value: "equal" },
      { label: "Full: a random wait up to the backoff", value: "full" },
      { label: "Decorrelated: random, grows from the last wait", value: "decorrelated" },
      { label: "None: exactly the backoff", value: "none" },
    ],
    comments: "Randomness added to the backoff used when the API names no wait, so that many steps do not call again at the same instant. A wait the API asks for is always taken in full; a little jitter only goes on top.",
    clean: (value: unknown) => parseChoice("Jitter", value, JITTER_CHOICES, DEFAULT_POLICY.jitter),
  }),
  backoffBaseSeconds: secondsInput(BACKOFF_BASE, "The first backoff wait after a throttle when the API names no wait (a 5xx that names no wait waits a fifth of it); it doubles on each retry up to Backoff Cap. Decimals are allowed, e.g. 0.5.", "0.5"),
  backoffCapSeconds: secondsInput(BACKOFF_CAP, "The longest backoff wait when the API names none (at least Backoff Base).", "30"),
  budgetThreshold: wholeInput(
    BUDGET_THRESHOLD,
    "Requests (or points) of the API's budget to leave untouched, for callers this step's store cannot see. Usually leave it at 0: the governor learns what others spend from the API's own counts. Set it to keep a fixed margin, e.g. for another system that calls the same API with the same key.",
    "0",
  ),
  breakerThreshold: wholeInput(
    BREAKER_THRESHOLD,
    "Throttles in a row that open the scope's breaker. While the breaker is open, no request goes out before the not_before; then a single probe (one trial request) goes first and the others wait for its answer.",
    "3",
  ),
  scopeKey: input({
    label: "Scope Key",
    type: "string",
    required: false,
    comments: `Optional. ${SCOPE_MEANS} Steps that share a scope wait for each other. Enter a name to share one scope across hosts or connections, and use the same Scope Key in Check, Record and Clear Backoff.`,
    example: "hubspot-portal-123",
    placeholder: "Blank: provider + host + credential hash",
    clean: parseOptionalText,
  }),
};

/** Every policy input, parsed and checked; times in ms for the client. */
export function parsePolicy(params: Record<string, unknown>) {
  const backoffBaseSeconds = parseSeconds(BACKOFF_BASE, params.backoffBaseSeconds);
  const backoffCapSeconds = parseSeconds(BACKOFF_CAP, params.backoffCapSeconds);
  if (backoffCapSeconds < backoffBaseSeconds) {
    throw new ThrottleInputError(`Invalid ${BACKOFF_CAP.label}: ${backoffCapSeconds} is below ${BACKOFF_BASE.label} ${backoffBaseSeconds}. Make the cap at least the base.`);
  }
  const toMs = (seconds: number) => Math.round(seconds * 1000);
  return {
    provider: parseProvider(params.provider),
    timeoutMs: toMs(parseSeconds(TIMEOUT, params.timeoutSeconds)),
    maxAttempts: parseWhole(MAX_ATTEMPTS, params.maxAttempts),
    maxInlineWaitMs: toMs(parseSeconds(MAX_INLINE_WAIT, params.maxInlineWaitSeconds)),
    maxTotalMs: toMs(parseSeconds(MAX_TOTAL, params.maxTotalSeconds)),
    onLongWait: parseChoice("On Long Wait", params.onLongWait, ON_LONG_WAIT_CHOICES, "fail"),
    retryWritesAfterThrottle: parseBoolean(RETRY_WRITES_LABEL, params.retryWritesAfterThrottle, true),
    jitter: parseChoice("Jitter", params.jitter, JITTER_CHOICES, DEFAULT_POLICY.jitter),
    backoffBaseMs: toMs(backoffBaseSeconds),
    backoffCapMs: toMs(backoffCapSeconds),
    budgetThreshold: parseWhole(BUDGET_THRESHOLD, params.budgetThreshold),
    breakerThreshold: parseWhole(BREAKER_THRESHOLD, params.breakerThreshold),
    scopeKey: parseOptionalText(params.scopeKey),
  };
}
export type StepPolicy = ReturnType<typeof parsePolicy>;

const DEBUG_LABEL = "Debug Request";

export const debugRequestInput = input({
  label: DEBUG_LABEL,
  type: "boolean",
  required: false,
  default: "false",
  comments:
    "Log the request (method, URL, headers, body) and the final response (status, headers, body) in the step's log. Credentials are never logged: credential headers show [redacted], query values are left out, and the connection's secrets are removed everywhere.",
  clean: (value: unknown) => parseBoolean(DEBUG_LABEL, value, false),
});

export function parseDebugRequest(params: Record<string, unknown>): boolean {
  return parseBoolean(DEBUG_LABEL, params.debugRequest, false);
}

/** Send Request: the connection, one request, the policy, and Debug Request (the designer shows them in this order). */
export const sendRequestInputs = { connection: connectionInput, ...requestInputs, ...policyInputs, sharedStore: sharedStoreInput, debugRequest: debugRequestInput };

// ---------------------------------------------------------------------------------------------
// Scope inputs: which scope Check, Record and Clear Backoff act on.

export const scopeInputs = {
  connection: input({
    label: "Connection",
    type: "connection",
    required: false,
    comments: `Use the same connection as the Send Request steps this step works with. ${SCOPE_MEANS} With no connection, or another one, this step acts on a different scope than those steps. Not needed with a Scope Key.`,
  }),
  url: input({
    label: URL_LABEL,
    type: "string",
    required: false,
    comments: "Any URL of the API, e.g. the one the Send Request step calls: its host names the scope. Not needed with a Scope Key.",
    example: "https://api.example.com/v1/items",
    placeholder: "https://api.example.com",
    clean: parseOptionalText,
  }),
  provider: policyInputs.provider,
  scopeKey: policyInputs.scopeKey,
  sharedStore: sharedStoreInput,
};

export function parseScope(params: Record<string, unknown>) {
  const url = parseOptionalText(params.url);
  const scopeKey = parseOptionalText(params.scopeKey);
  if (!url && !scopeKey) throw new ThrottleInputError("Missing URL: enter any URL of the API (its host names the scope), or a Scope Key.");
  return { url, scopeKey, provider: parseProvider(params.provider) };
}

// ---------------------------------------------------------------------------------------------
// Batch inputs: Send Batch's list of requests and its park queue, Take Parked Items' queue.

const REQUESTS_LABEL = "Requests";
/** A batch larger than this would not finish inside one 15-minute execution at any API's pace worth throttling. */
export const MAX_BATCH_ITEMS = 10_000;
/** What an item may hold; notBefore and reason are what a parked item carries back, and are ignored. */
const BATCH_ITEM_KEYS = ["id", "method", "url", "data", "headers", "queryParams", "idempotencyKey", "notBefore", "reason"];
const CONCURRENCY: NumberSpec = { label: "Concurrency", fallback: 4, min: 1, max: 32 };
const PARK_QUEUE_LABEL = "Park Queue";
const MAX_ITEMS: NumberSpec = { label: "Max Items", fallback: 1000, min: 1, max: MAX_BATCH_ITEMS };

export type BatchMethod = (typeof METHOD_CHOICES)[number];

/** One request of a batch, checked. */
export interface BatchItem {
  /** Its place in the list, from 0. */
  index: number;
  /** The caller's id, or the index when it has none. */
  id: string | number;
  method: BatchMethod;
  url: string;
  data?: unknown;
  headers: Record<string, string>;
  queryParams: Record<string, string>;
  idempotencyKey?: string;
  /** The request object as given (what a deferred item hands back and a park queue keeps), without notBefore and reason. */
  given: Record<string, unknown>;
}

/** How an error names an item: its index, and its id when it has one. */
export function batchItemName(index: number, id: unknown): string {
  return `the item at index ${index}${typeof id === "string" || typeof id === "number" ? ` (id ${JSON.stringify(id)})` : ""}`;
}

function batchError(where: string, problem: string): ThrottleInputError {
  return new ThrottleInputError(`Invalid ${REQUESTS_LABEL}: ${where} ${problem}`);
}

/** The Requests input as an array: the list itself, or JSON text holding one. */
function batchList(value: unknown): unknown[] {
  const example = 'e.g. [{"method": "GET", "url": "/contacts/1"}]';
  if (blank(value)) throw batchError("it is", `empty. Give a JSON array of requests, ${example}, or a list from a previous step.`);
  let list = value;
  if (typeof value === "string") {
    try {
      list = JSON.parse(value) as unknown;
    } catch {
      throw batchError("it", `is not JSON. Give a JSON array of requests, ${example}, or reference a list from a previous step.`);
    }
  }
  if (!Array.isArray(list)) throw batchError("it is", `${list === null ? "null" : typeof list === "object" ? "an object" : `a ${typeof list}`}, not a list. Give an array of requests, ${example} (for Take Parked Items' result, its items).`);
  if (list.length > MAX_BATCH_ITEMS) throw batchError("it has", `${list.length} requests, more than ${MAX_BATCH_ITEMS}. Split the list and send it in several batches.`);
  return list;
}

function batchStringMap(where: string, key: string, value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw batchError(where, `has ${key} that is not an object. Give ${key} as {"name": "value"}.`);
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (!["string", "number", "boolean"].includes(typeof v)) throw batchError(where, `has ${key}.${name} that is not text or a number. Give each value as text.`);
    out[name] = String(v);
  }
  return out;
}

function batchItem(raw: unknown, index: number): BatchItem {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw batchError(batchItemName(index, undefined), `is not a request object. Give each item as {"method": "GET", "url": "/contacts/1"}.`);
  const item = raw as Record<string, unknown>;
  const where = batchItemName(index, item.id);
  const unknownKey = Object.keys(item).find((key) => !BATCH_ITEM_KEYS.includes(key));
  if (unknownKey !== undefined) throw batchError(where, `has an unknown key "${unknownKey.slice(0, 40)}". An item may hold ${BATCH_ITEM_KEYS.slice(0, 7).join(", ")}.`);
  if (item.id !== undefined && item.id !== null && typeof item.id !== "string" && !(typeof item.id === "number" && Number.isFinite(item.id))) throw batchError(where, "has an id that is not text or a number.");
  if (typeof item.url !== "string" || item.url.trim() === "") throw batchError(where, "has no url. Give each request a url: a full URL, or a path with a connection that has a Base URL.");
  const methodText = item.method === undefined || item.method === null ? "GET" : String(item.method).trim().toUpperCase();
  const method = METHOD_CHOICES.find((m) => m === methodText);
  if (!method) throw batchError(where, `has an invalid method "${shown(item.method)}". Use one of: ${METHOD_CHOICES.join(", ")}.`);
  const key = item.idempotencyKey;
  if (key !== undefined && key !== null && typeof key !== "string" && typeof key !== "number") throw batchError(where, "has an idempotencyKey that is not text. Give a value unique to this write, e.g. the order id.");
  const given = Object.fromEntries(Object.entries(item).filter(([name]) => name !== "notBefore" && name !== "reason"));
  return {
    index,
    id: typeof item.id === "string" || typeof item.id === "number" ? item.id : index,
    method,
    url: item.url.trim(),
    data: item.data ?? undefined,
    headers: batchStringMap(where, "headers", item.headers),
    queryParams: batchStringMap(where, "queryParams", item.queryParams),
    idempotencyKey: parseOptionalText(key),
    given,
  };
}

/** Every request of the Requests input, checked; the first problem is thrown in one line naming the item. */
export function parseBatchRequests(value: unknown): BatchItem[] {
  return batchList(value).map(batchItem);
}

export function parseParkQueue(value: unknown): string | undefined {
  const name = parseOptionalText(value);
  if (name !== undefined && name.length > 200) throw new ThrottleInputError(`Invalid ${PARK_QUEUE_LABEL}: the name is ${name.length} characters long. Use a short name of up to 200 characters, e.g. crm-contacts.`);
  return name;
}

const PARK_QUEUE_MEANS =
  "A park queue is a named list kept in cross-flow state (this component's own key): items that could not be sent wait there with their not_before, never dropped. It holds up to 1,000 items (and 2 MB); what does not fit comes back in the step's deferred list with a warning.";

/** Send Batch's own inputs: the requests, how many at once, and where deferred items are kept. */
export const batchInputs = {
  requests: input({
    label: REQUESTS_LABEL,
    type: "code",
    language: "json",
    required: true,
    comments:
      "A JSON array of requests, or a reference to one from a previous step or a code step. Each request: method, url (a full URL, or a path with the connection's Base URL), and optionally id (to find it in the results; the index by default), data (the body), headers, queryParams and idempotencyKey (for writes, e.g. the record's id). The connection's credentials are added to every request: do not put them in the items.",
    example: '[{"id": "c-1", "method": "POST", "url": "/contacts", "data": {"email": "ada@example.com"}, "idempotencyKey": "c-1"}]',
    placeholder: '[{"method": "GET", "url": "/contacts/1"}]',
    clean: (value: unknown) => {
      parseBatchRequests(value);
      return batchList(value);
    },
  }),
  concurrency: input({
    label: CONCURRENCY.label,
    type: "string",
    required: false,
    default: String(CONCURRENCY.fallback),
    comments:
      "How many requests may be in flight at once (1 to 32). The API's pace is kept either way: every request waits for its turn from the rate-limit scope's governor, which learns the budget from the API's answers. More in flight only helps an API that answers slowly.",
    example: "8",
    placeholder: String(CONCURRENCY.fallback),
    clean: (value: unknown) => parseWhole(CONCURRENCY, value),
  }),
  parkQueue: input({
    label: PARK_QUEUE_LABEL,
    type: "string",
    required: false,
    comments: `Optional: the name of a park queue for the items this step cannot send now (an API's long wait, or the execution's time running out). ${PARK_QUEUE_MEANS} A later execution takes them back with Take Parked Items and the same name. Blank: deferred items are only returned in the step's result.`,
    example: "crm-contacts",
    placeholder: "crm-contacts",
    clean: parseParkQueue,
  }),
};

export function parseBatch(params: Record<string, unknown>) {
  return { items: parseBatchRequests(params.requests), concurrency: parseWhole(CONCURRENCY, params.concurrency), parkQueue: parseParkQueue(params.parkQueue) };
}

/** Take Parked Items: the queue's name and how many items to take at most. */
export const takeParkedInputs = {
  parkQueue: input({
    label: PARK_QUEUE_LABEL,
    type: "string",
    required: true,
    comments: `The park queue to take items from: the same name as the Send Batch step's Park Queue. ${PARK_QUEUE_MEANS} Only items whose not_before has passed are taken; the others stay.`,
    example: "crm-contacts",
    placeholder: "crm-contacts",
    clean: (value: unknown) => {
      const name = parseParkQueue(value);
      if (!name) throw new ThrottleInputError(`Invalid ${PARK_QUEUE_LABEL}: it is empty. Enter the same name as the Send Batch step's Park Queue, e.g. crm-contacts.`);
      return name;
    },
  }),
  maxItems: input({
    label: MAX_ITEMS.label,
    type: "string",
    required: false,
    default: String(MAX_ITEMS.fallback),
    comments: `The most items to take in this step (1 to ${MAX_BATCH_ITEMS}); the rest stay in the queue for a later execution. 1000 takes everything a full queue holds.`,
    example: "200",
    placeholder: String(MAX_ITEMS.fallback),
    clean: (value: unknown) => parseWhole(MAX_ITEMS, value),
  }),
  sharedStore: sharedStoreInput,
};

export function parseTakeParked(params: Record<string, unknown>) {
  return { parkQueue: takeParkedInputs.parkQueue.clean(params.parkQueue), maxItems: parseWhole(MAX_ITEMS, params.maxItems) };
}

/**
 * The policy inputs as Send Batch uses them: the same keys, defaults and parsing (parsePolicy),
 * counted per request, less On Long Wait: a batch always defers what cannot run now (failing the
 * step would re-run the items that succeeded and throw away the list of the others).
 */
const policyInputsButOnLongWait = Object.fromEntries(Object.entries(policyInputs).filter(([key]) => key !== "onLongWait")) as Omit<typeof policyInputs, "onLongWait">;
export const batchPolicyInputs = {
  ...policyInputsButOnLongWait,
  maxAttempts: { ...policyInputs.maxAttempts, comments: "Calls each request may make, the first one included (1 to 20)." },
  maxInlineWaitSeconds: {
    ...policyInputs.maxInlineWaitSeconds,
    comments: "The longest wait a request sleeps through before calling again. When the API asks for a longer wait, that request and the rest of its scope's items are deferred at once, without calling. Never past Prismatic's 15-minute execution limit.",
  },
  maxTotalSeconds: {
    ...policyInputs.maxTotalSeconds,
    comments: "The whole batch's time budget, from the step's start (1 to 900). No request starts when it could not finish inside it (or inside the execution); those are deferred.",
  },
};

/** Send Batch: the connection, the requests and how to send them, then the policy. */
export const sendBatchInputs = { connection: connectionInput, ...batchInputs, ...batchPolicyInputs, sharedStore: sharedStoreInput };
