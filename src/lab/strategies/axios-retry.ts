/**
 * The real axios-retry package with its exponentialDelay: max(2^n·100 ms, Retry-After) plus
 * 0-20 % jitter; its default condition (network errors, and 429/5xx on idempotent methods).
 */
import axiosRetry, { exponentialDelay } from "axios-retry";
import { labAxios, sendOnce, type Strategy } from "./common";

export const AXIOS_RETRY_RETRIES = 5;

export const axiosRetryStrategy: Strategy = {
  name: "axios-retry",
  description: `axios-retry 4.5, exponentialDelay (reads Retry-After), ${AXIOS_RETRY_RETRIES} retries, default retryCondition`,
  createRunner(env) {
    const client = labAxios(env);
    axiosRetry(client, { retries: AXIOS_RETRY_RETRIES, retryDelay: exponentialDelay });
    return (job, signal) => sendOnce(client, job, signal);
  },
};
