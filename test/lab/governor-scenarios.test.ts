/**
 * Scenarios a governor rule was made for, run with ours on the component's defaults (virtual clock:
 * minutes in a second or two). Each case says what it showed before its rule.
 */
import { describe, expect, it } from "vitest";
import { runStrategy } from "../../src/lab/run";
import { parseScenario } from "../../src/lab/scenario";
import { strategyByName, STRATEGY_NAMES } from "../../src/lab/strategies";
import type { StrategyResult } from "../../src/lab/types";

async function oursOn(name: string, server: Record<string, unknown>, workload: Record<string, unknown>, seed: number): Promise<StrategyResult> {
  const scenario = parseScenario({ name, server, workload, clock: "virtual", seed }, STRATEGY_NAMES);
  return (await runStrategy(scenario, strategyByName("ours")!)).result;
}

describe("ours on the scenarios its governor rules were made for", () => {
  // Many workers on a slow bucket whose rate is an estimate: starts beyond the horizon join no
  // queue, so each request tells the governor how long it has waited (ClaimRequest.waitedMs) and the
  // longest waiter reaches each start first. Found by a random scenario (seed 141 #29): without it
  // the newest requests took each start and 37 of 320 jobs, waiting since the run began, reached
  // their 5-minute deadline and were deferred with no quota spent.
  it("50 workers on a token bucket of 40 per 60 s: every job done, none deferred at its deadline", async () => {
    const result = await oursOn(
      "seniority",
      { limiter: "token-bucket", limit: 40, windowMs: 60_000, dialect: "generic", budgetHeaders: true, retryAfter: "seconds", latencyMs: 50 },
      { jobs: 320, workers: 50, method: "GET", coordination: "in-process" },
      141029,
    );
    expect(result).toMatchObject({ ok: 320, failed: 0, deferred: 0, throttled: 0 });
    expect(result.makespanMs / result.idealMs).toBeLessThan(1.05);
  });

  // A sliding window behind whole-second resets (X-RateLimit-Reset, epoch seconds): its length is
  // inferred from the resets, so a start beyond the next window is claimed when it is a window away,
  // and a reading's reset is compared with the one the previous reading showed, not with the earlier
  // one it was merged with (src/engine/governor/observe.ts resetMovedOn). Read against the merged
  // one, the changed timing made a reset 40 ms on look a second on, and the log was taken for a
  // bucket: 27 throttled, 1.51 x ideal.
  it("a sliding window of 5 per 1 s behind whole-second resets, 25 workers: none throttled, within 1.1 x ideal", async () => {
    const result = await oursOn("inferred window", { limiter: "sliding-window", limit: 5, windowMs: 1000, dialect: "generic", latencyMs: 40 }, { jobs: 150, workers: 25 }, 303);
    expect(result).toMatchObject({ ok: 150, failed: 0, deferred: 0, throttled: 0 });
    expect(result.makespanMs / result.idealMs).toBeLessThan(1.1);
  });

  // HubSpot's daily limit resets at the account's midnight, in a time zone no answer gives
  // (src/engine/dialects/hubspot.ts). Read as a quota with no wait, each job after it ran out called,
  // was throttled and gave up with nothing to resume by: 100 of 400 failed, 25 % of calls throttled.
  it("HubSpot's daily limit of 300, 400 writes from 16 workers: the rest deferred, not failed, and not sent", async () => {
    const result = await oursOn("daily", { limiter: "daily-quota", limit: 300, windowMs: 86_400_000, dialect: "hubspot", latencyMs: 60 }, { jobs: 400, workers: 16, method: "POST" }, 312);
    expect(result).toMatchObject({ ok: 300, failed: 0, deferred: 100, duplicates: 0 });
    expect(result.throttled / result.calls).toBeLessThanOrEqual(0.01);
  });

  // A concurrency limit behind Stripe's silence (no budget, no wait): the slow start's wave is
  // throttled while the scope is still read as a rate, and each throttled request backs off half a
  // second on its own. The answers then show a limit on requests in flight, and a backoff of ours
  // ends there (src/client/run.ts sitOutRetryWait): the governor's in-flight cap holds the retry
  // until a place frees. Slept out, the retries came late: 1.54 x ideal (lab:random seed 291 #8).
  // With 50 workers and 20 ms answers the limit is learned before the wave's backoffs begin: judged
  // at the sleep, each throttle looked like one under a limit already known and was slept out, 250
  // to 490 ms, while places stood free. Judged at its answer (src/store/memory.ts BackoffNotNeeded),
  // it ends at once: 2.63 -> 1.33 x ideal (lab:random seed 1571 #24). That run's limit of 25 is now
  // found without a wave (past eight the slow start doubles no faster than once a second: 0
  // throttled, 2.58 x, the ramp being the run); at a limit of 10 the wave still comes, and its
  // backoffs slept out took 1.61 x against 1.13.
  it.each([
    { limit: 10, workers: 12, jobs: 200, latencyMs: 50, faults: { error503Share: 0.02, dropShare: 0.02 }, seed: 291008, within: 1.25 },
    { limit: 10, workers: 50, jobs: 300, latencyMs: 20, faults: undefined, seed: 1571024, within: 1.3 },
  ])("a concurrency limit of $limit behind Stripe's silence, $workers workers: the slow start's throttled wave retries under the cap it taught, within $within x ideal", async ({ limit, workers, jobs, latencyMs, faults, seed, within }) => {
    const result = await oursOn(
      "backoff ends",
      { limiter: "concurrency", limit, windowMs: 1000, dialect: "stripe", latencyMs, ...(faults ? { faults } : {}) },
      { jobs, workers, method: "GET", coordination: "in-process" },
      seed,
    );
    expect(result).toMatchObject({ ok: jobs, failed: 0, deferred: 0 });
    expect(result.makespanMs / result.idealMs).toBeLessThan(within);
  });

  // A write whose connection dropped backs off from the whole base under a rate (its retry may take
  // a second unit of the window it was dropped in), but where the scope limits requests in flight
  // its place is free again, and it backs off as a transient fault does (src/engine/plan.ts
  // TRANSIENT_BASE_SHARE). From the whole base, the dropped writes came back one by one after the
  // rest: 1.78 x ideal (lab:random seed 1371 #1).
  it("a concurrency limit of 10 behind GitHub's headers, 50 writers, 2 % drops: dropped writes retried soon, within 1.3 x ideal, none written twice", async () => {
    const result = await oursOn(
      "dropped writes under a concurrency limit",
      { limiter: "concurrency", limit: 10, windowMs: 1000, dialect: "github", budgetHeaders: true, retryAfter: "http-date", latencyMs: 20, faults: { error503Share: 0.02, dropShare: 0.02 } },
      { jobs: 200, workers: 50, method: "POST", coordination: "in-process" },
      1371001,
    );
    expect(result).toMatchObject({ ok: 200, failed: 0, deferred: 0, duplicates: 0 });
    expect(result.makespanMs / result.idealMs).toBeLessThan(1.3);
  });

  // Where the state sees every claim on the budget (one process, nothing in the count spent by
  // others), a dropped write's retry is spaced by the governor like any claim, and a unit the server
  // took for it shows in the next count: it backs off as a transient fault does (src/engine/plan.ts).
  // A limit never reached (100 in flight, 35 writers) gives the whole base nothing to guard, and its
  // dropped writes ended the run: 2.9 x ideal (lab:random seed 1111 #12; over these three seeds 2.86,
  // 4.22 and 2.93 x with the whole base, 1.67, 2.21 and 1.77 x with the fifth). With 35 writers and
  // 50 ms answers the run is now the slow start's ramp (past eight, no faster than a doubling a
  // second: 3.5 to 3.7 x either way); 8 writers leave the drops to tell: 1.23, 1.41 and 1.20 x with
  // the whole base, 1.12, 1.14 and 1.11 x with the fifth.
  it("8 writers under a concurrency limit of 100 they never reach, 2 % drops: dropped writes retried soon (mean of three seeds under 1.2 x ideal), none written twice", async () => {
    const ratios: number[] = [];
    for (const seed of [11110122, 11110124, 11110126]) {
      const result = await oursOn(
        "dropped writes where every claim is seen",
        { limiter: "concurrency", limit: 100, windowMs: 1000, dialect: "slack", budgetHeaders: true, retryAfter: "seconds", latencyMs: 50, faults: { error503Share: 0.02, dropShare: 0.02 } },
        { jobs: 200, workers: 8, method: "POST", coordination: "in-process" },
        seed,
      );
      expect(result).toMatchObject({ ok: 200, failed: 0, deferred: 0, duplicates: 0 });
      ratios.push(result.makespanMs / result.idealMs);
    }
    expect(ratios.reduce((sum, ratio) => sum + ratio, 0) / ratios.length).toBeLessThan(1.2);
  });
  // A server that ignores idempotency keys (server.honoursIdempotencyKey false): a user who read so
  // sends none, and a POST whose answer was dropped after the work was done is reported as of
  // unknown outcome, never repeated (src/engine/write-safety.ts). Sent with the job id as its key,
  // as every POST was before, 17 of 200 were written twice.
  it("POSTs to a server that ignores idempotency keys, 5 % of answers dropped: no write duplicated", async () => {
    const result = await oursOn(
      "no idempotency",
      { limiter: "fixed-window", limit: 10, windowMs: 1000, dialect: "generic", latencyMs: 80, honoursIdempotencyKey: false, faults: { error503Share: 0.02, dropShare: 0.05 } },
      { jobs: 200, workers: 8, method: "POST" },
      7,
    );
    expect(result.duplicates).toBe(0);
    expect(result.failed).toBeGreaterThan(0);
    expect(result.ok + result.failed).toBe(200);
  });
  // One worker behind a bare 429 over a minute's window (Stripe's silence): the request in flight
  // when the first window ran out makes every probe of the window's length: its eight calls ran
  // from 4 s to 48 s, and it was deferred 12 s or more before the window came back (lab:random seed
  // 2141 #24, over cross-flow state; the same in one process). Max Attempts defaults to ten.
  it("one worker behind Stripe's bare 429 over a fixed minute: no job deferred", async () => {
    const result = await oursOn(
      "one worker, a silent minute",
      { limiter: "fixed-window", limit: 20, windowMs: 60_000, dialect: "stripe", retryAfter: "absent", latencyMs: 100 },
      { jobs: 60, workers: 1, method: "GET", coordination: "in-process" },
      2141024,
    );
    expect(result).toMatchObject({ ok: 60, failed: 0, deferred: 0, duplicates: 0 });
  });
});
