/**
 * The lab's Redis coordination: scenario checks, a small fan-out split over two child processes
 * sharing one real redis-server, the same with Redis cut off for a while, and the one line a
 * Redis scenario prints where no redis-server can be started. The full-size runs are
 * src/lab/scenarios/fan-out-50-redis-*.json (npm run -s bench -- --scenario FILE).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { runScenario } from "../../src/lab/run";
import { parseScenario, ScenarioError } from "../../src/lab/scenario";
import { strategyByName, STRATEGY_NAMES } from "../../src/lab/strategies";
import { REDIS_AVAILABLE } from "../helpers/redis";

const root = join(__dirname, "..", "..");

const base = {
  name: "small fan-out over Redis",
  server: { limiter: "fixed-window", limit: 10, windowMs: 2000, dialect: "ietf", latencyMs: 20 },
  workload: { jobs: 30, workers: 6, method: "GET", coordination: "redis", processes: 2 },
  strategies: ["ours"],
  clock: "real",
  seed: 5,
  maxRunMs: 60_000,
};

const resolve = (name: string) => strategyByName(name)!;

describe("Redis scenarios: checks", () => {
  it.each([
    [{ clock: "virtual" }, /coordination "redis" runs on the real clock/],
    [{ workload: { ...base.workload, coordination: "in-process" } }, /workload.processes 2 needs workload.coordination "redis"/],
    [{ workload: { ...base.workload, processes: 7 } }, /workload.processes \(7\) is more than workload.workers \(6\)/],
    [{ workload: { ...base.workload, coordination: "cross-flow", processes: 1, storeOutage: { atMs: 1, forMs: 1 } } }, /workload.storeOutage needs workload.coordination "redis"/],
    [{ workload: { ...base.workload, storeOutage: { atMs: 1, forMS: 1 } } }, /unknown key workload.storeOutage.forMS: did you mean workload.storeOutage.forMs\?/],
  ])("rejects %j in one line", (change, message) => {
    expect(() => parseScenario({ ...base, ...change }, STRATEGY_NAMES)).toThrow(ScenarioError);
    expect(() => parseScenario({ ...base, ...change }, STRATEGY_NAMES)).toThrow(message);
  });

  it("a Redis scenario where no redis-server can be started says so in one line (exit code 2)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "redis-lab-"));
    const file = join(dir, "redis.json");
    writeFileSync(file, JSON.stringify(base));
    const env = { ...process.env, PATH: dir, REDIS_URL: "" };
    const failed = await promisify(execFile)(process.execPath, ["--import", "tsx", join(root, "src", "lab", "bench.ts"), "--scenario", file], { cwd: root, env }).then(
      () => null,
      (error: unknown) => error as { code: number; stderr: string },
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr.trim().split("\n")).toEqual([
      'bench: small fan-out over Redis: needs Redis (workload.coordination "redis"), and there is no redis-server on PATH: install it (apt-get install -y redis-server) or set REDIS_URL=redis://host:port',
    ]);
  });
});

describe.skipIf(!REDIS_AVAILABLE)("Redis scenarios: runs on a real redis-server", () => {
  it("30 GETs from 6 workers in 2 processes sharing Redis: every job done, no duplicate, the API's windows kept", async () => {
    const [run] = await runScenario(parseScenario(base, STRATEGY_NAMES), resolve);
    expect(run!.error).toBeNull();
    expect(run!.result).toMatchObject({ ok: 30, failed: 0, deferred: 0, duplicates: 0 });
    expect(run!.result.throttled).toBeLessThanOrEqual(2);
    // 30 at 10 per 2 s need two windows after the first: the last starts 4 s in.
    expect(run!.result.makespanMs).toBeGreaterThanOrEqual(4000);
  }, 60_000);

  it("30 POSTs with Redis cut off from 1 s to 4 s: every job still done, none executed twice", async () => {
    const scenario = parseScenario({ ...base, workload: { ...base.workload, method: "POST", storeOutage: { atMs: 1000, forMs: 3000 } } }, STRATEGY_NAMES);
    const [run] = await runScenario(scenario, resolve);
    expect(run!.error).toBeNull();
    expect(run!.result).toMatchObject({ ok: 30, failed: 0, deferred: 0, duplicates: 0 });
  }, 60_000);
});
