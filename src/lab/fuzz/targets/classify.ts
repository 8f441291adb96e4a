/**
 * classify on random responses. Properties: it never throws; minWaitMs is null or a safe
 * non-negative integer no larger than the cap; every ISO string is valid; and wherever the
 * verdict waits at all, it waits at least a valid Retry-After present in the response (the
 * server's wait is a floor: "waits below a valid server wait").
 */
import { classify, DEFAULT_MAX_SERVER_WAIT_MS } from "../../../engine";
import type { Verdict } from "../../../engine";
import { Gen } from "../random";
import { randomResponse } from "../responses";
import { isValidIso, isWholeWait, Tally } from "../tally";
import type { FuzzResult, FuzzTarget } from "../types";

const NOW_MS = Date.UTC(2026, 10, 30, 12);

/** The Retry-After the response carries as plain delay-seconds within the cap, in ms, or null. */
export function validRetryAfterMs(headers: Record<string, unknown>): number | null {
  const names = Object.keys(headers).filter((n) => n.toLowerCase() === "retry-after");
  if (names.length !== 1) return null;
  const value = headers[names[0]!];
  if (typeof value !== "string" && typeof value !== "number") return null;
  const text = String(value).trim();
  if (!/^\d{1,15}$/.test(text)) return null;
  const waitMs = Number(text) * 1000;
  return waitMs <= DEFAULT_MAX_SERVER_WAIT_MS ? waitMs : null;
}

export function verdictProblems(verdict: Verdict): string[] {
  const broken: string[] = [];
  if (verdict.minWaitMs !== null && !isWholeWait(verdict.minWaitMs)) broken.push(`minWaitMs ${verdict.minWaitMs}`);
  if (verdict.minWaitMs !== null && verdict.minWaitMs > DEFAULT_MAX_SERVER_WAIT_MS) broken.push(`minWaitMs ${verdict.minWaitMs} above the cap`);
  if (verdict.waitAboveCapMs !== undefined && !(verdict.waitAboveCapMs > DEFAULT_MAX_SERVER_WAIT_MS)) broken.push(`waitAboveCapMs ${verdict.waitAboveCapMs}`);
  if (verdict.budget?.resetAt != null && !isValidIso(verdict.budget.resetAt)) broken.push(`budget.resetAt ${verdict.budget.resetAt}`);
  if (typeof verdict.reason !== "string" || verdict.reason === "") broken.push("no reason");
  return broken;
}

export const classifyTarget: FuzzTarget = {
  name: "classify",
  run(seed: number, count: number): FuzzResult {
    const gen = new Gen(seed);
    const tally = new Tally(true);
    for (let i = 0; i < count; i++) {
      const input = randomResponse(gen);
      const nowMs = gen.chance(0.9) ? NOW_MS : gen.pick([0, -8.64e15, 8.64e15, gen.instantMs()]);
      tally.attempt(input, () => {
        const verdict = classify(input, { nowMs });
        const floorMs = validRetryAfterMs(input.response.headers);
        const waits = verdict.throttled || verdict.retryable;
        if (floorMs !== null && waits && verdict.waitAboveCapMs === undefined && !(verdict.minWaitMs !== null && verdict.minWaitMs >= floorMs)) {
          tally.waitBelowServerWait(input, `minWaitMs ${verdict.minWaitMs} < Retry-After ${floorMs} ms`);
        }
        return verdictProblems(verdict);
      });
    }
    return tally.result();
  },
};
