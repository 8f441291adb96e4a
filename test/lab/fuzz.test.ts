import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { claim, observe } from "../../src/engine/governor";
import { fuzzTargets, inputsPerTarget, isClean, runTarget } from "../../src/lab/fuzz";
import { runGovernorFuzz } from "../../src/lab/fuzz/targets/governor";

const run = promisify(execFile);
const root = join(__dirname, "..", "..");
const tsx = join(root, "node_modules", ".bin", "tsx");

/** A small seeded run of every target inside `npm test`; `npm run fuzz` runs a million. */
describe("fuzz targets (seeded, a few thousand inputs each)", () => {
  it.each(fuzzTargets.map(({ target }, index) => [target.name, target, index] as const))("%s: no throw, no broken property, no wait below a server wait", (_name, target, index) => {
    const result = runTarget(target, 20_261_130 + index, 3000, () => performance.now());
    expect(result.inputs).toBe(3000);
    expect(result.examples).toEqual([]);
    expect(result).toMatchObject({ throws: 0, violations: 0 });
    expect(isClean(result)).toBe(true);
  });

  it("the same seed gives the same run", () => {
    const { target } = fuzzTargets.find((t) => t.target.name === "graphql operation")!;
    expect(target.run(5, 500)).toEqual(target.run(5, 500));
  });

  it("lists the governor and the redactor, each name once, with shares that sum to 1 and a default run of at least 1,000,000 inputs", () => {
    const names = fuzzTargets.map((t) => t.target.name);
    expect(names).toEqual(expect.arrayContaining(["governor", "redactor"]));
    expect(new Set(names).size).toBe(names.length);
    expect(fuzzTargets.reduce((sum, t) => sum + t.share, 0)).toBeCloseTo(1, 12);
    const counts = inputsPerTarget(1_000_000);
    expect(counts.every((count) => count >= 10_000)).toBe(true);
    expect(counts.reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(1_000_000);
  });

  it("the governor target gives the same run for the same seed", () => {
    expect(runGovernorFuzz(11, 300)).toEqual(runGovernorFuzz(11, 300));
  });

  it("the governor target catches a governor that forgets the server's wait", () => {
    const forgetful: typeof observe = (state, observation, options) => observe(state, { ...observation, waitMs: null }, options);
    const result = runGovernorFuzz(3, 1000, { claim, observe: forgetful });
    expect(result.violations).toBeGreaterThan(20);
    expect(result.examples.join("\n")).toMatch(/below the server's wait/);
  });

  it("the governor target catches a governor that grants before the floor", () => {
    const eager: typeof claim = (state, request, options) => {
      const next = claim(state, request, options);
      return next.result.kind === "go" ? { ...next, result: { ...next.result, atMs: Math.max(0, Math.round(request.nowMs) || 0) } } : next;
    };
    const result = runGovernorFuzz(3, 1000, { claim: eager, observe });
    expect(result.violations).toBeGreaterThan(20);
    expect(result.examples.join("\n")).toMatch(/before the floor/);
  });

  it("the governor target catches a governor that keeps an idle scope waiting", () => {
    // After a long idle, a claim told to wait again a second later, for ever (as a reserve for
    // others above the limit once did: model.ts fromBucket); every other claim as the real one.
    const starving: typeof claim = (state, request, options) => {
      const next = claim(state, request, options);
      if (request.nowMs < state.updatedAtMs + 5 * 60_000) return next;
      return { state: next.state, result: { kind: "wait", untilMs: request.nowMs + 1000, why: "starved" } };
    };
    const result = runGovernorFuzz(3, 1000, { claim: starving, observe });
    expect(result.violations).toBeGreaterThan(20);
    expect(result.examples.join("\n")).toMatch(/after 10 idle minutes .* a claim got \{"kind":"wait"/);
  });

  it("isClean fails a run with a throw, a violation or a wait below a server wait", () => {
    const clean = { inputs: 1, throws: 0, violations: 0, examples: [] };
    expect(isClean(clean)).toBe(true);
    expect(isClean({ ...clean, throws: 1 })).toBe(false);
    expect(isClean({ ...clean, violations: 1 })).toBe(false);
    expect(isClean({ ...clean, waitsBelowServerWait: 1 })).toBe(false);
  });
});

describe("npm run fuzz (the real command)", () => {
  it("prints the table with every target and a total, and exits 0 when clean", async () => {
    const { stdout } = await run(tsx, ["src/lab/fuzz/main.ts", "--count", "2000", "--seed", "9"], { cwd: root });
    expect(stdout).toMatch(/target\s+inputs\s+throws\s+waits below a valid server wait\s+violations\s+time/);
    for (const { target } of fuzzTargets) expect(stdout).toContain(target.name);
    expect(stdout).toMatch(/total\s+2,000\s+0\s+0\s+0\s+[\d.]+ s/);
  });

  it("rejects a bad --count in one line with exit code 2", async () => {
    const failure = await run(tsx, ["src/lab/fuzz/main.ts", "--count", "lots"], { cwd: root }).catch((e: unknown) => e as { code: number; stderr: string });
    expect(failure).toMatchObject({ code: 2 });
    expect((failure as { stderr: string }).stderr.trim().split("\n")).toHaveLength(1);
  });
});
