import { describe, expect, it } from "vitest";
import { runVirtual, VIRTUAL_START_MS } from "../../src/lab/clock";
import { runStrategy } from "../../src/lab/run";
import { parseScenario } from "../../src/lab/scenario";
import { strategyByName, STRATEGY_NAMES } from "../../src/lab/strategies";

const scenario = (seed: number) =>
  parseScenario(
    {
      name: "determinism",
      server: { limiter: "sliding-window", limit: 10, windowMs: 5000, dialect: "generic", retryAfter: "absent", latencyMs: 30, faults: { dropShare: 0.05, error503Share: 0.05 } },
      workload: { jobs: 60, workers: 6, method: "POST" },
      clock: "virtual",
      seed,
    },
    STRATEGY_NAMES,
  );

describe("virtual clock", () => {
  it("gives identical results and request timelines for the same seed", async () => {
    for (const name of ["full-jitter", "axios-retry", "ours"]) {
      const strategy = strategyByName(name)!;
      const first = await runStrategy(scenario(11), strategy);
      const second = await runStrategy(scenario(11), strategy);
      expect(second.result).toEqual(first.result);
      expect(second.requests).toEqual(first.requests);
      expect(first.result.ok + first.result.failed + first.result.deferred).toBe(60);
    }
  });

  it("a different seed changes where the jitter and faults fall", async () => {
    const strategy = strategyByName("full-jitter")!;
    const a = await runStrategy(scenario(11), strategy);
    const b = await runStrategy(scenario(12), strategy);
    expect(b.requests.map((r) => r.atMs)).not.toEqual(a.requests.map((r) => r.atMs));
  });

  it("makes hours pass in moments and restores the real clock and Math.random afterwards", async () => {
    const realRandom = Math.random;
    const wallBefore = Date.now();
    const virtualEnd = await runVirtual({ seed: 1, maxRunMs: 10 * 3_600_000 }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 3 * 3_600_000));
      return Date.now();
    });
    expect(virtualEnd).toBe(VIRTUAL_START_MS + 3 * 3_600_000);
    expect(Math.random).toBe(realRandom);
    expect(Math.abs(Date.now() - wallBefore)).toBeLessThan(60_000);
  });

  it("seeds Math.random during the run", async () => {
    const draw = () => runVirtual({ seed: 99, maxRunMs: 1000 }, async () => [Math.random(), Math.random()]);
    expect(await draw()).toEqual(await draw());
  });

  it("stops a run that passes its virtual time limit", async () => {
    await expect(runVirtual({ seed: 1, maxRunMs: 1000 }, () => new Promise((resolve) => setTimeout(resolve, 5000)))).rejects.toThrow(/limit/);
  });
});
