import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { explainText, UsageError } from "../../src/cli/explain";

const run = promisify(execFile);
const root = join(__dirname, "..", "..");
const bin = join(root, "src", "cli", "throttle-http.cjs");
const NOW = "2026-11-30T12:00:00Z";

async function cli(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = run(process.execPath, [bin, ...args], { cwd: root });
  if (stdin !== undefined) {
    child.child.stdin!.end(stdin);
  } else {
    child.child.stdin!.end();
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("throttle-http explain (the real command)", () => {
  it("prints an array of verdicts with plans for a fixture file", async () => {
    const file = join(root, "test", "fixtures", "generic.json");
    const { code, stdout } = await cli(["explain", "--now", NOW, file]);
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as { provider: string; plan: { decision: string } }[];
    // 120 s is exactly the default inline limit: retried inline at the floor, the jitter dropped so as not to cross it.
    expect(out[0]).toMatchObject({ provider: "generic", minWaitMs: 120_000, plan: { decision: "retry", waitMs: 120_000, notBefore: "2026-11-30T12:02:00.000Z" } });
  });

  it("reads one object from standard input and prints one verdict", async () => {
    const input = JSON.stringify({ request: { method: "GET", url: "https://api.example.test/x" }, response: { status: 429, headers: { "Retry-After": "2" } } });
    const { code, stdout } = await cli(["explain", "--now", NOW], input);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ throttled: true, minWaitMs: 2000, plan: { decision: "retry", waitRangeMs: [2000, 2200] } });
  });

  it.each([
    ["not JSON", "nope {", /not valid JSON/],
    ["no response", '{"request":{"url":"https://x.test"}}', /no "response" object/],
    ["a status that is not a number", '{"response":{"status":"429"}}', /response.status must be a number/],
    ["empty input", "", /is empty/],
  ])("rejects %s with one line on stderr and exit code 2", async (_label, stdin, message) => {
    const { code, stdout, stderr } = await cli(["explain"], stdin);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message);
    expect(stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it("rejects a missing file and an unknown command the same way", async () => {
    const missing = await cli(["explain", "/no/such/file.json"]);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/no such file/) });
    const unknown = await cli(["frobnicate"]);
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown command/) });
  });
});

describe("explainText", () => {
  it("explains every fixture file without error", () => {
    const dir = join(root, "test", "fixtures");
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".json"))) {
      const text = explainText(["--now", NOW, file], (f) => readFileSync(join(dir, f!), "utf8"), 0);
      expect(Array.isArray(JSON.parse(text))).toBe(true);
    }
  });

  it("rejects a bad --now", () => {
    expect(() => explainText(["--now", "tomorrow"], () => "{}", 0)).toThrow(UsageError);
  });
});
