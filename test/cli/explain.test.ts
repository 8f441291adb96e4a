import { execFile, execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { EXPLAIN_USAGE, explainText, inputReader, TERMINAL_HINT, UsageError } from "../../src/cli/explain";

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

  it("reads a response pasted as curl -i prints it, with the request named by flags", async () => {
    const pasted = ["HTTP/1.1 100 Continue", "", "HTTP/1.1 429 Too Many Requests", "Retry-After: 30", "X-RateLimit-Remaining: 0", "", '{"message":"API rate limit exceeded"}'].join("\r\n");
    const { code, stdout } = await cli(["explain", "--now", NOW, "--url", "https://api.github.com/repos/o/r/issues", "--method", "post"], pasted);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      provider: "github",
      status: 429,
      throttled: true,
      minWaitMs: 30_000,
      writeSafety: { repeatable: true, basis: "throttle-refusal" },
      plan: { decision: "retry", waitRangeMs: [30_000, 31_000] },
    });
  });

  it.each([
    ["not JSON", "nope {", /neither a pasted response .* nor valid JSON/],
    ["a pasted response with a broken header line", "HTTP/1.1 429 Too Many Requests\nRetry-After 30\n", /line 2 is not a header line/],
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

  it("--help (and -h) prints the usage and exits 0, for explain and for the command itself", async () => {
    for (const args of [["explain", "--help"], ["explain", "-h"], ["--help"]]) {
      const { code, stdout, stderr } = await cli(args);
      expect(code, args.join(" ")).toBe(0);
      expect(stdout).toContain(EXPLAIN_USAGE);
      expect(stderr).toBe("");
    }
  });

  it("carries each row's name into the output, in order", async () => {
    const file = join(root, "test", "fixtures", "github.json");
    const { code, stdout } = await cli(["explain", "--now", NOW, file]);
    expect(code).toBe(0);
    const names = (JSON.parse(readFileSync(file, "utf8")) as { name: string }[]).map((row) => row.name);
    expect((JSON.parse(stdout) as { name: string }[]).map((row) => row.name)).toEqual(names);
  });

  it("rejects a missing file and an unknown command the same way", async () => {
    const missing = await cli(["explain", "/no/such/file.json"]);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/no such file/) });
    const unknown = await cli(["frobnicate"]);
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown command/) });
  });
});

/** A real terminal: `script` gives the command a pseudo-terminal as standard input. */
const hasScript = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

describe("explain on a terminal", () => {
  it.skipIf(!hasScript)("says on stderr what it waits for instead of waiting silently, then reads what is typed", async () => {
    const child = spawn("script", ["-q", "-e", "-c", `${process.execPath} ${bin} explain --now ${NOW}`, "/dev/null"], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    let seen = "";
    const done = new Promise<number | null>((resolve) => child.on("exit", resolve));
    const hinted = new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes("Ctrl-D")) resolve();
      });
    });
    await hinted;
    // The hint is one line, before any input was typed.
    expect(seen.trim()).toBe(TERMINAL_HINT);
    child.stdin.write('{"request":{"url":"https://x.test/"},"response":{"status":429,"headers":{"Retry-After":"2"}}}\n');
    setTimeout(() => child.stdin.write("\x04"), 200);
    expect(await done).toBe(0);
    expect(seen).toContain('"minWaitMs": 2000');
  });

  it("gives the hint only when standard input is a terminal", () => {
    const hints: string[] = [];
    const source = (stdinIsTTY: boolean) => ({ stdinIsTTY, writeHint: (line: string) => void hints.push(line), readFile: () => "{}" });
    inputReader(source(false))(undefined);
    inputReader(source(true))("file.json");
    expect(hints).toEqual([]);
    inputReader(source(true))(undefined);
    expect(hints).toEqual([`${TERMINAL_HINT}\n`]);
  });
});

describe("explain shows the client's decision for the request's method (issue 10)", () => {
  const explain = (row: unknown, args: string[] = []) =>
    JSON.parse(explainText(["--now", NOW, ...args], () => JSON.stringify(row), 0)) as { plan: { decision: string; reason: string }; writeSafety: { repeatable: boolean; basis: string } };
  const post = (status: number, headers: Record<string, string> = {}, request: Record<string, unknown> = {}) => ({
    request: { method: "POST", url: "https://api.example.test/orders", ...request },
    response: { status, headers },
  });

  it("POST + 429: retry (the rate limiter refused it; RFC 6585 §4)", () => {
    expect(explain(post(429, { "Retry-After": "2" }))).toMatchObject({ plan: { decision: "retry" }, writeSafety: { repeatable: true, basis: "throttle-refusal" } });
  });

  it("POST + 503 without a key: fail, and the reason says why", () => {
    const out = explain(post(503, { "Retry-After": "2" }));
    expect(out).toMatchObject({ plan: { decision: "fail" }, writeSafety: { repeatable: false, basis: "ambiguous" } });
    expect(out.plan.reason).toMatch(/^Not repeated: A 503 is ambiguous for a write.*idempotency key/);
  });

  it("POST + 503 with an idempotency key (option or header): retry; a blank key is none", () => {
    expect(explain(post(503, { "Retry-After": "2" }, { idempotencyKey: "order-42" })).plan.decision).toBe("retry");
    expect(explain(post(503, { "Retry-After": "2" }, { headers: { "Idempotency-Key": "order-42" } })).plan.decision).toBe("retry");
    expect(explain(post(503, { "Retry-After": "2" }, { headers: { "Idempotency-Key": " " } })).plan.decision).toBe("fail");
  });

  it("a GraphQL query sent as POST is a read; --no-retry-writes-after-throttle stops a POST after a 429", () => {
    expect(explain(post(503, {}, { body: { query: "{ shop { name } }" } })).plan.decision).toBe("retry");
    expect(explain(post(429, { "Retry-After": "2" }), ["--no-retry-writes-after-throttle"])).toMatchObject({ plan: { decision: "fail" }, writeSafety: { basis: "throttle-retry-off" } });
  });

  it("rejects a request field of the wrong type in one line", () => {
    expect(() => explainText([], () => JSON.stringify(post(429, {}, { idempotencyKey: 42 })), 0)).toThrow(/request.idempotencyKey must be text/);
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

  it("a pasted response: --provider picks the rules, --url must be a URL, and the flags do not go with JSON", () => {
    const pasted = "HTTP/2 429\nretry-after: 1\n\n";
    const read = JSON.parse(explainText(["--now", NOW, "--provider", "slack"], () => pasted, 0)) as { provider: string; request?: unknown; plan: { decision: string } };
    expect(read).toMatchObject({ provider: "slack", plan: { decision: "retry" } });
    expect(() => explainText(["--url", "api.github.com"], () => pasted, 0)).toThrow(/--url "api.github.com" is not a URL/);
    expect(() => explainText(["--provider", "github"], () => '{"response":{"status":429}}', 0)).toThrow(/go with a pasted response/);
  });
});
