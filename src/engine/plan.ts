/**
 * The timing decision for the next attempt. The server's wait is a floor and is never shortened;
 * a small jitter goes on top so that workers throttled together come back spread out; with no
 * wait from the server, exponential backoff with the chosen jitter. A wait longer than the
 * inline limit, or ending past the deadline, defers with a notBefore instead of retrying early.
 */
import { backoffMs } from "./backoff";
import type { AttemptHistory, Decision, PlanOptions, RetryPolicy, Verdict } from "./types";

export const DEFAULT_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 5,
  maxTotalMs: 5 * 60_000,
  deadlineMs: null,
  // Two minutes: a per-minute window's reset, rounded up to whole seconds and measured against
  // the response's Date, often lands just past 60 s; a 60 s limit would defer most of them.
  maxInlineWaitMs: 120_000,
  backoffBaseMs: 500,
  backoffCapMs: 30_000,
  jitter: "equal",
  serverWaitJitterRatio: 0.1,
  serverWaitJitterMaxMs: 1000,
});

/** "2 s", "2.10 s", "60.5 s": whole seconds when whole, never rounded to a different second. */
function seconds(ms: number): string {
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export function plan(verdict: Verdict, history: AttemptHistory, policy: RetryPolicy, options: PlanOptions): Decision {
  const { nowMs, random } = options;
  const at = (waitMs: number): string => new Date(nowMs + waitMs).toISOString();
  const serverWaitMs = verdict.minWaitMs;

  if (verdict.limitType === "permission" || verdict.limitType === "validation") {
    return { decision: "fail", reason: `Not retried: ${verdict.reason}`, notBefore: null };
  }
  if (verdict.retryAllowed === false) {
    return { decision: "fail", reason: `The server says not to retry this request. ${verdict.reason}`, notBefore: null };
  }
  if (!verdict.retryable) {
    if (!verdict.throttled) return { decision: "done", reason: verdict.reason };
    // A quota (daily, monthly, spend): never retried in this run; defer to its reset when known.
    if (isKnownWait(serverWaitMs)) {
      return {
        decision: "defer",
        waitMs: serverWaitMs,
        notBefore: at(serverWaitMs),
        reason: `A ${verdict.limitType} limit that is not retried inline; the work can resume at ${at(serverWaitMs)} (in ${seconds(serverWaitMs)}). ${verdict.reason}`,
      };
    }
    return { decision: "fail", reason: `A ${verdict.limitType} limit with no known reset; not retried. ${verdict.reason}`, notBefore: null };
  }

  if (history.attempts >= policy.maxAttempts) {
    return {
      decision: "fail",
      reason: `Gave up after ${history.attempts} attempt(s) (maxAttempts ${policy.maxAttempts}). ${verdict.reason}`,
      notBefore: serverWaitMs === null ? null : at(serverWaitMs),
    };
  }

  const deadlineMs = Math.min(history.firstAttemptAtMs + policy.maxTotalMs, policy.deadlineMs ?? Number.POSITIVE_INFINITY);
  const remainingMs = deadlineMs - nowMs;

  if (serverWaitMs !== null) {
    if (serverWaitMs > policy.maxInlineWaitMs || serverWaitMs > remainingMs) {
      const limit = serverWaitMs > policy.maxInlineWaitMs ? `the inline limit of ${seconds(policy.maxInlineWaitMs)}` : "the time left before the deadline";
      return {
        decision: "defer",
        waitMs: serverWaitMs,
        notBefore: at(serverWaitMs),
        reason: `The server asks for ${seconds(serverWaitMs)}, more than ${limit}; resume at ${at(serverWaitMs)}. ${verdict.reason}`,
      };
    }
    const spreadMs = policy.jitter === "none" ? 0 : Math.min(policy.serverWaitJitterMaxMs, serverWaitMs * policy.serverWaitJitterRatio);
    let waitMs = serverWaitMs + Math.round(random() * spreadMs);
    // Jitter never pushes a wait that fits past a limit: the floor alone is taken then.
    if (waitMs > policy.maxInlineWaitMs || waitMs > remainingMs) waitMs = serverWaitMs;
    return {
      decision: "retry",
      waitMs,
      notBefore: at(waitMs),
      waitSource: verdict.waitSource ?? "server",
      reason: `Retry ${history.attempts + 1} after ${seconds(waitMs)}: the server's wait of ${seconds(serverWaitMs)}${waitMs > serverWaitMs ? " plus jitter" : ""}. ${verdict.reason}`,
    };
  }

  const waitMs = backoffMs(policy.jitter, {
    retry: history.attempts,
    baseMs: policy.backoffBaseMs,
    capMs: policy.backoffCapMs,
    previousWaitMs: history.previousWaitMs ?? null,
    random,
  });
  if (waitMs > remainingMs) {
    return {
      decision: "fail",
      reason: `No wait from the server and the ${seconds(waitMs)} backoff would pass the total-time limit. ${verdict.reason}`,
      notBefore: null,
    };
  }
  if (waitMs > policy.maxInlineWaitMs) {
    return { decision: "defer", waitMs, notBefore: at(waitMs), reason: `Backoff of ${seconds(waitMs)} exceeds the inline limit. ${verdict.reason}` };
  }
  return {
    decision: "retry",
    waitMs,
    notBefore: at(waitMs),
    waitSource: `backoff:${policy.jitter}`,
    reason: `Retry ${history.attempts + 1} after ${seconds(waitMs)} of ${policy.jitter === "none" ? "exponential" : `${policy.jitter}-jitter`} backoff (the server gave no wait). ${verdict.reason}`,
  };
}

function isKnownWait(waitMs: number | null): waitMs is number {
  return waitMs !== null && Number.isFinite(waitMs) && waitMs >= 0;
}
