/**
 * The header-first client the seed articles describe: honour Retry-After when present (seconds,
 * or an HTTP-date), otherwise full jitter with a ceiling; it retries 429, 5xx and lost connections (the
 * shared hand-written loop), 5 retries.
 * It reads no other header and shares nothing between workers.
 */
import type { AxiosError } from "axios";
import { BACKOFF_BASE_MS, retryLoop } from "./hand-retry";
import type { Strategy } from "./common";

export const HEADER_FIRST_CAP_MS = 60_000;

export function retryAfterMs(error: AxiosError, nowMs: number): number | null {
  const raw = error.response?.headers?.["retry-after"];
  if (typeof raw !== "string" || raw.trim() === "") return null;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const dateMs = Date.parse(raw);
  return Number.isFinite(dateMs) ? Math.max(0, dateMs - nowMs) : null;
}

export const headerFirst: Strategy = {
  name: "header-first",
  description: `Retry-After first (seconds or HTTP-date), else full jitter ${BACKOFF_BASE_MS}·2^(n-1) ms capped at ${HEADER_FIRST_CAP_MS / 1000} s; 5 retries`,
  createRunner: (env) => (job, signal) =>
    retryLoop(env, env.clock, job, signal, (n, error) => {
      const told = retryAfterMs(error, env.clock.nowMs());
      return told ?? Math.random() * Math.min(HEADER_FIRST_CAP_MS, BACKOFF_BASE_MS * 2 ** (n - 1));
    }),
};
