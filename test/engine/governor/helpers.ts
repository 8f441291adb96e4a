/**
 * A scope's governor driven by hand: plain-number time (a fake clock that only moves when a test
 * says so), fixed `random` draws, and answers built from a few fields.
 */
import { expect } from "vitest";
import { claim, DEFAULT_GOVERNOR_OPTIONS, emptyState, holdUntil, observe, release, type ClaimResult, type GovernorOptions, type GovernorState, type Observation, type ObservedBudget } from "../../../src/engine/governor";

/** 2027-01-15T08:00:00Z: an ordinary instant, far from the edges of the Date range. */
export const T0 = Date.UTC(2027, 0, 15, 8);
export const HOUR_MS = 3_600_000;

export type Go = Extract<ClaimResult, { kind: "go" }>;

/** A budget as an answer shows it; fields not given are not shown. */
export function shown(fields: Partial<ObservedBudget> & { remaining: number }): ObservedBudget {
  return { limit: null, resetAtMs: null, windowMs: null, restorePerSecond: null, unitsPerRequest: null, ...fields };
}

export class Scope {
  state: GovernorState;
  readonly options: GovernorOptions;

  constructor(nowMs = T0, options: Partial<GovernorOptions> = {}, state?: GovernorState) {
    this.options = { ...DEFAULT_GOVERNOR_OPTIONS, ...options };
    this.state = state ?? emptyState(nowMs);
  }

  /** A scope whose first claim (a probe sent at T0) was answered at answeredAtMs, showing this budget. */
  static afterReading(answeredAtMs: number, budget: ObservedBudget, options: Partial<GovernorOptions> = {}): Scope {
    const scope = new Scope(T0, options);
    scope.answer(scope.go(T0), answeredAtMs, { budget });
    return scope;
  }

  claim(nowMs: number, latestStartMs = nowMs + HOUR_MS, random?: number): ClaimResult {
    const next = claim(this.state, { nowMs, latestStartMs, ...(random === undefined ? {} : { random }) }, this.options);
    this.state = next.state;
    return next.result;
  }

  /** A held grant claimed again (ClaimRequest.holding): kept unless an earlier start is granted. */
  claimAgain(nowMs: number, held: Pick<Go, "seq" | "atMs">, latestStartMs = nowMs + HOUR_MS): ClaimResult {
    const next = claim(this.state, { nowMs, latestStartMs, holding: { seq: held.seq, atMs: held.atMs } }, this.options);
    this.state = next.state;
    return next.result;
  }

  /** A claim that must be granted. */
  go(nowMs: number, latestStartMs = nowMs + HOUR_MS, random?: number): Go {
    const result = this.claim(nowMs, latestStartMs, random);
    if (result.kind !== "go") expect.fail(`expected go at ${nowMs - T0} ms, got ${JSON.stringify(result)}`);
    return result;
  }

  answer(granted: Pick<Go, "seq" | "atMs">, nowMs: number, fields: Partial<Observation> = {}): GovernorState {
    const observation: Observation = { seq: granted.seq, sentAtMs: granted.atMs, nowMs, kind: "ok", limitType: "none", waitMs: null, waitFromServer: false, budget: null, reason: "200 OK", ...fields };
    this.state = observe(this.state, observation, this.options);
    return this.state;
  }

  /** A 429 whose Retry-After (from the server) is waitMs. */
  throttle(granted: Pick<Go, "seq" | "atMs">, nowMs: number, waitMs: number | null, fields: Partial<Observation> = {}): GovernorState {
    return this.answer(granted, nowMs, { kind: "throttled", limitType: "burst", waitMs, waitFromServer: waitMs !== null, reason: "429 Too Many Requests", ...fields });
  }

  lost(granted: Pick<Go, "seq" | "atMs">, nowMs: number): GovernorState {
    return this.answer(granted, nowMs, { kind: "lost", reason: "no answer" });
  }

  release(seq: number): GovernorState {
    this.state = release(this.state, seq);
    return this.state;
  }

  holdUntil(untilMs: number, reason = "Record Backoff", limitType: GovernorState["notBeforeType"] = "quota"): GovernorState {
    this.state = holdUntil(this.state, untilMs, reason, limitType);
    return this.state;
  }
}

/** Sends `count` requests one after another from fromMs (the claim's own start when it must wait), each answered ok after rttMs. */
export function successes(scope: Scope, count: number, rttMs: number, fromMs = T0): Go[] {
  const sent: Go[] = [];
  let nowMs = fromMs;
  while (sent.length < count) {
    const result = scope.claim(nowMs);
    if (result.kind === "go") {
      sent.push(result);
      scope.answer(result, result.atMs + rttMs);
      nowMs = result.atMs + rttMs;
    } else {
      nowMs = result.kind === "wait" ? result.untilMs : result.notBeforeMs;
    }
  }
  return sent;
}

/**
 * Nothing shown, no wait told: ten successes and a throttle after the client's backoff of firstWaitMs
 * (the first lesson: 10 per 1 s), then `admitted` more and a throttle after secondWaitMs, a rate well
 * below it: a bucket. Returns the second throttle's grant.
 */
export function bucketFromTwoLessons(scope: Scope, firstWaitMs: number, admitted: number, secondWaitMs: number): Go {
  const sent = successes(scope, 10, 10);
  const eleventh = scope.go(sent[9]!.atMs + 10);
  scope.throttle(eleventh, eleventh.atMs + 10, firstWaitMs, { waitFromServer: false });
  const again = successes(scope, admitted, 10, scope.state.notBeforeMs);
  const throttled = scope.go(again[admitted - 1]!.atMs + 10);
  scope.throttle(throttled, throttled.atMs + 10, secondWaitMs, { waitFromServer: false });
  return throttled;
}
