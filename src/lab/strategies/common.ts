/**
 * What every strategy gets and returns. A strategy builds one runner per worker (a worker stands
 * for one concurrent Prismatic execution); the runner takes a job and reports its outcome.
 */
import axios, { type AxiosAdapter, type AxiosInstance, type AxiosRequestConfig, type AxiosResponse } from "axios";
import type { LabClock } from "../clock";
import { isSuccess } from "../dialects";
import { JOB_HEADER } from "../server";
import type { HttpMethod, JobOutcome, Scenario } from "../types";

export interface Job {
  id: string;
  index: number;
  method: HttpMethod;
}

/** State shared by all workers of one run: Prismatic cross-flow state, or one process's memory. */
export interface SharedStore {
  /** The persisted cross-flow state as the last finished execution wrote it. */
  crossFlowState: Record<string, unknown>;
  /** Anything shared in memory by workers of one process (in-process coordination). */
  memory: Map<string, unknown>;
}

export interface StrategyEnv {
  scenario: Scenario;
  baseUrl: string;
  /** The in-process adapter on the virtual clock; undefined on the real clock (sockets). */
  adapter: AxiosAdapter | undefined;
  clock: LabClock;
  shared: SharedStore;
  /** Coordination "redis": the Redis every worker's store shares (a fresh key prefix per run). */
  redis?: { url: string; keyPrefix: string };
}

export type JobRunner = (job: Job, signal: AbortSignal) => Promise<JobOutcome>;

export interface Strategy {
  name: string;
  /** One line for the report: what it is and how it is configured. */
  description: string;
  createRunner(env: StrategyEnv, workerIndex: number): JobRunner;
  /**
   * Runs every job itself, in one go, instead of job by job on the scenario's workers: a strategy
   * that is one Prismatic step over all the jobs (Send Batch) or one loop of steps. Each job's
   * record says when it ended (lab-clock epoch ms) and how.
   */
  runAll?(env: StrategyEnv, jobs: readonly Job[], signal: AbortSignal | undefined): Promise<Array<{ jobId: string; outcome: JobOutcome; endAtMs: number }>>;
}

/** A plain axios instance on the lab's transport. */
export function labAxios(env: StrategyEnv): AxiosInstance {
  const instance = axios.create({ baseURL: env.baseUrl, timeout: env.scenario.workload.requestTimeoutMs || undefined });
  if (env.adapter) instance.defaults.adapter = env.adapter;
  return instance;
}

/** Points an instance someone else created (spectral's createClient) at the lab's transport. */
export function useLabTransport(instance: AxiosInstance, env: StrategyEnv): AxiosInstance {
  if (env.adapter) instance.defaults.adapter = env.adapter;
  return instance;
}

export function jobRequest(job: Job, signal: AbortSignal): AxiosRequestConfig {
  return {
    method: job.method,
    url: `/items/${job.id}`,
    headers: { [JOB_HEADER]: job.id },
    data: job.method === "POST" ? { jobId: job.id } : undefined,
    signal,
  };
}

function parsed(data: unknown): unknown {
  if (typeof data !== "string") return data;
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return data;
  }
}

/** The lab's own judgement of a final answer (a 200 THROTTLED body is not a success). */
export function outcomeOfResponse(response: Pick<AxiosResponse, "status" | "data">): JobOutcome {
  return isSuccess(response.status, parsed(response.data)) ? "ok" : "failed";
}

/** Sends one job through an axios instance; any rejection is a failed job. */
export async function sendOnce(instance: AxiosInstance, job: Job, signal: AbortSignal): Promise<JobOutcome> {
  try {
    return outcomeOfResponse(await instance.request(jobRequest(job, signal)));
  } catch {
    return "failed";
  }
}

/** Requests the server allows per window, in whole requests (a cost bucket counts points). */
export function requestsPerWindow(scenario: Scenario): number {
  const { limiter, limit, costPerRequest } = scenario.server;
  return limiter === "cost-bucket" ? Math.max(1, Math.floor(limit / costPerRequest)) : limit;
}
