/**
 * plan on classify's own verdicts, with random policies (valid ones and ones a caller could pass:
 * NaN, Infinity, negative), random histories and random sources that misbehave. Properties: it
 * never throws; a retry or defer waits a safe non-negative integer and names a valid instant; it
 * never waits less than a valid server wait (minWaitMs within the policy's cap); a wait above the
 * cap is never retried; "done" only for an answer that is neither a throttle nor retryable.
 */
import { classify, DEFAULT_MAX_SERVER_WAIT_MS, DEFAULT_POLICY, plan, policyProblem } from "../../../engine";
import type { Decision, RetryPolicy, Verdict } from "../../../engine";
import { Gen } from "../random";
import { randomResponse } from "../responses";
import { isValidIso, isWholeWait, Tally } from "../tally";
import type { FuzzResult, FuzzTarget } from "../types";

const NOW_MS = Date.UTC(2026, 10, 30, 12);

function duration(gen: Gen, typical: number): number {
  if (gen.chance(0.85)) return Math.round(typical * gen.random() * 4);
  return gen.pick([0, 1, -1, Number.NaN, Number.POSITIVE_INFINITY, 8.64e15, 1e300, 0.5]);
}

export function randomPolicy(gen: Gen): RetryPolicy {
  if (gen.chance(0.3)) return DEFAULT_POLICY;
  return {
    maxAttempts: gen.chance(0.9) ? gen.int(1, 10) : gen.pick([0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2.5]),
    maxTotalMs: duration(gen, 300_000),
    deadlineMs: gen.chance(0.7) ? null : gen.chance(0.9) ? NOW_MS + gen.int(-60_000, 600_000) : gen.pick([Number.NaN, 9e15]),
    maxInlineWaitMs: duration(gen, 120_000),
    backoffBaseMs: duration(gen, 500),
    backoffCapMs: duration(gen, 30_000),
    jitter: gen.chance(0.97) ? gen.pick(["full", "equal", "decorrelated", "none"] as const) : ("wobbly" as RetryPolicy["jitter"]),
    serverWaitJitterRatio: gen.chance(0.9) ? gen.random() : gen.pick([-1, Number.NaN, 11]),
    serverWaitJitterMaxMs: duration(gen, 1000),
    ...(gen.chance(0.5) ? { maxServerWaitMs: gen.chance(0.9) ? gen.int(0, 40) * 86_400_000 : Number.NaN } : {}),
  };
}

function randomSource(gen: Gen): () => number {
  if (gen.chance(0.95)) return gen.random;
  const value = gen.pick([Number.NaN, -1, 1, 7, Number.POSITIVE_INFINITY]);
  return () => value;
}

/** The properties of one decision; a wait shorter than the server's is reported through `below`. */
export function decisionProblems(verdict: Verdict, policy: RetryPolicy, decision: Decision, below: (detail: string) => void): string[] {
  const broken: string[] = [];
  if (decision.decision === "retry" || decision.decision === "defer") {
    if (!isWholeWait(decision.waitMs)) broken.push(`waitMs ${decision.waitMs}`);
    if (!isValidIso(decision.notBefore)) broken.push(`notBefore ${decision.notBefore}`);
    const capMs = policy.maxServerWaitMs ?? DEFAULT_MAX_SERVER_WAIT_MS;
    if (verdict.minWaitMs !== null && verdict.minWaitMs <= capMs && decision.waitMs < verdict.minWaitMs) below(`${decision.decision} after ${decision.waitMs} ms < server wait ${verdict.minWaitMs} ms`);
    if (decision.decision === "retry" && (verdict.waitAboveCapMs !== undefined || (verdict.minWaitMs !== null && verdict.minWaitMs > capMs))) broken.push("retried a wait above the cap");
  } else if (decision.decision === "fail") {
    if (decision.notBefore !== null && !isValidIso(decision.notBefore)) broken.push(`notBefore ${decision.notBefore}`);
  } else if (decision.decision === "done" && (verdict.throttled || verdict.retryable) && policyProblem(policy) === null) {
    broken.push("done for a throttle or a retryable answer");
  }
  if (typeof decision.reason !== "string" || decision.reason === "") broken.push("no reason");
  return broken;
}

export const planTarget: FuzzTarget = {
  name: "plan",
  run(seed: number, count: number): FuzzResult {
    const gen = new Gen(seed);
    const tally = new Tally(true);
    for (let i = 0; i < count; i++) {
      const response = randomResponse(gen);
      const nowMs = gen.chance(0.95) ? NOW_MS : gen.pick([8.64e15 - 1000, -8.64e15, 0]);
      const policy = randomPolicy(gen);
      const history = { attempts: gen.chance(0.95) ? gen.int(1, 8) : gen.pick([0, -3, Number.NaN, 1e9]), firstAttemptAtMs: nowMs - gen.int(0, 600_000), previousWaitMs: gen.chance(0.5) ? gen.int(0, 60_000) : null };
      const random = randomSource(gen);
      tally.attempt({ response, policy, history }, () => {
        // classify runs inside the attempt: if it ever threw, that is a throw of this run too.
        const verdict = classify(response, { nowMs });
        const decision = plan(verdict, history, policy, { nowMs, random });
        return decisionProblems(verdict, policy, decision, (detail) => tally.waitBelowServerWait({ response, policy, history }, detail));
      });
    }
    return tally.result();
  },
};
