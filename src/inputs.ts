/**
 * Step inputs. The request inputs mirror spectral's Raw Request so the step feels familiar; the
 * policy inputs are this component's. Every parser throws one line saying what was wrong and
 * what to do: they run as `clean` in Prismatic and again in perform (testing.invoke skips clean).
 */
import { input, type KeyValuePair } from "@prismatic-io/spectral";
import { ThrottleInputError } from "./client";
import { DEFAULT_POLICY, dialects } from "./engine";

type Jitter = "full" | "equal" | "decorrelated" | "none";
export type OnLongWaitInput = "fail" | "defer" | "respond";

function blank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === "string" && value.trim() === "");
}

/** A whole number within bounds, or the default when left blank. */
export function parseWhole(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (blank(value)) return fallback;
  const textValue = String(value).trim();
  const parsed = typeof value === "number" ? value : /^-?\d+$/.test(textValue) ? Number(textValue) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
    throw new ThrottleInputError(`Invalid ${name}: "${textValue.slice(0, 40)}" is not a whole number from ${min} to ${max}. Enter digits only, e.g. ${fallback}.`);
  }
  return parsed;
}

export function parseChoice<T extends string>(name: string, value: unknown, choices: readonly T[], fallback: T): T {
  if (blank(value)) return fallback;
  const textValue = String(value).trim().toLowerCase();
  const found = choices.find((c) => c.toLowerCase() === textValue);
  if (!found) throw new ThrottleInputError(`Invalid ${name}: "${String(value).slice(0, 40)}". Use one of: ${choices.join(", ")}.`);
  return found;
}

export function parseOptionalText(value: unknown): string | undefined {
  if (blank(value)) return undefined;
  return String(value).trim();
}

/** A keyvaluelist (or an object from a reference) as a plain string map. */
export function parseKeyValues(name: string, value: unknown): Record<string, string> {
  if (blank(value)) return {};
  if (Array.isArray(value)) {
    const out: Record<string, string> = {};
    for (const item of value as KeyValuePair[]) {
      if (!item || typeof item !== "object" || typeof item.key !== "string") throw new ThrottleInputError(`Invalid ${name}: each entry needs a key and a value.`);
      if (item.key.trim() === "") continue;
      out[item.key.trim()] = typeof item.value === "string" ? item.value : JSON.stringify(item.value);
    }
    return out;
  }
  if (typeof value === "object") {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
  }
  throw new ThrottleInputError(`Invalid ${name}: expected a list of key/value pairs.`);
}

/** A JSON object given as an object or as JSON text (headers and bodies from another step). */
export function parseJsonish(name: string, value: unknown): unknown {
  if (blank(value)) return undefined;
  if (typeof value !== "string") return value;
  const trimmed = value.trim();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return value;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    throw new ThrottleInputError(`Invalid ${name}: it starts like JSON but does not parse. Fix the JSON, or pass the value from a previous step by reference.`);
  }
}

const METHOD_CHOICES = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;
const PROVIDER_CHOICES = ["auto", ...dialects.map((d) => d.id)];

export function parseProvider(value: unknown): string {
  return parseChoice("provider", value, PROVIDER_CHOICES, "auto");
}

export const connectionInput = input({ label: "Connection", type: "connection", required: false, comments: "Optional: how to authenticate, and a base URL for relative urls." });

export const urlInput = input({
  label: "URL",
  type: "string",
  required: true,
  comments: "A full URL, or a path when the connection has a base URL.",
  example: "https://api.example.com/v1/items",
  clean: (value: unknown): string => {
    const textValue = parseOptionalText(value);
    if (!textValue) throw new ThrottleInputError("Invalid url: it is empty. Enter a full URL such as https://api.example.com/items, or a path with a connection that has a base URL.");
    return textValue;
  },
});

export const sendRequestInputs = {
  connection: connectionInput,
  url: urlInput,
  method: input({
    label: "Method",
    type: "string",
    required: true,
    default: "GET",
    model: METHOD_CHOICES.map((m) => ({ label: m, value: m })),
    clean: (value: unknown) => parseChoice("method", value, METHOD_CHOICES, "GET"),
  }),
  data: input({ label: "Data", type: "code", language: "json", required: false, comments: "The request body: JSON, or text.", clean: (value: unknown) => parseJsonish("data", value) }),
  queryParams: input({ label: "Query Parameters", type: "string", collection: "keyvaluelist", required: false, clean: (value: unknown) => parseKeyValues("queryParams", value) }),
  headers: input({ label: "Headers", type: "string", collection: "keyvaluelist", required: false, clean: (value: unknown) => parseKeyValues("headers", value) }),
  responseType: input({
    label: "Response Type",
    type: "string",
    required: false,
    default: "json",
    model: ["json", "text", "arraybuffer"].map((v) => ({ label: v, value: v })),
    clean: (value: unknown) => parseChoice("responseType", value, ["json", "text", "arraybuffer"] as const, "json"),
  }),
  timeout: input({ label: "Timeout (ms)", type: "string", required: false, comments: "Per attempt; blank for none.", clean: (value: unknown) => (blank(value) ? undefined : parseWhole("timeout", value, 30_000, 1, 900_000)) }),
  provider: input({
    label: "Provider",
    type: "string",
    required: false,
    default: "auto",
    model: PROVIDER_CHOICES.map((p) => ({ label: p, value: p })),
    comments: "Which API's rate-limit rules to read; auto picks by host.",
    clean: (value: unknown) => parseChoice("provider", value, PROVIDER_CHOICES, "auto"),
  }),
  maxAttempts: input({ label: "Max Attempts", type: "string", required: false, default: "5", comments: "Calls in this step, the first included.", clean: (value: unknown) => parseWhole("maxAttempts", value, 5, 1, 20) }),
  maxInlineWaitSeconds: input({
    label: "Max Inline Wait (seconds)",
    type: "string",
    required: false,
    default: String(DEFAULT_POLICY.maxInlineWaitMs / 1000),
    comments: "The longest wait this step sleeps through; a longer one goes to onLongWait. Never past the 15-minute execution limit.",
    clean: (value: unknown) => parseWhole("maxInlineWaitSeconds", value, DEFAULT_POLICY.maxInlineWaitMs / 1000, 0, 840),
  }),
  maxTotalSeconds: input({ label: "Max Total (seconds)", type: "string", required: false, default: "600", comments: "The step's whole budget, waits included.", clean: (value: unknown) => parseWhole("maxTotalSeconds", value, 600, 1, 900) }),
  onLongWait: input({
    label: "On Long Wait",
    type: "string",
    required: false,
    default: "fail",
    model: [
      { label: "fail: throw, let Flow retry re-run later", value: "fail" },
      { label: "defer: take the Deferred branch and save not_before", value: "defer" },
      { label: "respond: answer a synchronous caller with 429 + Retry-After", value: "respond" },
    ],
    clean: (value: unknown) => parseChoice<OnLongWaitInput>("onLongWait", value, ["fail", "defer", "respond"], "fail"),
  }),
  jitter: input({
    label: "Jitter",
    type: "string",
    required: false,
    default: DEFAULT_POLICY.jitter,
    model: ["full", "equal", "decorrelated", "none"].map((v) => ({ label: v, value: v })),
    clean: (value: unknown) => parseChoice<Jitter>("jitter", value, ["full", "equal", "decorrelated", "none"], DEFAULT_POLICY.jitter),
  }),
  backoffBaseMs: input({ label: "Backoff Base (ms)", type: "string", required: false, default: "500", clean: (value: unknown) => parseWhole("backoffBaseMs", value, 500, 1, 600_000) }),
  backoffCapMs: input({ label: "Backoff Cap (ms)", type: "string", required: false, default: "30000", clean: (value: unknown) => parseWhole("backoffCapMs", value, 30_000, 1, 840_000) }),
  idempotencyKey: input({ label: "Idempotency Key", type: "string", required: false, comments: "Makes a POST/PATCH safe to retry; sent as Idempotency-Key on every attempt.", clean: parseOptionalText }),
  budgetThreshold: input({ label: "Budget Threshold", type: "string", required: false, default: "0", comments: "A success showing this many or fewer requests left records a not_before at the reset.", clean: (value: unknown) => parseWhole("budgetThreshold", value, 0, 0, 1_000_000) }),
  breakerThreshold: input({ label: "Breaker Threshold", type: "string", required: false, default: "3", comments: "Throttles in a row that close the scope until its not_before (then one probe).", clean: (value: unknown) => parseWhole("breakerThreshold", value, 3, 1, 100) }),
  scopeKey: input({ label: "Scope Key", type: "string", required: false, comments: "Overrides the ledger scope (default: provider + host + credential hash).", clean: parseOptionalText }),
};

/** Inputs naming a scope, for checkBackoff / recordBackoff / clearBackoff. */
export const scopeInputs = {
  connection: connectionInput,
  url: input({ label: "URL", type: "string", required: false, comments: "Any URL of the API (its host names the scope). Not needed with a Scope Key.", clean: parseOptionalText }),
  provider: sendRequestInputs.provider,
  scopeKey: sendRequestInputs.scopeKey,
};

/** Every sendRequest input, parsed and checked (idempotent: safe on values clean already produced). */
export function parseSendRequest(params: Record<string, unknown>) {
  const url = urlInput.clean(params.url);
  const backoffBaseMs = parseWhole("backoffBaseMs", params.backoffBaseMs, 500, 1, 600_000);
  const backoffCapMs = parseWhole("backoffCapMs", params.backoffCapMs, 30_000, 1, 840_000);
  if (backoffCapMs < backoffBaseMs) {
    throw new ThrottleInputError(`Invalid backoffCapMs: ${backoffCapMs} is below backoffBaseMs ${backoffBaseMs}. Make the cap at least the base.`);
  }
  return {
    url,
    method: parseChoice("method", params.method, METHOD_CHOICES, "GET"),
    data: parseJsonish("data", params.data),
    queryParams: parseKeyValues("queryParams", params.queryParams),
    headers: parseKeyValues("headers", params.headers),
    responseType: parseChoice("responseType", params.responseType, ["json", "text", "arraybuffer"] as const, "json"),
    timeoutMs: blank(params.timeout) ? undefined : parseWhole("timeout", params.timeout, 30_000, 1, 900_000),
    provider: parseChoice("provider", params.provider, PROVIDER_CHOICES, "auto"),
    maxAttempts: parseWhole("maxAttempts", params.maxAttempts, 5, 1, 20),
    maxInlineWaitSeconds: parseWhole("maxInlineWaitSeconds", params.maxInlineWaitSeconds, DEFAULT_POLICY.maxInlineWaitMs / 1000, 0, 840),
    maxTotalSeconds: parseWhole("maxTotalSeconds", params.maxTotalSeconds, 600, 1, 900),
    onLongWait: parseChoice<OnLongWaitInput>("onLongWait", params.onLongWait, ["fail", "defer", "respond"], "fail"),
    jitter: parseChoice<Jitter>("jitter", params.jitter, ["full", "equal", "decorrelated", "none"], DEFAULT_POLICY.jitter),
    backoffBaseMs,
    backoffCapMs,
    idempotencyKey: parseOptionalText(params.idempotencyKey),
    budgetThreshold: parseWhole("budgetThreshold", params.budgetThreshold, 0, 0, 1_000_000),
    breakerThreshold: parseWhole("breakerThreshold", params.breakerThreshold, 3, 1, 100),
    scopeKey: parseOptionalText(params.scopeKey),
  };
}

export function parseScope(params: Record<string, unknown>) {
  const url = parseOptionalText(params.url);
  const scopeKey = parseOptionalText(params.scopeKey);
  if (!url && !scopeKey) throw new ThrottleInputError("Missing url: give any URL of the API (its host names the scope), or a Scope Key.");
  return { url, scopeKey, provider: parseChoice("provider", params.provider, PROVIDER_CHOICES, "auto") };
}
