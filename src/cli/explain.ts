/**
 * `explain`: for a person with a throttled response in hand. Reads one JSON object or an array
 * of them in classify's input shape ({ request: { method, url, headers?, idempotencyKey?, body? },
 * response: { status, headers, body }, provider?, name? }) from a file or standard input, and
 * prints each verdict with the decision the client would make for a first attempt under the
 * default policy: the same plan, then the same write-safety rule (a POST after a 429 is retried,
 * a POST after a 503 without a key is not).
 */
import { readFileSync } from "node:fs";
import { isatty } from "node:tty";
import { parseArgs } from "node:util";
import { applyWriteSafety, classify, DEFAULT_POLICY, looksLikeRawResponse, parseRawResponse, plan, writeRetrySafety } from "../engine";
import type { ClassifyInput, Decision, HeaderInput, Verdict, WriteSafety } from "../engine";

export class UsageError extends Error {}

export const EXPLAIN_USAGE =
  "usage: explain [--now ISO-8601] [--no-retry-writes-after-throttle] [--url URL] [--method METHOD] [--provider ID] [FILE]  (reads standard input when FILE is absent or -)";

export const EXPLAIN_HELP = `${EXPLAIN_USAGE}

Reads one response and prints what it means and what the client will do. The response is either
pasted as it came (what \`curl -i\` prints: the status line, the headers, an empty line, the body;
with several responses in the paste, as after a redirect or a 100 Continue, the last one is read):

  HTTP/1.1 429 Too Many Requests
  Retry-After: 30
  X-RateLimit-Remaining: 0

  {"message": "API rate limit exceeded"}

or one JSON object, or a JSON array of them, each:
  {
    "name": "optional label, carried to the output",
    "request":  { "method": "POST", "url": "https://api.github.com/repos/o/r/issues",
                  "idempotencyKey": "optional", "headers": { }, "body": "optional (GraphQL bodies are read)" },
    "response": { "status": 429, "headers": { "Retry-After": "30" }, "body": { } },
    "provider": "optional dialect id, e.g. github"
  }

Options:
  --now ISO-8601                      the clock to explain at (default: now)
  --url URL                           with a pasted response: the URL that was called (its host picks the provider's rules)
  --method METHOD                     with a pasted response: the method that was used (default GET)
  --provider ID                       with a pasted response: a dialect id, e.g. github (default: by the URL's host)
  --no-retry-writes-after-throttle    do not repeat a POST/PATCH after a throttle (the client's retryWritesAfterThrottle: false)
  -h, --help                          this text
`;

/** Shown on stderr when explain waits on a terminal, so it never waits silently. */
export const TERMINAL_HINT = "explain: reading from the terminal; paste a response (as curl -i prints it, or JSON) and press Ctrl-D, or give a FILE (explain --help)";

/** An explain input row: classify's input plus what the write-safety rule reads, and a label. */
export interface ExplainInput extends ClassifyInput {
  request?: { method?: string; url?: string; headers?: HeaderInput; idempotencyKey?: string; body?: unknown };
  name?: string;
  id?: string | number;
}

export interface ExplainOptions {
  /** As the client option: repeat a write after a throttle rejection. Default true. */
  retryWritesAfterThrottle?: boolean;
}

export interface ExplainedResponse extends Verdict {
  name?: string;
  id?: string | number;
  /** Whether the request may be sent again after this answer (the client's rule). */
  writeSafety: WriteSafety;
  /** The client's decision for a first attempt under the default policy; jitter taken at its midpoint. */
  plan: Decision & { waitRangeMs?: [number, number] };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

function validateRequest(request: unknown, label: string): void {
  if (request === undefined) return;
  if (!isObject(request)) throw new UsageError(`${label}: request must be an object like {"method":"GET","url":"https://..."}, got ${describe(request)}`);
  for (const key of ["method", "url", "idempotencyKey"] as const) {
    if (request[key] !== undefined && typeof request[key] !== "string") throw new UsageError(`${label}: request.${key} must be text, got ${describe(request[key])}`);
  }
  if (request.headers !== undefined && !isObject(request.headers)) {
    throw new UsageError(`${label}: request.headers must be an object of header names to values, got ${describe(request.headers)}`);
  }
}

/** Checks one input; throws a UsageError with a one-line message saying what to fix. */
export function validateInput(value: unknown, label: string): ExplainInput {
  if (!isObject(value)) {
    throw new UsageError(`${label} is ${describe(value)}; expected an object like {"request":{"method":"GET","url":"https://..."},"response":{"status":429,"headers":{}}}`);
  }
  const response = value.response;
  if (!isObject(response)) throw new UsageError(`${label} has no "response" object; add {"response":{"status":429,"headers":{...},"body":...}}`);
  const status = response.status;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new UsageError(`${label}: response.status must be a number from 100 to 599, got ${JSON.stringify(status) ?? "nothing"}`);
  }
  if (response.headers !== undefined && !isObject(response.headers)) {
    throw new UsageError(`${label}: response.headers must be an object of header names to values, got ${describe(response.headers)}`);
  }
  validateRequest(value.request, label);
  if (value.provider !== undefined && typeof value.provider !== "string") {
    throw new UsageError(`${label}: provider must be a dialect id such as "github", got ${describe(value.provider)}`);
  }
  return value as unknown as ExplainInput;
}

/** The label a row carries into the output: its name, else its id (fixture rows have one or both). */
function labelsOf(input: ExplainInput): Pick<ExplainedResponse, "name" | "id"> {
  const labels: Pick<ExplainedResponse, "name" | "id"> = {};
  if (typeof input.name === "string") labels.name = input.name;
  if (typeof input.id === "string" || typeof input.id === "number") labels.id = input.id;
  return labels;
}

export function explainOne(input: ExplainInput, nowMs: number, options: ExplainOptions = {}): ExplainedResponse {
  const verdict = classify(input, { nowMs });
  const request = input.request ?? {};
  const writeSafety = writeRetrySafety(
    { method: request.method ?? "GET", idempotencyKey: request.idempotencyKey, headers: request.headers, body: request.body },
    verdict,
    { retryWritesAfterThrottle: options.retryWritesAfterThrottle },
  );
  const history = { attempts: 1, firstAttemptAtMs: nowMs };
  const at = (random: number): Decision => applyWriteSafety(plan(verdict, history, DEFAULT_POLICY, { nowMs, random: () => random }), writeSafety);
  const decision: ExplainedResponse["plan"] = at(0.5);
  if (decision.decision === "retry") {
    const low = at(0);
    const high = at(0.999999);
    if (low.decision === "retry" && high.decision === "retry") decision.waitRangeMs = [low.waitMs, high.waitMs];
  }
  return { ...labelsOf(input), ...verdict, writeSafety, plan: decision };
}

/** What a pasted response does not say: the request it answered, and whose rules to read it by. */
interface RawRequestFlags {
  url?: string;
  method?: string;
  provider?: string;
}

interface ParsedArgs {
  help: boolean;
  nowMs: number;
  file: string | undefined;
  retryWritesAfterThrottle: boolean;
  raw: RawRequestFlags;
}

function parseExplainArgs(args: readonly string[], defaultNowMs: number): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: {
        now: { type: "string" },
        help: { type: "boolean", short: "h" },
        "no-retry-writes-after-throttle": { type: "boolean" },
        url: { type: "string" },
        method: { type: "string" },
        provider: { type: "string" },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}; ${EXPLAIN_USAGE}`);
  }
  const help = parsed.values.help === true;
  if (!help && parsed.positionals.length > 1) throw new UsageError(`give at most one FILE, got ${parsed.positionals.length}; ${EXPLAIN_USAGE}`);
  let nowMs = defaultNowMs;
  if (parsed.values.now !== undefined) {
    nowMs = Date.parse(parsed.values.now);
    if (!Number.isFinite(nowMs)) throw new UsageError(`--now "${parsed.values.now}" is not an ISO 8601 time; use e.g. --now 2026-11-30T12:00:00Z`);
  }
  const file = parsed.positionals[0];
  const { url, method, provider } = parsed.values;
  if (url !== undefined && !URL.canParse(url)) throw new UsageError(`--url "${url}" is not a URL; use e.g. --url https://api.github.com/repos/o/r/issues`);
  const raw: RawRequestFlags = { url, method: method?.toUpperCase(), provider };
  return { help, nowMs, file: file === "-" ? undefined : file, retryWritesAfterThrottle: parsed.values["no-retry-writes-after-throttle"] !== true, raw };
}

/** A pasted response as explain's input, with the request the flags name. */
function pastedInput(text: string, raw: RawRequestFlags, what: string): ExplainInput {
  const response = parseRawResponse(text);
  if ("error" in response) throw new UsageError(`${what}: ${response.error}`);
  const request: NonNullable<ExplainInput["request"]> = { method: raw.method ?? "GET" };
  if (raw.url !== undefined) request.url = raw.url;
  return { request, response, ...(raw.provider === undefined ? {} : { provider: raw.provider }) };
}

/** Parses the arguments and the input (a pasted response, or JSON); returns what to print. Throws UsageError on bad input. */
export function explainText(args: readonly string[], readInput: (file: string | undefined) => string, defaultNowMs: number): string {
  const { help, nowMs, file, retryWritesAfterThrottle, raw } = parseExplainArgs(args, defaultNowMs);
  if (help) return EXPLAIN_HELP.trimEnd();
  const text = readInput(file);
  const what = file ?? "standard input";
  if (text.trim() === "") throw new UsageError(`${what} is empty; paste a response (as curl -i prints it), or give one JSON object or an array of them`);
  const options = { retryWritesAfterThrottle };
  if (looksLikeRawResponse(text)) return JSON.stringify(explainOne(pastedInput(text, raw, what), nowMs, options), null, 2);
  if (raw.url !== undefined || raw.method !== undefined || raw.provider !== undefined) {
    throw new UsageError(`--url, --method and --provider go with a pasted response; in JSON input, give them as "request": {"url", "method"} and "provider"`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is neither a pasted response (its first line like "HTTP/1.1 429 Too Many Requests") nor valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (Array.isArray(json)) {
    if (json.length === 0) throw new UsageError(`${what} holds an empty array; give at least one response`);
    const inputs = json.map((item, index) => validateInput(item, `item ${index}`));
    return JSON.stringify(inputs.map((input) => explainOne(input, nowMs, options)), null, 2);
  }
  return JSON.stringify(explainOne(validateInput(json, "the input"), nowMs, options), null, 2);
}

export interface InputSource {
  /** Whether standard input is a terminal (nothing piped in). */
  stdinIsTTY: boolean;
  writeHint(line: string): void;
  readFile(file: string | number): string;
}

/** Reads FILE, or standard input; on a terminal it first says what it is waiting for, on stderr. */
export function inputReader(source: InputSource): (file: string | undefined) => string {
  return (file) => {
    if (file === undefined && source.stdinIsTTY) source.writeHint(`${TERMINAL_HINT}\n`);
    try {
      return source.readFile(file ?? 0);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const what = file ?? "standard input";
      throw new UsageError(code === "ENOENT" ? `cannot read ${what}: no such file` : code === "EISDIR" ? `${what} is a directory; give a JSON file` : `cannot read ${what} (${code ?? "error"})`);
    }
  };
}

const processInput: InputSource = {
  // isatty(0), not process.stdin.isTTY: touching process.stdin opens a stream that puts the
  // terminal in non-blocking mode, and readFileSync(0) then fails with EAGAIN.
  stdinIsTTY: isatty(0),
  writeHint: (line) => process.stderr.write(line),
  readFile: (file) => readFileSync(file, "utf8"),
};

/** The command: prints JSON (or the help) on stdout; a one-line error on stderr and exit code 2 on bad input. */
export function runExplain(args: readonly string[], source: InputSource = processInput): number {
  try {
    process.stdout.write(`${explainText(args, inputReader(source), Date.now())}\n`);
    return 0;
  } catch (error) {
    const message = error instanceof UsageError ? error.message : `unexpected failure: ${error instanceof Error ? error.message : String(error)}`;
    // One line, always: JSON.parse messages can quote the offending text with its newlines.
    process.stderr.write(`explain: ${message.replace(/\s+/g, " ").trim()}\n`);
    return 2;
  }
}

if (require.main === module) {
  process.exitCode = runExplain(process.argv.slice(2));
}
