import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../../src/lab/clock";
import { randomScenario } from "../../src/lab/random-scenarios";
import { parseScenario } from "../../src/lab/scenario";
import { DEFAULT_STRATEGY_NAMES, STRATEGY_NAMES } from "../../src/lab/strategies";

const run = promisify(execFile);
const root = join(__dirname, "..", "..");
const tsx = join(root, "node_modules", ".bin", "tsx");

function batch(seed: number, count: number): ReturnType<typeof randomScenario>[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, index) => randomScenario(random, index, seed));
}

describe("random scenarios (npm run -s lab:random)", () => {
  it("writes valid scenarios that run every default strategy, the same for the same seed, over every limiter and most dialects", () => {
    const scenarios = batch(7, 80);
    for (const scenario of scenarios) {
      const parsed = parseScenario(scenario, STRATEGY_NAMES, DEFAULT_STRATEGY_NAMES);
      expect(parsed.strategies).toEqual(DEFAULT_STRATEGY_NAMES);
      expect(parsed.workload.workers).toBeGreaterThanOrEqual(1);
      expect(parsed.workload.workers).toBeLessThanOrEqual(50);
    }
    expect(batch(7, 80)).toEqual(scenarios);
    expect(batch(8, 80)).not.toEqual(scenarios);
    expect(new Set(scenarios.map((s) => s.server.limiter)).size).toBe(4);
    expect(new Set(scenarios.map((s) => s.server.dialect)).size).toBeGreaterThanOrEqual(6);
    expect(scenarios.some((s) => !s.server.budgetHeaders) && scenarios.some((s) => s.server.faults) && scenarios.some((s) => s.workload.coordination === "cross-flow")).toBe(true);
  });

  it("writes --count files into --out, and rejects a bad count with one line and exit code 2", async () => {
    const out = mkdtempSync(join(tmpdir(), "random-scenarios-"));
    const { stdout } = await run(tsx, [join(root, "src", "lab", "random-scenarios.ts"), "--count", "3", "--seed", "5", "--out", out], { cwd: root });
    expect(stdout.trim().split("\n")).toHaveLength(3);
    expect(readdirSync(out).sort()).toEqual(["random-5-000.json", "random-5-001.json", "random-5-002.json"]);
    expect(JSON.parse(readFileSync(join(out, "random-5-000.json"), "utf8"))).toEqual(batch(5, 1)[0]);
    const failed = await run(tsx, [join(root, "src", "lab", "random-scenarios.ts"), "--count", "many", "--out", out], { cwd: root }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 2, stdout: "" });
    expect((failed as { stderr: string }).stderr.trim().split("\n")).toEqual(["lab:random: --count must be a whole number from 1 to 1000 (got many); usage: npm run -s lab:random -- --count N --seed S --out DIR"]);
  });
});
