/**
 * `explain`: for a person with a throttled response in hand. Reads one JSON object or an array
 * of them in classify's input shape ({ request: { method, url }, response: { status, headers,
 * body }, provider? }) from a file or standard input, and prints each verdict with the plan for a
 * first attempt under the default policy.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { classify, DEFAULT_POLICY, plan } from "../engine";
import type { ClassifyInput, Decision, Verdict } from "../engine";

export class UsageError extends Error {}

export const EXPLAIN_USAGE = "usage: explain [--now ISO-8601] [FILE]  (reads standard input when FILE is absent or -)";

export interface ExplainedResponse extends Verdict {
  /** The plan for a first attempt under the default policy; jitter taken at its midpoint. */
  plan: Decision & { waitRangeMs?: [number, number] };
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Checks one input; throws a UsageError with a one-line message saying what to fix. */
export function validateInput(value: unknown, label: string): ClassifyInput {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new UsageError(`${label} is ${describe(value)}; expected an object like {"request":{"method":"GET","url":"https://..."},"response":{"status":429,"headers":{}}}`);
  }
  const input = value as Record<string, unknown>;
  const response = input.response;
  if (response === null || typeof response !== "object" || Array.isArray(response)) {
    throw new UsageError(`${label} has no "response" object; add {"response":{"status":429,"headers":{...},"body":...}}`);
  }
  const status = (response as Record<string, unknown>).status;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new UsageError(`${label}: response.status must be a number from 100 to 599, got ${JSON.stringify(status) ?? "nothing"}`);
  }
  const headers = (response as Record<string, unknown>).headers;
  if (headers !== undefined && (headers === null || typeof headers !== "object" || Array.isArray(headers))) {
    throw new UsageError(`${label}: response.headers must be an object of header names to values, got ${describe(headers)}`);
  }
  const request = input.request;
  if (request !== undefined && (request === null || typeof request !== "object" || Array.isArray(request))) {
    throw new UsageError(`${label}: request must be an object like {"method":"GET","url":"https://..."}, got ${describe(request)}`);
  }
  if (input.provider !== undefined && typeof input.provider !== "string") {
    throw new UsageError(`${label}: provider must be a dialect id such as "github", got ${describe(input.provider)}`);
  }
  return input as unknown as ClassifyInput;
}

export function explainOne(input: ClassifyInput, nowMs: number): ExplainedResponse {
  const verdict = classify(input, { nowMs });
  const history = { attempts: 1, firstAttemptAtMs: nowMs };
  const at = (random: number): Decision => plan(verdict, history, DEFAULT_POLICY, { nowMs, random: () => random });
  const decision: ExplainedResponse["plan"] = at(0.5);
  if (decision.decision === "retry") {
    const low = at(0);
    const high = at(0.999999);
    if (low.decision === "retry" && high.decision === "retry") decision.waitRangeMs = [low.waitMs, high.waitMs];
  }
  return { ...verdict, plan: decision };
}

/** Parses the arguments and the JSON text; returns what to print. Throws UsageError on bad input. */
export function explainText(args: readonly string[], readInput: (file: string | undefined) => string, defaultNowMs: number): string {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: { now: { type: "string" } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}; ${EXPLAIN_USAGE}`);
  }
  if (parsed.positionals.length > 1) throw new UsageError(`give at most one FILE, got ${parsed.positionals.length}; ${EXPLAIN_USAGE}`);
  let nowMs = defaultNowMs;
  if (parsed.values.now !== undefined) {
    nowMs = Date.parse(parsed.values.now);
    if (!Number.isFinite(nowMs)) throw new UsageError(`--now "${parsed.values.now}" is not an ISO 8601 time; use e.g. --now 2026-11-30T12:00:00Z`);
  }
  const file = parsed.positionals[0];
  const text = readInput(file === "-" ? undefined : file);
  if (text.trim() === "") throw new UsageError(`${file ?? "standard input"} is empty; give one JSON object or an array of them`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file ?? "standard input"} is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (Array.isArray(json)) {
    if (json.length === 0) throw new UsageError(`${file ?? "standard input"} holds an empty array; give at least one response`);
    const inputs = json.map((item, index) => validateInput(item, `item ${index}`));
    return JSON.stringify(inputs.map((input) => explainOne(input, nowMs)), null, 2);
  }
  return JSON.stringify(explainOne(validateInput(json, "the input"), nowMs), null, 2);
}

function readInputFile(file: string | undefined): string {
  try {
    return readFileSync(file ?? 0, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const what = file ?? "standard input";
    throw new UsageError(code === "ENOENT" ? `cannot read ${what}: no such file` : code === "EISDIR" ? `${what} is a directory; give a JSON file` : `cannot read ${what} (${code ?? "error"})`);
  }
}

/** The command: prints JSON on stdout; a one-line error on stderr and exit code 2 on bad input. */
export function runExplain(args: readonly string[]): number {
  try {
    process.stdout.write(`${explainText(args, readInputFile, Date.now())}\n`);
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
