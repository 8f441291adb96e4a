/**
 * Hand-written retry loops, the way integrations commonly write them: retry on 429, 5xx and
 * lost connections, up to 5 retries, with a fixed sleep, exponential backoff without jitter, or
 * full jitter (Brooker 2015). They ignore every header. The header-first client is in
 * header-first.ts.
 */
import { AxiosError } from "axios";
import type { LabClock } from "../clock";
import type { JobOutcome } from "../types";
import { jobRequest, labAxios, outcomeOfResponse, type Job, type Strategy, type StrategyEnv } from "./common";

export const MAX_RETRIES = 5;
export const BACKOFF_BASE_MS = 250;
export const BACKOFF_CAP_MS = 30_000;
export const FIXED_SLEEP_MS = 1000;

/** What a hand-written loop treats as worth retrying: 429, 5xx, or no answer at all. */
export function isRetryableFailure(error: unknown): boolean {
  if (!(error instanceof AxiosError)) return false;
  if (error.code === "ERR_CANCELED") return false;
  const status = error.response?.status;
  return status === undefined || status === 429 || status >= 500;
}

export type DelayRule = (retry: number, error: AxiosError) => number;

/** A bounded retry loop: at most MAX_RETRIES retries, sleeping `delay` between attempts. */
export async function retryLoop(env: StrategyEnv, clock: LabClock, job: Job, signal: AbortSignal, delay: DelayRule): Promise<JobOutcome> {
  const client = labAxios(env);
  for (let retry = 0; retry <= MAX_RETRIES; retry++) {
    try {
      return outcomeOfResponse(await client.request(jobRequest(job, signal)));
    } catch (error) {
      if (retry === MAX_RETRIES || signal.aborted || !isRetryableFailure(error)) return "failed";
      await clock.sleep(delay(retry + 1, error as AxiosError));
    }
  }
  return "failed";
}

export const fixedSleep: Strategy = {
  name: "fixed-sleep",
  description: `retry 429/5xx/network up to ${MAX_RETRIES} times after a fixed ${FIXED_SLEEP_MS} ms`,
  createRunner: (env) => (job, signal) => retryLoop(env, env.clock, job, signal, () => FIXED_SLEEP_MS),
};

export const exponential: Strategy = {
  name: "exponential",
  description: `retry up to ${MAX_RETRIES} times after ${BACKOFF_BASE_MS}·2^(n-1) ms (cap ${BACKOFF_CAP_MS / 1000} s), no jitter`,
  createRunner: (env) => (job, signal) => retryLoop(env, env.clock, job, signal, (n) => Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (n - 1))),
};

export const fullJitter: Strategy = {
  name: "full-jitter",
  description: `retry up to ${MAX_RETRIES} times after random(0, ${BACKOFF_BASE_MS}·2^(n-1)) ms (cap ${BACKOFF_CAP_MS / 1000} s)`,
  createRunner: (env) => (job, signal) =>
    retryLoop(env, env.clock, job, signal, (n) => Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (n - 1))),
};
