/**
 * Prismatic's real createClient (@prismatic-io/spectral 10.31.1), three ways:
 * - as its Raw Request action sets it up when a user ticks "Use Exponential Backoff" and "Retry
 *   On All Errors" with 5 retries and the default delay "0": every retry waits 2^(n-1)·0 = 0 ms;
 * - with its defaults: no retryConfig, so no retry at all;
 * - with only `retries` set: retryDelay undefined overrides axios-retry's default and the first
 *   retry throws "retryDelay is not a function" (spectral's dist/clients/http computeRetryDelay
 *   returns an undefined retryDelay as it is, over axios-retry's default, which then calls it).
 */
import { createClient } from "@prismatic-io/spectral/dist/clients/http";
import { sendOnce, useLabTransport, type Strategy, type StrategyEnv } from "./common";

function client(env: StrategyEnv, retryConfig: Parameters<typeof createClient>[0]["retryConfig"]) {
  return useLabTransport(createClient({ baseUrl: env.baseUrl, timeout: env.scenario.workload.requestTimeoutMs || undefined, retryConfig }), env);
}

export const spectralRawRequest: Strategy = {
  name: "spectral-raw-request",
  description: "createClient as the Raw Request action configures it: 5 retries, exponential backoff, retry all errors, delay \"0\"",
  createRunner(env) {
    const http = client(env, { retries: 5, retryDelay: 0, useExponentialBackoff: true, retryAllErrors: true });
    return (job, signal) => sendOnce(http, job, signal);
  },
};

export const spectralDefault: Strategy = {
  name: "spectral-default",
  description: "createClient with its defaults (no retryConfig: no retry)",
  createRunner(env) {
    const http = client(env, undefined);
    return (job, signal) => sendOnce(http, job, signal);
  },
};

export const spectralRetriesOnly: Strategy = {
  name: "spectral-retries-only",
  description: "createClient with retryConfig { retries: 5 } and the other retry options at their defaults",
  createRunner(env) {
    const http = client(env, { retries: 5 });
    return (job, signal) => sendOnce(http, job, signal);
  },
};
