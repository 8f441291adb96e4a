/**
 * The timing decision for the next attempt. The server's wait is a floor and is never shortened;
 * a small jitter goes on top so that workers throttled together come back spread out; with no
 * wait from the server, exponential backoff with the chosen jitter. A wait longer than the
 * inline limit, or ending past the deadline, defers with a notBefore instead of retrying early,
 * and a wait above the cap (maxServerWaitMs) is deferred, never slept.
 */
import { backoffMs } from "./backoff";
import { DEFAULT_MAX_SERVER_WAIT_MS, isoAt, MAX_EPOCH_MS, PER_ATTEMPT_SUFFIX } from "./time";
import type { AttemptHistory, Decision, PlanOptions, RetryPolicy, Verdict } from "./types";

export const DEFAULT_POLICY: Readonly<Required<RetryPolicy>> = Object.freeze({
  // Ten calls, the first included. Where a limit shows nothing (a bare 429 over a minute's window,
  // Stripe's, Slack's), the request in flight when the governor begins to learn the window makes
  // its probes, and the equal-jitter backoff between them sums to 30 to 60 s over eight calls: at
  // eight, it was deferred (to the Deferred branch or a flow retry) just before the window it was
  // learning came back, within Max Total. At five (the first default) many workers each met five
  // throttles while the window was learned. Ours only over the 4,854 lab scenarios of the
  // twenty-ninth session: runs with a job deferred with no quota spent 46 -> 14, such jobs 350 ->
  // 164, calls +221 (0.02 %), throttles +35; no goal newly met or missed (their throttled share
  // misses). From five to eight, such jobs went 479 -> 101 over 1,189 scenarios; twelve took the
  // runs 14 -> 10 for 200 throttles more. Max Total (10 minutes) still bounds the whole request.
  maxAttempts: 10,
  // Ten minutes, as the component's Max Total: a request's whole time, waits for its turn included
  // (a minute's window paced seven windows deep still fits, within Prismatic's 15-minute execution).
  maxTotalMs: 10 * 60_000,
  deadlineMs: null,
  // Two minutes: a per-minute window's reset, rounded up to whole seconds and measured against
  // the response's Date, often lands just past 60 s; a 60 s limit would defer most of them.
  maxInlineWaitMs: 120_000,
  backoffBaseMs: 500,
  backoffCapMs: 30_000,
  jitter: "equal",
  serverWaitJitterRatio: 0.1,
  serverWaitJitterMaxMs: 1000,
  // 31 days: the longest a reset can plausibly be (a monthly quota); a larger value is a bug or
  // a "never", and sleeping it would block the scope for years (Retry-After: 1e10 is year 2343).
  maxServerWaitMs: DEFAULT_MAX_SERVER_WAIT_MS,
});

const JITTERS = new Set(["full", "equal", "decorrelated", "none"]);

/** "2 s", "2.10 s", "60.5 s": whole seconds when whole, never rounded to a different second. */
function seconds(ms: number): string {
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/**
 * What is wrong with a policy, in one line, or null. Every duration must be a number from 0 to
 * the Date range (8.64e15 ms), so that no wait or instant computed from it can be invalid.
 */
export function policyProblem(policy: RetryPolicy): string | null {
  const durations = ["maxTotalMs", "maxInlineWaitMs", "backoffBaseMs", "backoffCapMs", "serverWaitJitterMaxMs", "maxServerWaitMs"] as const;
  for (const name of durations) {
    const value = policy[name];
    if (value === undefined && name === "maxServerWaitMs") continue;
    if (typeof value !== "number" || !(value >= 0 && value <= MAX_EPOCH_MS)) return `policy.${name} is ${String(value)}; give a number of milliseconds from 0 to 8.64e15`;
  }
  if (typeof policy.maxAttempts !== "number" || !(policy.maxAttempts >= 1)) return `policy.maxAttempts is ${String(policy.maxAttempts)}; give a whole number, 1 or more`;
  if (typeof policy.serverWaitJitterRatio !== "number" || !(policy.serverWaitJitterRatio >= 0 && policy.serverWaitJitterRatio <= 10)) {
    return `policy.serverWaitJitterRatio is ${String(policy.serverWaitJitterRatio)}; give a ratio from 0 to 10 (0.1 = 10%)`;
  }
  if (policy.deadlineMs !== null && !(typeof policy.deadlineMs === "number" && Math.abs(policy.deadlineMs) <= MAX_EPOCH_MS)) {
    return `policy.deadlineMs is ${String(policy.deadlineMs)}; give an epoch-ms time or null`;
  }
  if (!JITTERS.has(policy.jitter)) return `policy.jitter is "${String(policy.jitter)}"; use full, equal, decorrelated or none`;
  return null;
}

/** A random draw kept in [0, 1): a broken source must not make a wait negative or NaN. */
function draw(random: () => number): number {
  const value = random();
  return Number.isFinite(value) ? Math.min(Math.max(value, 0), 0.999_999_999) : 0;
}

/** The server's wait when it is a usable number of ms, else null; a per-attempt one times the attempts made. */
function serverWaitOf(verdict: Verdict, history: AttemptHistory): number | null {
  const waitMs = verdict.minWaitMs;
  if (!(typeof waitMs === "number" && Number.isFinite(waitMs) && waitMs >= 0)) return null;
  const perAttempt = verdict.waitSource?.endsWith(PER_ATTEMPT_SUFFIX) === true;
  const factor = perAttempt && Number.isFinite(history.attempts) ? Math.max(1, Math.floor(history.attempts)) : 1;
  return Math.min(Number.MAX_SAFE_INTEGER, Math.ceil(waitMs) * factor);
}

export function plan(verdict: Verdict, history: AttemptHistory, policy: RetryPolicy, options: PlanOptions): Decision {
  const { nowMs } = options;
  if (!Number.isFinite(nowMs)) throw new RangeError("plan: options.nowMs must be a finite epoch-milliseconds number");
  const problem = policyProblem(policy);
  if (problem !== null) return { decision: "fail", reason: `Not retried: ${problem}.`, notBefore: null };
  const at = (waitMs: number): string => isoAt(nowMs + waitMs);
  const capMs = policy.maxServerWaitMs ?? DEFAULT_MAX_SERVER_WAIT_MS;
  const serverWaitMs = serverWaitOf(verdict, history);

  // A permission or validation answer is final unless the server itself said to retry it.
  const serverSaysRetry = verdict.retryAllowed === true && verdict.retryable;
  if ((verdict.limitType === "permission" || verdict.limitType === "validation") && !serverSaysRetry) {
    return { decision: "fail", reason: `Not retried: ${verdict.reason}`, notBefore: null };
  }
  if (verdict.retryAllowed === false) {
    return { decision: "fail", reason: `The server says not to retry this request. ${verdict.reason}`, notBefore: null };
  }
  if (!verdict.throttled && !verdict.retryable) return { decision: "done", reason: verdict.reason };

  const aboveCapMs = verdict.waitAboveCapMs ?? (serverWaitMs !== null && serverWaitMs > capMs ? serverWaitMs : null);
  if (aboveCapMs !== null) {
    return {
      decision: "defer",
      waitMs: capMs,
      notBefore: at(capMs),
      reason: `The server asks for ${seconds(Math.min(aboveCapMs, Number.MAX_SAFE_INTEGER))}, above the cap of ${seconds(capMs)} (maxServerWaitMs): not slept; deferred by the cap, to ${at(capMs)}. ${verdict.reason}`,
    };
  }
  if (!verdict.retryable) {
    // A quota (daily, monthly, spend): never retried in this run; defer to its reset when known.
    if (serverWaitMs !== null) {
      return {
        decision: "defer",
        waitMs: serverWaitMs,
        notBefore: at(serverWaitMs),
        reason: `A ${verdict.limitType} limit that is not retried inline; the work can resume at ${at(serverWaitMs)} (in ${seconds(serverWaitMs)}). ${verdict.reason}`,
      };
    }
    return { decision: "fail", reason: `A ${verdict.limitType} limit with no known reset; not retried. ${verdict.reason}`, notBefore: null };
  }

  if (!(history.attempts < policy.maxAttempts)) {
    const notBefore = serverWaitMs === null ? resumeAfterThrottle(verdict, history, policy, options) : at(serverWaitMs);
    const stopped = `${history.attempts} attempt(s) (maxAttempts ${policy.maxAttempts})`;
    return {
      decision: "fail",
      reason: notBefore === null ? `Gave up after ${stopped}. ${verdict.reason}` : `No attempt left after ${stopped}; resume at ${notBefore}. ${verdict.reason}`,
      notBefore,
    };
  }
  const firstAttemptAtMs = Number.isFinite(history.firstAttemptAtMs) ? history.firstAttemptAtMs : nowMs;
  const deadlineMs = Math.min(firstAttemptAtMs + policy.maxTotalMs, policy.deadlineMs ?? Number.POSITIVE_INFINITY);
  const remainingMs = deadlineMs - nowMs;
  if (serverWaitMs !== null) return planServerWait(verdict, history, policy, { nowMs, random: options.random }, serverWaitMs, remainingMs);
  return planBackoff(verdict, history, policy, { nowMs, random: options.random }, remainingMs);
}

/**
 * The jitter on top of a server's wait: a tenth of it (at most serverWaitJitterMaxMs). Where the
 * scope's state does not show concurrent executions (history.othersUnseen: cross-flow state, loaded
 * when each execution started), a request throttled again after waiting out the server's wait met
 * others that waited for the same instant, and they all come back together again a tenth of a wait
 * later: from its second throttle on the spread grows as a backoff does, from the base, doubling per
 * throttle, up to the cap ("Exponential Backoff And Jitter",
 * https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/). Where the state is
 * shared (one process, Redis), the governor already spaces them, and a wider spread only delays.
 */
function serverWaitSpreadMs(history: AttemptHistory, policy: RetryPolicy, serverWaitMs: number): number {
  const firstSpreadMs = Math.min(policy.serverWaitJitterMaxMs, serverWaitMs * policy.serverWaitJitterRatio);
  const throttles = history.throttledAttempts;
  if (history.othersUnseen !== true || typeof throttles !== "number" || !(throttles >= 2)) return firstSpreadMs;
  const backoffSpreadMs = Math.min(policy.backoffCapMs, policy.backoffBaseMs * 2 ** Math.min(30, Math.floor(throttles) - 1));
  return Math.max(firstSpreadMs, backoffSpreadMs);
}

function planServerWait(verdict: Verdict, history: AttemptHistory, policy: RetryPolicy, options: PlanOptions, serverWaitMs: number, remainingMs: number): Decision {
  const at = (waitMs: number): string => isoAt(options.nowMs + waitMs);
  if (serverWaitMs > policy.maxInlineWaitMs || serverWaitMs > remainingMs) {
    const limit = serverWaitMs > policy.maxInlineWaitMs ? `the inline limit of ${seconds(policy.maxInlineWaitMs)}` : "the time left before the deadline";
    return {
      decision: "defer",
      waitMs: serverWaitMs,
      notBefore: at(serverWaitMs),
      reason: `The server asks for ${seconds(serverWaitMs)}, more than ${limit}; resume at ${at(serverWaitMs)}. ${verdict.reason}`,
    };
  }
  const spreadMs = policy.jitter === "none" ? 0 : serverWaitSpreadMs(history, policy, serverWaitMs);
  let waitMs = serverWaitMs + Math.round(draw(options.random) * spreadMs);
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

/**
 * A server error that is no throttle (a 5xx naming no wait) backs off from a fifth of the base: the
 * AWS SDKs wait from 100 ms after a transient error and from 500 ms after a throttle
 * (https://github.com/aws/aws-sdk-js-v3/blob/main/packages/util-retry/src/constants.ts). A server that
 * limits nothing gains nothing from a longer wait, and two 503s in a run of 100 quick calls cost more
 * than all the rest (1.74 x ideal on a concurrency limit of 20 with 2 workers; 1.19 x with this).
 * A dropped connection keeps the base for a write: a write it carried may have been done and
 * counted, and its retry, answered from the idempotency key, may not be; sent at once, it took a
 * unit in the window it was dropped in, which then ended one unit short (registration day, 1,200
 * POSTs in windows of 120: an eleventh window in 6 of 6 seeds, against 3 of 6 with the base). A
 * read (a safe method, RFC 9110 §9.2.1, https://www.rfc-editor.org/rfc/rfc9110#section-9.2.1) has
 * no such outcome to wait for: its retry is a request of its own, spaced by the governor like any
 * other, and the full base only lengthened the tail of a short run (a sliding 25 per s, 2 workers,
 * 2 % drops: 1.18 x ideal). Nor has a dropped write where the scope limits requests in flight
 * (AttemptHistory.placesFreeOnAnswer): a place frees when its answer comes, not at a window's
 * reset, so the retry takes nothing from the requests after it, and it backs off from the fifth
 * too. It is still not sent at once: the write may still be running on the server, and a retry with
 * its idempotency key meanwhile is answered 409 Conflict, not with the write's result (the IETF
 * Idempotency-Key draft, https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/
 * §2.6; Stripe saves no result for "a request that conflicts with another that's executing
 * concurrently", https://docs.stripe.com/idempotency). A concurrency limit of 10 behind GitHub's
 * headers, 50 writers, 2 % drops: its dropped writes came back one by one after the rest (1.78 x
 * ideal; 1.18 x with this). Nor where the state sees every claim on the budget
 * (AttemptHistory.claimsAllSeen: one process or Redis, and no one else's spending in the count):
 * the dropped attempt's slot stays in the governor's log as a unit spent, the retry claims a slot
 * of its own (and where the server's count is read, the unit shows there), so the retry is spaced
 * as any claim and the base only held it back (a concurrency limit of 100 never reached by 35
 * writers with 2 % drops, lab:random seed 1111 #12: 2.93 -> 2.00 x ideal). Where executions load
 * stale copies of the state (cross-flow) or the count shows others spending, the unit may be
 * counted unseen, and the base stays (registration day over cross-flow state: its 1.01 x kept).
 * Keeping the base also behind a limit learned from throttles alone (no count to read) was
 * measured and not kept: over eight reseeded copies each of three silent scenarios with dropped
 * writes, 1 sooner, 6 later, 608 -> 619 throttles.
 */
const TRANSIENT_BASE_SHARE = 0.2;
const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

/** Whether a verdict backs off from the whole base: a throttle, or a write that got no answer where a window may have counted it unseen. */
function backsOffFromWholeBase(verdict: Verdict, history: AttemptHistory): boolean {
  if (verdict.throttled) return true;
  return droppedWrite(verdict, history) && history.placesFreeOnAnswer !== true && history.claimsAllSeen !== true;
}

/** A write (no safe method) that got no answer: it may have been done. */
function droppedWrite(verdict: Verdict, history: AttemptHistory): boolean {
  return verdict.status === 0 && !SAFE_METHODS.has(history.method ?? "");
}

/**
 * Such a fault (a 5xx naming no wait, a read that got no answer) is retried once at once, and backed
 * off from the second retry on: "most errors are resolved immediately by a second try without a
 * delay" (urllib3's Retry, whose backoff sleeps 0, 0.2, 0.4 s...,
 * https://urllib3.readthedocs.io/en/1.26.x/reference/urllib3.util.html#urllib3.util.retry.Retry),
 * and a dropped keep-alive socket is the commonest of them. The governor still spaces the retry as
 * any request, and a throttle or a dropped write keeps its wait. Ours only over 599 scenarios (with
 * a throttle's backoff counting the request's throttles, below): 52 sooner, 9 later, throttles
 * 6,370 -> 6,386; beside every peer, 9 more met and 2 fewer of the 79 that moved (concurrency 5
 * behind GitHub's headers, 1 worker, faults: 1.16 -> 1.00 x).
 */
function retriesAtOnce(verdict: Verdict, history: AttemptHistory): boolean {
  return history.attempts <= 1 && !verdict.throttled && !droppedWrite(verdict, history);
}

/** The backoff before the next attempt when the server named no wait. */
function backoffWaitMs(verdict: Verdict, history: AttemptHistory, policy: RetryPolicy, options: PlanOptions): number {
  if (retriesAtOnce(verdict, history)) return 0;
  const previousWaitMs = history.previousWaitMs;
  // A throttle's backoff grows with the request's throttles: a fault retried at once and then
  // throttled (a limit not yet learned) is the request's first throttle, not its second.
  const throttles = history.throttledAttempts;
  const retry = verdict.throttled && typeof throttles === "number" && throttles >= 1 ? Math.min(history.attempts, throttles) : history.attempts;
  return backoffMs(policy.jitter, {
    retry,
    baseMs: backsOffFromWholeBase(verdict, history) ? policy.backoffBaseMs : policy.backoffBaseMs * TRANSIENT_BASE_SHARE,
    capMs: policy.backoffCapMs,
    previousWaitMs: typeof previousWaitMs === "number" && Number.isFinite(previousWaitMs) ? previousWaitMs : null,
    random: () => draw(options.random),
  });
}

/**
 * When a throttle with no wait named ends the attempts or the time, the backoff the next attempt
 * would have waited is the time to resume from: the request is deferred with it (a Deferred
 * branch, or Prismatic's flow retry) rather than given up. A rate limit is not the request's own
 * failure: the breaker's probe, sent again and again while a 60 s window is spent, took every throttle
 * of the scope and gave up after 5, although the others waiting behind it succeeded later. So is a
 * transient fault (a 503) that ends attempts a rate limit took before it: a write throttled four
 * times behind Stripe's silence and answered 503 on its fifth was given up (lab:random seed 651 #12,
 * the one failed job of 480 fresh scenarios), where a throttle there would have deferred it.
 */
function resumeAfterThrottle(verdict: Verdict, history: AttemptHistory, policy: RetryPolicy, options: PlanOptions): string | null {
  return throttleTookAttempts(verdict, history.throttledAttempts) ? isoAt(options.nowMs + backoffWaitMs(verdict, history, policy, options)) : null;
}

/** The request's attempts went to a rate limit: this one was throttled, or it is a transient fault after throttled ones (AttemptHistory.throttledAttempts). */
export function throttleTookAttempts(verdict: Verdict, throttledAttempts: number | undefined): boolean {
  if (verdict.throttled) return true;
  return verdict.retryable && typeof throttledAttempts === "number" && throttledAttempts >= 1;
}

function planBackoff(verdict: Verdict, history: AttemptHistory, policy: RetryPolicy, options: PlanOptions, remainingMs: number): Decision {
  const waitMs = backoffWaitMs(verdict, history, policy, options);
  if (waitMs > remainingMs) {
    return {
      decision: "fail",
      reason: `No wait from the server and the ${seconds(waitMs)} backoff would pass the total-time limit. ${verdict.reason}`,
      notBefore: verdict.throttled ? isoAt(options.nowMs + waitMs) : null,
    };
  }
  const notBefore = isoAt(options.nowMs + waitMs);
  if (waitMs > policy.maxInlineWaitMs) {
    return { decision: "defer", waitMs, notBefore, reason: `Backoff of ${seconds(waitMs)} exceeds the inline limit. ${verdict.reason}` };
  }
  return {
    decision: "retry",
    waitMs,
    notBefore,
    waitSource: `backoff:${policy.jitter}`,
    reason: retriesAtOnce(verdict, history)
      ? `Retry ${history.attempts + 1} at once: a fault's first retry does not wait (the server gave no wait). ${verdict.reason}`
      : `Retry ${history.attempts + 1} after ${seconds(waitMs)} of ${policy.jitter === "none" ? "exponential" : `${policy.jitter}-jitter`} backoff (the server gave no wait). ${verdict.reason}`,
  };
}
