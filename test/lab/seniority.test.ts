/**
 * Many workers on a slow bucket whose rate is an estimate: starts beyond the horizon join no
 * queue, so each request tells the governor how long it has waited (ClaimRequest.waitedMs) and the
 * longest waiter reaches each start first. Found by a random scenario (seed 141 #29): without it
 * the newest requests took each start and 37 of 320 jobs, waiting since the run began, reached
 * their 5-minute deadline and were deferred with no quota spent. Virtual clock: 7 minutes in a
 * second or two.
 */
import { describe, expect, it } from "vitest";
import { runStrategy } from "../../src/lab/run";
import { parseScenario } from "../../src/lab/scenario";
import { strategyByName, STRATEGY_NAMES } from "../../src/lab/strategies";

describe("requests waiting on an estimated rate", () => {
  it("50 workers on a token bucket of 40 per 60 s: every job done, none deferred at its deadline", async () => {
    const scenario = parseScenario(
      {
        name: "seniority",
        server: { limiter: "token-bucket", limit: 40, windowMs: 60_000, dialect: "generic", budgetHeaders: true, retryAfter: "seconds", latencyMs: 50 },
        workload: { jobs: 320, workers: 50, method: "GET", coordination: "in-process" },
        clock: "virtual",
        seed: 141029,
      },
      STRATEGY_NAMES,
    );
    const { result } = await runStrategy(scenario, strategyByName("ours")!);
    expect(result).toMatchObject({ ok: 320, failed: 0, deferred: 0, throttled: 0 });
    expect(result.makespanMs / result.idealMs).toBeLessThan(1.05);
  });
});
