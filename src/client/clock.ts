import type { Clock } from "./types";

/** A Node timer longer than 2^31-1 ms fires at once; every sleep is chunked below it. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  const error = new Error(reason instanceof Error ? `Aborted: ${reason.message}` : "The request was aborted while waiting.");
  error.name = "AbortError";
  return error;
}

function sleepOnce(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The real clock: Date.now and setTimeout, chunked below 2^31 ms, abortable. */
export const realClock: Clock = {
  nowMs: () => Date.now(),
  async sleep(ms, signal) {
    let left = Math.max(0, Math.ceil(ms));
    do {
      const chunk = Math.min(left, MAX_TIMER_MS);
      await sleepOnce(chunk, signal);
      left -= chunk;
    } while (left > 0);
  },
};

/** Sleeps on any clock, never handing it more than MAX_TIMER_MS at once. */
export async function cappedSleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  let left = Math.max(0, Math.ceil(ms));
  if (signal?.aborted) throw abortError(signal);
  while (left > 0) {
    const chunk = Math.min(left, MAX_TIMER_MS);
    await clock.sleep(chunk, signal);
    if (signal?.aborted) throw abortError(signal);
    left -= chunk;
  }
}
