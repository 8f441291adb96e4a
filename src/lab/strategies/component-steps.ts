/**
 * The component's own steps, run through spectral's harness on the sources (clean, defaults, the
 * context a Prismatic execution gives), all jobs in ONE execution:
 * - ours-batch: one Send Batch step over every job, Concurrency = the scenario's workers (at most 32);
 * - ours-loop: a Loop step around Send Request, one job per step, one after another, each step
 *   seeing the cross-flow state the step before it returned (On Long Wait: defer).
 * The steps build their own client without the lab's in-process adapter, so they need real
 * sockets: scenarios with "clock": "real" only (a virtual run is refused in one line).
 */
import component from "../../index";
import { runnerFor } from "../batch";
import { isSuccess } from "../dialects";
import { JOB_HEADER } from "../server";
import type { JobOutcome } from "../types";
import type { Job, Strategy, StrategyEnv } from "./common";

const run = runnerFor(component, { quiet: true });

type JobRecord = { jobId: string; outcome: JobOutcome; endAtMs: number };

function requireSockets(env: StrategyEnv, name: string): void {
  if (env.adapter) throw new Error(`${name} runs the component's steps over sockets: use it in a scenario with "clock": "real"`);
}

function requestOf(env: StrategyEnv, job: Job): Record<string, unknown> {
  const post = job.method === "POST";
  // A key only where the API honours one (ours.ts says why).
  const key = post && env.scenario.server.honoursIdempotencyKey ? { idempotencyKey: job.id } : {};
  return { id: job.id, method: job.method, url: `${env.baseUrl}/items/${job.id}`, headers: { [JOB_HEADER]: job.id }, ...(post ? { data: { jobId: job.id }, ...key } : {}) };
}

/** The lab's own judgement of an answer (a 200 THROTTLED body is not a success). */
function judged(status: number | null, data: unknown): JobOutcome {
  return status !== null && isSuccess(status, data) ? "ok" : "failed";
}

interface BatchResult {
  outcome: "success" | "failed" | "deferred";
  status: number | null;
  data: unknown;
}

export const oursBatch: Strategy = {
  name: "ours-batch",
  description: "the component's Send Batch step over all jobs in one execution (Concurrency = workers, at most 32), through spectral's harness; real clock only",
  createRunner() {
    throw new Error("ours-batch runs all jobs in one step (runAll)");
  },
  async runAll(env, jobs) {
    requireSockets(env, "ours-batch");
    const params = { requests: jobs.map((job) => requestOf(env, job)), concurrency: String(Math.min(32, env.scenario.workload.workers)) };
    const result = (await run("sendBatch", params, { crossFlowState: env.shared.crossFlowState, startedAt: new Date().toISOString() })) as { data: { results: BatchResult[] }; crossFlowState?: Record<string, unknown> };
    env.shared.crossFlowState = { ...env.shared.crossFlowState, ...result.crossFlowState };
    const endAtMs = env.clock.nowMs();
    return jobs.map((job, i): JobRecord => {
      const item = result.data.results[i]!;
      return { jobId: job.id, endAtMs, outcome: item.outcome === "deferred" ? "deferred" : item.outcome === "success" ? judged(item.status, item.data) : "failed" };
    });
  },
};

export const oursLoop: Strategy = {
  name: "ours-loop",
  description: "a Loop of the component's Send Request steps, one job per step in one execution, cross-flow state passed from step to step (On Long Wait: defer); real clock only",
  createRunner() {
    throw new Error("ours-loop runs all jobs in one loop (runAll)");
  },
  async runAll(env, jobs, signal) {
    requireSockets(env, "ours-loop");
    const startedAt = new Date().toISOString();
    const records: JobRecord[] = [];
    for (const job of jobs) {
      if (signal?.aborted) break;
      const request = requestOf(env, job);
      const params = { url: request.url, method: job.method, headers: request.headers, data: request.data === undefined ? undefined : JSON.stringify(request.data), idempotencyKey: request.idempotencyKey, onLongWait: "defer" };
      let outcome: JobOutcome;
      try {
        const result = (await run("sendRequest", params, { crossFlowState: env.shared.crossFlowState, startedAt })) as { branch: string; data: { status?: number; data?: unknown }; crossFlowState?: Record<string, unknown> };
        env.shared.crossFlowState = { ...env.shared.crossFlowState, ...result.crossFlowState };
        outcome = result.branch === "Deferred" ? "deferred" : judged(result.data.status ?? null, result.data.data);
      } catch {
        outcome = "failed";
      }
      records.push({ jobId: job.id, outcome, endAtMs: env.clock.nowMs() });
    }
    return records;
  },
};
