/** The numbers the bench reports, computed from what the server recorded. */
import type { RequestRecord } from "./types";

export const HERD_WINDOW_MS = 100;

/** The most requests that arrived in any HERD_WINDOW_MS window after the first throttled answer. */
export function herdPeak(records: readonly RequestRecord[], windowMs = HERD_WINDOW_MS): number {
  const firstThrottle = records.find((r) => r.throttled);
  if (!firstThrottle) return 0;
  const times = records
    .filter((r) => r.atMs >= firstThrottle.atMs)
    .map((r) => r.atMs)
    .sort((a, b) => a - b);
  let peak = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= windowMs) start++;
    peak = Math.max(peak, end - start + 1);
  }
  return peak;
}

export interface IdealInput {
  jobs: number;
  workers: number;
  latencyMs: number;
  /** Jobs the server will accept in this run at all (a daily quota caps it). */
  admissibleJobs: number;
  /** The server's least time to admit them, from the limiter. */
  serverMinimumMs: number;
  /** The most requests that may be in flight (a concurrency limit), else Infinity. */
  maxInFlight: number;
  /** How many jobs the server admits no sooner than its minimum, together (a window's last share); 1 when absent. */
  lastBatchJobs?: number;
  /** Calls the run's faults added (a 503, a dropped GET: each spent a unit and its job goes again); 0 when absent. serverMinimumMs counts them. */
  faultCalls?: number;
  /**
   * Worker time the run's slow answers held beyond the usual answer time (each slow answer's delay,
   * or the client's timeout where that is shorter); 0 when absent. No client answers faster than
   * the server: the workers carry this time as well as one answer per call.
   */
  slowAnswerMs?: number;
}

/**
 * The least makespan any client could reach: the server's own minimum for the jobs it will accept
 * (and for the calls the run's faults added), plus the answer times the workers need for the jobs
 * it admits only then (a fixed window's last share of 100 jobs takes one worker 100 answers, not
 * one), and never less than the workers could carry one call per job and per fault, and the
 * slow answers' extra time.
 */
export function idealMs(input: IdealInput): number {
  const jobs = Math.min(input.jobs, input.admissibleJobs);
  if (jobs <= 0) return 0;
  const calls = jobs + Math.max(0, input.faultCalls ?? 0);
  const lanes = Math.max(1, Math.min(input.workers, input.maxInFlight));
  const slowAnswerMs = Math.max(0, input.slowAnswerMs ?? 0);
  const workerBoundMs = Math.max(Math.ceil(calls / lanes) * input.latencyMs, (calls * input.latencyMs + slowAnswerMs) / lanes);
  const lastBatch = Math.max(1, Math.min(calls, input.lastBatchJobs ?? 1));
  return Math.max(input.serverMinimumMs + Math.ceil(lastBatch / lanes) * input.latencyMs, workerBoundMs);
}
