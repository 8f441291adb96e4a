/**
 * K concurrent workers share N jobs. A worker stands for one concurrent Prismatic execution
 * stream: it takes the next job, runs it through its strategy's runner, and takes another. A job
 * still running at the execution limit is killed (aborted) and counts as failed, as Prismatic
 * ends an execution after 15 minutes.
 */
import { setMaxListeners } from "node:events";
import type { LabClock } from "./clock";
import type { Job, JobRunner } from "./strategies/common";
import type { HttpMethod, JobOutcome } from "./types";

export interface JobRecord {
  jobId: string;
  outcome: JobOutcome;
  /** Lab-clock epoch ms at which the job ended. */
  endAtMs: number;
}

export interface WorkerRunOptions {
  jobs: readonly Job[];
  workers: number;
  executionLimitMs: number;
  clock: LabClock;
  createRunner: (workerIndex: number) => JobRunner;
  /** Aborts every job (the run's own time limit). */
  signal?: AbortSignal;
  onJobDone?: (record: JobRecord) => void;
}

export function makeJobs(count: number, method: HttpMethod): Job[] {
  return Array.from({ length: count }, (_, index) => ({ id: `job-${String(index + 1).padStart(5, "0")}`, index, method }));
}

export async function runWithLimit(runner: JobRunner, job: Job, limitMs: number, outer: AbortSignal | undefined): Promise<JobOutcome> {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  outer?.addEventListener("abort", abort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const killed = new Promise<JobOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve("failed");
    }, limitMs);
  });
  try {
    return await Promise.race([runner(job, controller.signal).catch((): JobOutcome => "failed"), killed]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", abort);
  }
}

export async function runWorkers(options: WorkerRunOptions): Promise<JobRecord[]> {
  const records: JobRecord[] = [];
  let next = 0;
  const worker = async (workerIndex: number): Promise<void> => {
    const runner = options.createRunner(workerIndex);
    while (next < options.jobs.length && !options.signal?.aborted) {
      const job = options.jobs[next++]!;
      const outcome = options.signal?.aborted ? "failed" : await runWithLimit(runner, job, options.executionLimitMs, options.signal);
      const record: JobRecord = { jobId: job.id, outcome, endAtMs: options.clock.nowMs() };
      records.push(record);
      options.onJobDone?.(record);
    }
  };
  const count = Math.max(1, Math.min(options.workers, options.jobs.length));
  // Each worker's job listens to the run's signal while it runs (runWithLimit removes it after): 50
  // workers are 50 listeners at once, not a leak, and Node's warning past 10 only alarmed the reader.
  if (options.signal) setMaxListeners(count + 10, options.signal);
  await Promise.all(Array.from({ length: count }, (_, i) => worker(i)));
  return records;
}
