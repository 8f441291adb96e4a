/**
 * One fault scenario in its own process (forked by runner.ts), so that its peak RSS is its own
 * and a hang can be ended by killing it. Drives the client exactly as a user would and sends one
 * "ready" message before the request and one "done" message after it.
 */
import * as clientApi from "../../client";
import { countSecretsIn } from "./encodings";
import { BUDGET_MS, credentialHeaders, FAULT_SECRETS, FAULT_TOKEN, scenarioById, SUITE_POLICY, WARM_UP_REQUESTS } from "./scenarios";
import { JOB_HEADER } from "./server";

export interface ChildInput {
  scenarioId: string;
  baseUrl: string;
  run: string;
}

export type ChildMessage =
  | { kind: "ready"; rssBytes: number }
  | {
      kind: "done";
      /** The result's outcome, or the thrown error's class name. */
      outcome: string;
      status: number | null;
      threw: boolean;
      /** The thrown error is an instance of a class src/client exports (not a bare Error, RangeError, AxiosError...). */
      typed: boolean;
      message: string;
      elapsedMs: number;
      peakRssBytes: number;
      /** Secrets (in any form) found in the result, the error (message, stack, JSON) and the log lines. */
      leaksInOutput: number;
      /** Repeat scenarios: heap still in use after the run and a full GC, less before it. */
      retainedHeapBytes: number | null;
    };

/** The error classes the client exports: what a caller can catch by type. */
const EXPORTED_ERRORS: Array<abstract new (...args: never[]) => Error> = (Object.values(clientApi) as unknown[]).filter(
  (v): v is abstract new (...args: never[]) => Error => typeof v === "function" && (v as { prototype?: unknown }).prototype instanceof Error,
);

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  let asJson: string;
  try {
    asJson = JSON.stringify(error);
  } catch {
    asJson = "(not serialisable)";
  }
  return `${error.name}: ${error.message}\n${error.stack ?? ""}\n${asJson}`;
}

function send(message: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) {
      process.stdout.write(`${JSON.stringify(message)}\n`);
      resolve();
      return;
    }
    process.send(message, () => resolve());
  });
}

type Done = Omit<Extract<ChildMessage, { kind: "done" }>, "elapsedMs" | "peakRssBytes" | "leaksInOutput" | "retainedHeapBytes">;

/** Heap in use after a full GC (the child runs with --expose-gc), or null without it. */
async function settledHeapBytes(): Promise<number | null> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return null;
  gc();
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc();
  return process.memoryUsage().heapUsed;
}

async function requestOnce(client: clientApi.ThrottleClient, input: ChildInput, signal: AbortSignal | undefined): Promise<{ done: Done; output: unknown }> {
  const scenario = scenarioById(input.scenarioId);
  try {
    const result = await client.request({
      method: scenario.method,
      url: `/${scenario.path}`,
      data: scenario.data,
      headers: { [JOB_HEADER]: `${input.run}:job` },
      ...(scenario.idempotencyKey ? { idempotencyKey: `key-${input.run}` } : {}),
      ...(signal ? { signal } : {}),
    });
    return { output: result, done: { kind: "done", outcome: result.outcome, status: result.status, threw: false, typed: true, message: result.reason.slice(0, 200) } };
  } catch (error) {
    const className = error instanceof Error ? error.constructor.name : typeof error;
    const name = error instanceof Error && error.name !== className ? `${className} (${error.name})` : className;
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 200);
    return { output: describeError(error), done: { kind: "done", outcome: name, status: null, threw: true, typed: EXPORTED_ERRORS.some((c) => error instanceof c), message } };
  }
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? "{}") as ChildInput;
  const scenario = scenarioById(input.scenarioId);
  const logLines: string[] = [];
  const logger = { info: (m: string) => logLines.push(m), warn: (m: string) => logLines.push(m) };
  // A long-lived signal, as a caller with a shutdown switch would give (only for repeat scenarios).
  const lifetime = scenario.repeat ? new AbortController() : null;
  const client = clientApi.createThrottleClient({
    baseUrl: `${input.baseUrl}/${input.run}`,
    headers: credentialHeaders(scenario.credential),
    credential: FAULT_TOKEN,
    secrets: FAULT_SECRETS,
    policy: SUITE_POLICY,
    ...(scenario.timeoutMs === null ? {} : { timeoutMs: scenario.timeoutMs }),
    onLongWait: scenario.onLongWait,
    logger,
    ...(lifetime ? { signal: lifetime.signal } : {}),
  });
  // Warm-up requests for repeat scenarios, so that lazily compiled and cached code is not counted as retained.
  for (let i = 0; scenario.repeat && i < WARM_UP_REQUESTS; i++) await requestOnce(client, input, new AbortController().signal);
  logLines.length = 0;
  const heapBefore = scenario.repeat ? await settledHeapBytes() : null;
  await send({ kind: "ready", rssBytes: process.memoryUsage().rss });
  const startedMs = performance.now();
  let last = await requestOnce(client, input, scenario.repeat ? new AbortController().signal : undefined);
  for (let i = 1; i < (scenario.repeat ?? 1) && !last.done.threw && last.done.outcome === "success"; i++) {
    // Keep the last request's lines only: the log itself must not be what grows.
    logLines.length = 0;
    last = await requestOnce(client, input, new AbortController().signal);
  }
  const elapsedMs = Math.round(performance.now() - startedMs);
  const heapAfter = heapBefore === null ? null : await settledHeapBytes();
  const { output, done } = last;
  const haystack = `${typeof output === "string" ? output : JSON.stringify(output)}\n${logLines.join("\n")}`;
  const leaksInOutput = countSecretsIn(haystack, FAULT_SECRETS);
  // ru_maxrss: the kernel's peak for this process, in KiB on Linux (getrusage(2)).
  const peakRssBytes = process.resourceUsage().maxRSS * 1024;
  const retainedHeapBytes = heapBefore === null || heapAfter === null ? null : Math.max(0, heapAfter - heapBefore);
  await send({ ...done, message: done.message.replace(/\s+/g, " "), elapsedMs, peakRssBytes, leaksInOutput, retainedHeapBytes });
  // A silent server or an endless body may hold sockets open; the measurement is done.
  process.exit(0);
}

// Budget for a child that outlives its parent: never linger past the suite's own deadline.
setTimeout(() => process.exit(3), BUDGET_MS * 20).unref();
process.on("disconnect", () => process.exit(4));
main().catch((error: unknown) => {
  process.stderr.write(`fault child failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});
