/**
 * A sliding window behind whole-second resets (X-RateLimit-Reset, epoch seconds): its length is
 * inferred from the resets, so a start beyond the next window is claimed when it is a window away,
 * and a reading's reset is compared with the one the previous reading showed, not with the earlier
 * one it was merged with (src/engine/governor/observe.ts resetMovedOn). Read against the merged one,
 * the changed timing made a reset 40 ms on look a second on, and the log was taken for a bucket:
 * 27 throttled, 1.51 x ideal. Virtual clock.
 */
import { describe, expect, it } from "vitest";
import { runStrategy } from "../../src/lab/run";
import { parseScenario } from "../../src/lab/scenario";
import { strategyByName, STRATEGY_NAMES } from "../../src/lab/strategies";

describe("a sliding window behind whole-second resets", () => {
  it("5 per 1 s, 25 workers: none throttled, within 1.1 x ideal", async () => {
    const scenario = parseScenario(
      {
        name: "inferred window",
        server: { limiter: "sliding-window", limit: 5, windowMs: 1000, dialect: "generic", latencyMs: 40 },
        workload: { jobs: 150, workers: 25 },
        clock: "virtual",
        seed: 303,
      },
      STRATEGY_NAMES,
    );
    const { result } = await runStrategy(scenario, strategyByName("ours")!);
    expect(result).toMatchObject({ ok: 150, failed: 0, deferred: 0, throttled: 0 });
    expect(result.makespanMs / result.idealMs).toBeLessThan(1.1);
  });
});
