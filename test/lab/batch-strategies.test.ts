import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runStrategy } from "../../src/lab/run";
import { loadScenario, parseScenario } from "../../src/lab/scenario";
import { DEFAULT_STRATEGY_NAMES, strategyByName, STRATEGY_NAMES } from "../../src/lab/strategies";

const scenario = (clock: "real" | "virtual", method: "GET" | "POST" = "GET") =>
  parseScenario(
    {
      name: "batch strategies",
      server: { limiter: "fixed-window", limit: 10, windowMs: 1000, dialect: "generic", latencyMs: 5, faults: method === "POST" ? { dropShare: 0.1 } : {} },
      workload: { jobs: 15, workers: 4, method },
      clock,
      seed: 5,
    },
    STRATEGY_NAMES,
    DEFAULT_STRATEGY_NAMES,
  );

describe("the component's steps in the lab (ours-batch, ours-loop)", () => {
  it("are known by name but not run by a scenario that names no strategies", () => {
    expect(STRATEGY_NAMES).toEqual(expect.arrayContaining(["ours-batch", "ours-loop"]));
    expect(scenario("real").strategies).not.toContain("ours-batch");
    expect(scenario("real").strategies).toContain("ours");
    for (const file of ["batch-60-real-clock", "batch-300-posts-drops"]) {
      const loaded = loadScenario(join(__dirname, "../../src/lab/scenarios", `${file}.json`), STRATEGY_NAMES, DEFAULT_STRATEGY_NAMES);
      expect(loaded.clock).toBe("real");
      expect(loaded.strategies).toEqual(expect.arrayContaining(["ours-batch", "ours-loop"]));
    }
  });

  it("refuse the virtual clock in one line (the steps build their own client, with sockets)", async () => {
    const run = await runStrategy(scenario("virtual"), strategyByName("ours-batch")!);
    expect(run.error).toBe('ours-batch runs the component\'s steps over sockets: use it in a scenario with "clock": "real"');
  });

  it("run every job on the real clock: one Send Batch step, and a loop of Send Request steps; POSTs with dropped connections are not repeated", async () => {
    for (const name of ["ours-batch", "ours-loop"]) {
      const get = await runStrategy(scenario("real"), strategyByName(name)!);
      expect(get.error, name).toBeNull();
      expect(get.result, name).toMatchObject({ ok: 15, failed: 0, deferred: 0, calls: 15 + get.result.throttled });
      expect(get.jobs, name).toHaveLength(15);
      const post = await runStrategy(scenario("real", "POST"), strategyByName(name)!);
      expect(post.requests.some((r) => r.fault === "drop"), name).toBe(true);
      expect(post.result, name).toMatchObject({ ok: 15, duplicates: 0 });
    }
  }, 60_000);
});
