/**
 * The Shared Store from the BUILT bundle (webpack into a scratch directory), through spectral's
 * harness, against a real redis-server (with a password) and loopback APIs:
 * (a) fail mode remembers the wait in Redis: a second execution with EMPTY cross-flow state fails
 *     without calling the API;
 * (b) 20 concurrent executions against an API allowing 5 per second all succeed, with at most one
 *     throttled answer in total;
 * (c) with Redis stopped, the step succeeds through cross-flow state with one warning;
 * (d) a process that ran the step exits by itself (no socket or timer left open).
 * The password never appears in a log line, a result or an error.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchApiSpec, buildBundle, runnerFor, startAlignedApi, type ActionRunner } from "../../src/lab/batch";
import { startRedisServer, type RedisServer } from "../../src/lab/redis-server";
import { STATE_KEY } from "../../src/store";
import { REDIS_AVAILABLE } from "../helpers/redis";
import { startServer } from "../helpers/server";

const PASSWORD = "s3cret-redis-password-5731";
const root = join(__dirname, "..", "..");

/** A step logger that keeps every line, warnings apart. */
function logger() {
  const lines: string[] = [];
  const warnings: string[] = [];
  const push = (...args: unknown[]) => lines.push(args.map(String).join(" "));
  return { lines, warnings, info: push, debug: push, log: push, trace: push, metric: push, error: push, warn: (...args: unknown[]) => (push(...args), warnings.push(args.map(String).join(" "))) };
}

const sharedStore = (url: string, keyPrefix: string, password = PASSWORD) => ({ key: "redis", configVarKey: "", fields: { url, password, keyPrefix } });

describe.skipIf(!REDIS_AVAILABLE)("the Shared Store (Redis) from the built bundle", () => {
  let run: ActionRunner;
  let dist = "";
  let cleanup = (): void => undefined;
  let redis: RedisServer;

  beforeAll(async () => {
    const built = await buildBundle(root);
    run = runnerFor(built.component);
    dist = built.dir;
    cleanup = built.cleanup;
    redis = await startRedisServer({ password: PASSWORD });
  }, 180_000);
  afterAll(async () => {
    await redis?.stop();
    cleanup();
  });

  it("(a) fail mode: Retry-After 3600 fails the step; a second execution with EMPTY cross-flow state fails without calling the API", async () => {
    const api = await startServer([{ status: 429, headers: { "retry-after": "3600" }, body: { error: "slow down" } }]);
    try {
      const params = { url: `${api.url}/items`, method: "GET", onLongWait: "fail", sharedStore: sharedStore(redis.url, "a:") };
      const first = logger();
      const firstError = await run("sendRequest", params, { crossFlowState: {}, logger: first }).then(() => null, (error: unknown) => error as Error);
      expect(firstError?.message).toMatch(/3600|long wait|Retry-After/i);
      expect(api.calls).toHaveLength(1);

      const second = logger();
      const secondError = await run("sendRequest", params, { crossFlowState: {}, logger: second }).then(() => null, (error: unknown) => error as Error);
      expect(secondError).not.toBeNull();
      expect(api.calls).toHaveLength(1);
      expect(second.lines.join("\n")).toMatch(/defer_before_call/);
      expect(first.warnings).toEqual([]);
      for (const text of [...first.lines, ...second.lines, firstError?.message, secondError?.message]) expect(text).not.toContain(PASSWORD);
    } finally {
      await api.close();
    }
  }, 30_000);

  it("(b) 20 concurrent executions against an API allowing 5 per second: all succeed, at most one throttled answer in total", async () => {
    const lab = await startAlignedApi(batchApiSpec({ limit: 5, windowMs: 1000 }));
    try {
      const executions = Array.from({ length: 20 }, (_, i) =>
        run("sendRequest", { url: `${lab.url}/items/job-${i}`, method: "GET", headers: [{ key: "x-job-id", value: `job-${i}` }], sharedStore: sharedStore(redis.url, "b:") }, { crossFlowState: {}, logger: logger() }) as Promise<{ branch: string }>,
      );
      const results = await Promise.all(executions);
      expect(results.map((r) => r.branch)).toEqual(Array(20).fill("Success"));
      const throttled = lab.api.records.filter((r) => r.throttled).length;
      expect(throttled).toBeLessThanOrEqual(1);
      expect(lab.api.records).toHaveLength(20 + throttled);
      // 20 at 5 per second, the first window at the server's start: at least 3 windows later.
      expect(Math.max(...lab.api.records.map((r) => r.atMs))).toBeGreaterThanOrEqual(3000);
    } finally {
      await lab.close();
    }
  }, 60_000);

  it("(c) with Redis stopped, the step succeeds through cross-flow state and logs one warning, without the password", async () => {
    const down = await startRedisServer({ password: PASSWORD });
    await down.stop();
    const api = await startServer([{ status: 200, headers: { "x-ratelimit-remaining": "9", "x-ratelimit-limit": "10" }, body: { ok: true } }]);
    try {
      const log = logger();
      const urlWithPassword = down.url.replace("redis://", `redis://:${PASSWORD}@`);
      const started = Date.now();
      const out = (await run("sendRequest", { url: `${api.url}/items`, method: "GET", sharedStore: sharedStore(urlWithPassword, "c:") }, { crossFlowState: {}, logger: log })) as {
        branch: string;
        crossFlowState: Record<string, { scopes: Record<string, unknown> }>;
      };
      expect(out.branch).toBe("Success");
      expect(Date.now() - started).toBeLessThan(5000);
      expect(log.warnings).toHaveLength(1);
      expect(log.warnings[0]).toMatch(/shared store \(Redis\) did not answer.*goes on with cross-flow state/);
      expect(Object.keys(out.crossFlowState[STATE_KEY]!.scopes)).toHaveLength(1);
      expect(JSON.stringify(out)).not.toContain(PASSWORD);
      for (const line of log.lines) expect(line).not.toContain(PASSWORD);
    } finally {
      await api.close();
    }
  }, 30_000);

  it("(d) a process that ran steps with Redis up and with Redis down exits by itself: no socket or timer is left open", async () => {
    const api = await startServer([{ status: 200, body: { ok: true } }]);
    const down = await startRedisServer();
    await down.stop();
    const script = join(dist, "run-steps.cjs");
    writeFileSync(
      script,
      `const { createHarness } = require(${JSON.stringify(join(root, "node_modules", "@prismatic-io", "spectral", "dist", "testing"))});
const component = require(${JSON.stringify(join(dist, "index.js"))}).default;
const harness = createHarness(component);
const quiet = Object.fromEntries(["info", "warn", "error", "debug", "log", "trace", "metric"].map((level) => [level, () => undefined]));
const step = (url) => harness.action("sendRequest", { url: ${JSON.stringify(`${api.url}/items`)}, sharedStore: { key: "redis", fields: { url, password: ${JSON.stringify(PASSWORD)}, keyPrefix: "d:" } } }, { crossFlowState: {}, logger: quiet });
(async () => {
  const up = await step(${JSON.stringify(redis.url)});
  const down = await step(${JSON.stringify(down.url)});
  process.stdout.write(up.branch + " " + down.branch + "\\n");
})().catch((error) => { process.stdout.write("error " + error.message + "\\n"); process.exitCode = 1; });
`,
    );
    try {
      const child = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "inherit"] });
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      const exit = await new Promise<{ code: number | null; afterOutputMs: number } | "hung">((resolve) => {
        let printedAt = 0;
        child.stdout.on("data", () => (printedAt ||= Date.now()));
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          resolve("hung");
        }, 15_000);
        child.on("exit", (code) => {
          clearTimeout(timer);
          resolve({ code, afterOutputMs: Date.now() - printedAt });
        });
      });
      expect(stdout.trim()).toBe("Success Success");
      expect(exit).not.toBe("hung");
      expect(exit).toMatchObject({ code: 0 });
      // It exits as soon as the work is done, not when some forgotten timer fires.
      expect((exit as { afterOutputMs: number }).afterOutputMs).toBeLessThan(3000);
    } finally {
      await api.close();
    }
  }, 30_000);
});
