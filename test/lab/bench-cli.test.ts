import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(__dirname, "..", "..");
const tsx = join(root, "node_modules", ".bin", "tsx");
const dir = mkdtempSync(join(tmpdir(), "bench-cli-"));

async function bench(args: string[], script = "bench.ts"): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(tsx, [join(root, "src", "lab", script), ...args], { cwd: root });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

function scenarioFile(name: string, scenario: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof scenario === "string" ? scenario : JSON.stringify(scenario));
  return file;
}

describe("npm run bench (the real command)", () => {
  it("runs a scenario written from the documented schema and prints the documented fields with --json", async () => {
    // A file written here, against docs/lab.md, not one of the built-in scenarios.
    const file = scenarioFile("token-bucket.json", {
      name: "token bucket, HubSpot dialect, 4 workers writing",
      server: { limiter: "token-bucket", limit: 10, windowMs: 5000, dialect: "hubspot" },
      workload: { jobs: 30, workers: 4, method: "POST", coordination: "in-process" },
      strategies: ["naive", "axios-retry", "ours"],
      clock: "virtual",
      seed: 3,
    });
    const { code, stdout } = await bench(["--scenario", file, "--json"]);
    expect(code).toBe(0);
    const rows = JSON.parse(stdout) as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.strategy)).toEqual(["naive", "axios-retry", "ours"]);
    for (const row of rows) {
      expect(Object.keys(row).sort()).toEqual(["calls", "deferred", "duplicates", "failed", "herdPeak", "idealMs", "makespanMs", "ok", "strategy", "throttled"].sort());
      expect(Number(row.ok) + Number(row.failed) + Number(row.deferred)).toBe(30);
    }
    const ours = rows.find((r) => r.strategy === "ours")!;
    expect(ours).toMatchObject({ ok: 30, duplicates: 0 });
  });

  it.each([
    ["a missing file", () => join(dir, "nope.json"), /nope\.json/],
    ["bad JSON", () => scenarioFile("bad.json", "{ not json"), /JSON/],
    ["an unknown limiter", () => scenarioFile("limiter.json", { name: "x", server: { limiter: "leaky-sieve", limit: 1, windowMs: 1 }, workload: { jobs: 1 } }), /limiter/],
  ])("rejects %s with one line on stderr and exit code 2", async (_label, makeFile, message) => {
    const { code, stdout, stderr } = await bench(["--scenario", makeFile()]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message);
    expect(stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  it("rejects an unknown option the same way", async () => {
    const { code, stderr } = await bench(["--scenery", "x"]);
    expect(code).toBe(2);
    expect(stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  // A misspelt key used to run silently with the default; now one line names it and its nearest
  // valid neighbour, at every level of the file.
  const valid = { name: "typo", server: { limiter: "fixed-window", limit: 5, windowMs: 1000 }, workload: { jobs: 2 } };
  it.each([
    ["workload", { ...valid, workload: { jobs: 2, workerz: 4 } }, "workload.workerz", "workload.workers"],
    ["server", { ...valid, server: { ...valid.server, dialekt: "github" } }, "server.dialekt", "server.dialect"],
    ["server.faults", { ...valid, server: { ...valid.server, faults: { dropshare: 0.1 } } }, "server.faults.dropshare", "server.faults.dropShare"],
    ["the top level", { ...valid, clok: "real" }, "clok", "clock"],
  ])("rejects an unknown key in %s, naming the nearest valid one", async (_level, scenario, key, suggestion) => {
    const { code, stdout, stderr } = await bench(["--scenario", scenarioFile(`typo-${key}.json`, scenario)]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(stderr).toContain(`unknown key ${key}: did you mean ${suggestion}?`);
  });

  it("lists the known keys when an unknown one resembles none", async () => {
    const { code, stderr } = await bench(["--scenario", scenarioFile("banana.json", { ...valid, workload: { jobs: 2, banana: true } })]);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe("bench: unknown key workload.banana: known keys in workload: jobs, workers, method, coordination, executionLimitMs, requestTimeoutMs, processes, storeOutage");
  });
});

describe("npm run bench over several scenarios (a sweep)", () => {
  const small = (name: string, limit: number) => ({
    name,
    server: { limiter: "fixed-window", limit, windowMs: 1000, dialect: "github" },
    workload: { jobs: 6, workers: 2, method: "GET", coordination: "in-process" },
    strategies: ["naive", "ours"],
    clock: "virtual",
    seed: 5,
  });

  function sweepDir(): string {
    const sweep = mkdtempSync(join(tmpdir(), "bench-sweep-"));
    writeFileSync(join(sweep, "b.json"), JSON.stringify(small("tight", 2)));
    writeFileSync(join(sweep, "a.json"), JSON.stringify(small("roomy", 50)));
    writeFileSync(join(sweep, "notes.txt"), "not a scenario");
    return sweep;
  }

  it("runs a directory's .json files by name and counts where ours met every goal from the verdicts it printed", async () => {
    const { code, stdout } = await bench(["--scenario", sweepDir()]);
    expect(code).toBe(0);
    expect(stdout.indexOf("roomy\n")).toBeLessThan(stdout.indexOf("tight\n"));
    const verdicts = stdout.split("\n").filter((line) => line.startsWith("ours: "));
    expect(verdicts).toHaveLength(2);
    const met = verdicts.filter((line) => line === "ours: all goals met").length;
    expect(stdout.trimEnd().split("\n").at(-1)).toBe(`ours met every goal in ${met} of 2 scenarios`);
    // The naive peer fails jobs on the tight limit: it is no peer that met every goal there.
    expect(stdout).toMatch(/^tight\s.*\snone$/m);
  });

  it("prints one { file, name, results } per scenario with --json", async () => {
    const sweep = sweepDir();
    const { code, stdout } = await bench(["--scenario", join(sweep, "a.json"), "--scenario", join(sweep, "b.json"), "--json"]);
    expect(code).toBe(0);
    const output = JSON.parse(stdout) as Array<{ file: string; name: string; results: Array<{ strategy: string; ok: number }> }>;
    expect(output.map((o) => [o.file, o.name])).toEqual([[join(sweep, "a.json"), "roomy"], [join(sweep, "b.json"), "tight"]]);
    for (const o of output) expect(o.results.map((r) => r.strategy)).toEqual(["naive", "ours"]);
    expect(output[0]!.results[1]!.ok).toBe(6);
  });

  it("checks every file before the first run: a bad one among good ones costs no run", async () => {
    const sweep = sweepDir();
    writeFileSync(join(sweep, "c.json"), JSON.stringify({ ...small("typo", 5), workload: { jobs: 2, workerz: 2 } }));
    const { code, stdout, stderr } = await bench(["--scenario", sweep]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(stderr).toContain("workload.workerz");
  });

  it.each([
    ["a directory with no scenario", () => ["--scenario", mkdtempSync(join(tmpdir(), "bench-empty-"))], /holds no \.json scenario files/],
    ["--json with --markdown", () => ["--scenario", sweepDir(), "--json", "--markdown"], /exclude each other/],
  ])("rejects %s with one line and exit code 2", async (_label, args, message) => {
    const { code, stdout, stderr } = await bench(args());
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message);
    expect(stderr.trimEnd().split("\n")).toHaveLength(1);
  });
});

describe("--help on every lab command", () => {
  it.each([["npm start", "main.ts", /^usage: npm start/], ["npm run bench", "bench.ts", /^usage: npm run -s bench/], ["npm run bench:engine", "engine-bench.ts", /^usage: npm run -s bench:engine/]])(
    "%s -- --help prints its usage and exits 0 without running anything",
    async (_command, script, usage) => {
      const { code, stdout, stderr } = await bench(["--help"], script);
      expect(code).toBe(0);
      expect(stdout).toMatch(usage);
      expect(stdout.trimEnd().split("\n")).toHaveLength(1);
      expect(stderr).toBe("");
    },
  );

  it.each([["--runs", "0", /^bench:client: --runs must be a whole number from 1 to 20$/], ["--requests", "50", /^bench:client: --requests must be a whole number of 100 or more$/]])(
    "npm run bench:client rejects %s %s with one line and exit code 2, before it measures anything",
    async (option, value, line) => {
      const { code, stdout, stderr } = await bench([option, value], "real/client-bench.ts");
      expect(code).toBe(2);
      expect(stdout).toBe("");
      expect(stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(stderr.trim()).toMatch(line);
    },
  );

  it("npm start rejects an unknown option with one line and exit code 2", async () => {
    const { code, stdout, stderr } = await bench(["--markdwn"], "main.ts");
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(stderr).toMatch(/^lab: Unknown option '--markdwn'; usage: npm start/);
  });
});
