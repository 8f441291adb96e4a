/**
 * Send Batch against a loop of Send Request steps, on the lab's throttled API over loopback
 * sockets and the real clock, both run through spectral's harness on a component (the sources, or
 * the built bundle). Used by `npm run bench:batch` (figures) and test/actions/sendBatch.bundle.test.ts
 * (functional goals and loose bounds only).
 *
 * The API's minimum ("ideal") is the lab's: its limiter's least time to admit N requests, the
 * first at the window's start (fixed windows of 10 per 1 s: (ceil(60/10) - 1) x 1 s = 5 s for 60),
 * plus one answer time. The server's windows are aligned to whole seconds, as the X-RateLimit-Reset
 * header (epoch seconds) describes them, and a run is timed from the server's start (its first
 * window), so setting up the step counts against it, never for it.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createHarness } from "@prismatic-io/spectral/dist/testing";
import { globalClock } from "./clock";
import { JOB_HEADER, ThrottledApi } from "./server";
import type { HttpMethod, ServerSpec } from "./types";

/** Runs one action of a component the way Prismatic would: inputs through clean, a context. */
export type ActionRunner = (key: string, params: Record<string, unknown>, context: Record<string, unknown>) => Promise<unknown>;

type HarnessComponent = Parameters<typeof createHarness>[0];

/** Prismatic's step logger, silent: the client writes one line per decision, which would bury the figures. */
const quietLogger = Object.fromEntries(["info", "warn", "error", "debug", "log", "trace", "metric"].map((level) => [level, () => undefined]));

export function runnerFor(component: HarnessComponent, options: { quiet?: boolean } = {}): ActionRunner {
  const harness = createHarness(component);
  return (key, params, context) => harness.action(key, params, options.quiet ? { logger: quietLogger, ...context } : context);
}

/** The API: 10 requests per second in fixed windows, X-RateLimit-* budget headers on every answer. */
export function batchApiSpec(overrides: Partial<ServerSpec> = {}): ServerSpec {
  return {
    limiter: "fixed-window",
    limit: 10,
    windowMs: 1000,
    dialect: "generic",
    retryAfter: "seconds",
    budgetHeaders: true,
    latencyMs: 20,
    costPerRequest: 1,
    honoursIdempotencyKey: true,
    faults: { error503Share: 0, dropShare: 0, slowShare: 0, slowMs: 0 },
    ...overrides,
  };
}

export interface LabApi {
  api: ThrottledApi;
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the lab API on 127.0.0.1 at a whole second, so that its fixed windows are aligned to whole
 * seconds. A timer fires a millisecond or more late, and a window starting at x.001 s ends at a
 * time X-RateLimit-Reset (whole epoch seconds, rounded up) states as a second later: so sleep to
 * just before the second, then spin to it (at most ~20 ms, once per run).
 */
export async function startAlignedApi(spec: ServerSpec, seed = 1): Promise<LabApi> {
  let api: ThrottledApi;
  for (;;) {
    const untilSecondMs = 1000 - (Date.now() % 1000);
    if (untilSecondMs > 20) await new Promise((resolve) => setTimeout(resolve, untilSecondMs - 20));
    const secondMs = Math.ceil(Date.now() / 1000) * 1000;
    while (Date.now() < secondMs);
    api = new ThrottledApi(spec, globalClock, seed);
    if (api.originMs % 1000 === 0) break;
  }
  const { url, close } = await api.listen();
  return { api, url, close };
}

/** N requests for the lab API: each names its job (the server counts executions per job), POSTs carry their id as idempotency key. */
export function labRequests(url: string, count: number, method: HttpMethod = "GET"): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, i) => {
    const id = `job-${String(i + 1).padStart(5, "0")}`;
    return { id, method, url: `${url}/items/${id}`, headers: { [JOB_HEADER]: id }, ...(method === "POST" ? { data: { jobId: id }, idempotencyKey: id } : {}) };
  });
}

export interface BatchFigures {
  way: string;
  items: number;
  ok: number;
  failed: number;
  deferred: number;
  calls: number;
  throttled: number;
  /** Extra executions of a POST for one job. */
  duplicates: number;
  /** From the server's start to the step's (or the loop's) end. */
  makespanMs: number;
  idealMs: number;
}

function figures(lab: LabApi, way: string, items: number, counts: { ok: number; failed: number; deferred: number }, endMs: number): BatchFigures {
  const { api } = lab;
  return {
    way,
    items,
    ...counts,
    calls: api.records.length,
    throttled: api.records.filter((r) => r.throttled).length,
    duplicates: api.duplicates(),
    makespanMs: Math.round(endMs - api.originMs),
    idealMs: api.minimumMs(items) + api.spec.latencyMs,
  };
}

interface BatchSummary {
  succeeded: number;
  failed: number;
  deferred: number;
}

/** One Send Batch step with the given concurrency, in one execution that starts now. */
export async function timeBatch(run: ActionRunner, lab: LabApi, requests: Array<Record<string, unknown>>, concurrency: number): Promise<{ figures: BatchFigures; output: unknown }> {
  const result = (await run("sendBatch", { requests, concurrency: String(concurrency) }, { crossFlowState: {}, startedAt: new Date().toISOString() })) as { data: { summary: BatchSummary } };
  const endMs = Date.now();
  const { succeeded, failed, deferred } = result.data.summary;
  return { figures: figures(lab, `Send Batch, concurrency ${concurrency}`, requests.length, { ok: succeeded, failed, deferred }, endMs), output: result };
}

/**
 * A Loop step around Send Request, as a builder does it without Send Batch: one request per step,
 * one after another, each step seeing the cross-flow state the step before it returned.
 */
export async function timeLoop(run: ActionRunner, lab: LabApi, requests: Array<Record<string, unknown>>): Promise<BatchFigures> {
  let crossFlowState: Record<string, unknown> = {};
  const counts = { ok: 0, failed: 0, deferred: 0 };
  const startedAt = new Date().toISOString();
  for (const request of requests) {
    const params = { url: request.url, method: request.method, headers: request.headers, data: request.data === undefined ? undefined : JSON.stringify(request.data), idempotencyKey: request.idempotencyKey, onLongWait: "defer" };
    try {
      const result = (await run("sendRequest", params, { crossFlowState, startedAt })) as { branch: string; crossFlowState?: Record<string, unknown> };
      crossFlowState = { ...crossFlowState, ...result.crossFlowState };
      if (result.branch === "Success") counts.ok++;
      else counts.deferred++;
    } catch {
      counts.failed++;
    }
  }
  return figures(lab, "Loop of Send Request", requests.length, counts, Date.now());
}

/** The component built by webpack into a scratch project (never the checkout's dist/), loaded from the bundle. */
export async function buildBundle(root: string): Promise<{ component: HarnessComponent; dir: string; cleanup(): void }> {
  const project = mkdtempSync(join(tmpdir(), "component-batch-"));
  const dist = join(project, "dist");
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "component-batch-check", private: true }));
  await promisify(execFile)(join(root, "node_modules", ".bin", "webpack"), ["--output-path", dist], { cwd: root, maxBuffer: 32 * 1024 * 1024 });
  const bundle = createRequire(__filename)(join(dist, "index.js")) as { default: HarnessComponent };
  return { component: bundle.default, dir: dist, cleanup: () => rmSync(project, { recursive: true, force: true }) };
}
