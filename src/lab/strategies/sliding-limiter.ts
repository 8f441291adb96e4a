/**
 * The seed article's client 3, a client-side sliding-window limiter: it knows the server's limit
 * and takes its fair share per worker (limit / workers, at least 1) with a 10 ms safety margin,
 * and never retries. Each worker has its own limiter; nothing is shared (as in separate executions).
 */
import type { LabClock } from "../clock";
import { requestsPerWindow, sendOnce, labAxios, type Strategy } from "./common";

export const SAFETY_MS = 10;

/** At most `maxPerWindow` starts in any `windowMs + SAFETY_MS`; returns when a start is allowed. */
export function createSlidingLimiter(maxPerWindow: number, windowMs: number, clock: LabClock): () => Promise<void> {
  const sent: number[] = [];
  return async () => {
    for (let guard = 0; guard < 1_000_000; guard++) {
      const nowMs = clock.nowMs();
      while (sent.length > 0 && nowMs - sent[0]! >= windowMs + SAFETY_MS) sent.shift();
      if (sent.length < maxPerWindow) {
        sent.push(nowMs);
        return;
      }
      await clock.sleep(sent[0]! + windowMs + SAFETY_MS - nowMs);
    }
    throw new Error("sliding limiter: no slot after 1e6 turns");
  };
}

export const slidingLimiter: Strategy = {
  name: "sliding-limiter",
  description: "client-side sliding window at limit/workers per worker (+10 ms), no retry",
  createRunner(env) {
    const { server, workload } = env.scenario;
    const perWindow = requestsPerWindow(env.scenario);
    // A concurrency limit has no window: the limiter uses the answer time as one.
    const windowMs = server.limiter === "concurrency" ? server.latencyMs : server.windowMs;
    const share = Math.max(1, Math.floor(perWindow / workload.workers));
    const wait = createSlidingLimiter(share, windowMs, env.clock);
    const client = labAxios(env);
    return async (job, signal) => {
      await wait();
      return sendOnce(client, job, signal);
    };
  },
};
