import axios from "axios";
import { describe, expect, it } from "vitest";
import { globalClock } from "../../src/lab/clock";
import { parseScenario, ScenarioError } from "../../src/lab/scenario";
import { ThrottledApi } from "../../src/lab/server";
import { herdPeak, idealMs } from "../../src/lab/metrics";
import { runStrategy } from "../../src/lab/run";
import { strategyByName, STRATEGY_NAMES } from "../../src/lab/strategies";
import type { RequestRecord, ServerSpec } from "../../src/lab/types";

const spec = (over: Partial<ServerSpec> = {}): ServerSpec =>
  parseScenario({ name: "t", server: { limiter: "fixed-window", limit: 3, windowMs: 100_000, latencyMs: 0, ...over }, workload: { jobs: 1 } }, STRATEGY_NAMES).server;

describe("throttled API", () => {
  it("counts calls, throttled answers and a POST executed twice for one job", async () => {
    const api = new ThrottledApi(spec(), globalClock, 1);
    for (let i = 0; i < 2; i++) await api.handle({ method: "POST", path: "/items/a", jobId: "a", idempotencyKey: null });
    await api.handle({ method: "POST", path: "/items/b", jobId: "b", idempotencyKey: null });
    const fourth = await api.handle({ method: "POST", path: "/items/c", jobId: "c", idempotencyKey: null });
    expect(fourth.kind === "response" && fourth.response.status).toBe(429);
    expect(api.records).toHaveLength(4);
    expect(api.records.filter((r) => r.throttled)).toHaveLength(1);
    expect(api.duplicates()).toBe(1);
  });

  it("replays a POST with a repeated Idempotency-Key without executing it again", async () => {
    const api = new ThrottledApi(spec(), globalClock, 1);
    await api.handle({ method: "POST", path: "/items/a", jobId: "a", idempotencyKey: "k-a" });
    await api.handle({ method: "POST", path: "/items/a", jobId: "a", idempotencyKey: "k-a" });
    expect(api.duplicates()).toBe(0);
    expect(api.records.filter((r) => r.executed)).toHaveLength(1);
  });

  it("serves the same logic on 127.0.0.1 over real sockets", async () => {
    const api = new ThrottledApi(spec({ limit: 1 }), globalClock, 1);
    const { url, close } = await api.listen();
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const ok = await axios.get(`${url}/items/a`, { headers: { "x-job-id": "a" }, validateStatus: () => true });
      const throttled = await axios.get(`${url}/items/b`, { headers: { "x-job-id": "b" }, validateStatus: () => true });
      expect(ok.status).toBe(200);
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers["retry-after"])).toBeGreaterThan(0);
      expect(api.records.map((r) => r.jobId)).toEqual(["a", "b"]);
    } finally {
      await close();
    }
  });

  it("answers a 429 with the body a scenario gives (server.throttleBody), which the client reads", async () => {
    const body = '{"detail":{"status":"too_many_concurrent_requests"}}';
    const api = new ThrottledApi(spec({ limiter: "concurrency", limit: 1, windowMs: 1000, latencyMs: 50, throttleBody: body } as Partial<ServerSpec>), globalClock, 1);
    const { url, close } = await api.listen();
    try {
      const held = axios.get(`${url}/items/a`, { headers: { "x-job-id": "a" }, validateStatus: () => true });
      const throttled = await axios.get(`${url}/items/b`, { headers: { "x-job-id": "b" }, validateStatus: () => true, responseType: "text" });
      await held;
      expect(throttled.status).toBe(429);
      expect(throttled.data).toBe(body);
    } finally {
      await close();
    }
  });
});

describe("metrics", () => {
  const rec = (atMs: number, throttled = false): RequestRecord => ({ atMs, jobId: "j", method: "GET", status: throttled ? 429 : 200, throttled, executed: !throttled, fault: "none" });

  it("herdPeak counts the most requests in any 100 ms after the first throttle", () => {
    expect(herdPeak([rec(0), rec(1), rec(2)])).toBe(0);
    expect(herdPeak([rec(0), rec(1), rec(10, true), rec(50), rec(105), rec(110), rec(300)])).toBe(3);
  });

  it("the ideal is the server's minimum plus one answer, never below the workers' own bound", () => {
    expect(idealMs({ jobs: 8, workers: 1, latencyMs: 5, admissibleJobs: 8, serverMinimumMs: 2000, maxInFlight: Infinity })).toBe(2005);
    expect(idealMs({ jobs: 500, workers: 12, latencyMs: 50, admissibleJobs: 500, serverMinimumMs: 0, maxInFlight: Infinity })).toBe(2100);
    // A fixed window's last share waits for that window to open together: 100 jobs on one worker
    // take 100 answers after it (fixed 100 per 60 s, 500 jobs: 240 s + 100 x 200 ms), and three
    // workers carry 10 jobs in four rounds.
    expect(idealMs({ jobs: 500, workers: 1, latencyMs: 200, admissibleJobs: 500, serverMinimumMs: 240_000, maxInFlight: Infinity, lastBatchJobs: 100 })).toBe(260_000);
    expect(idealMs({ jobs: 100, workers: 3, latencyMs: 50, admissibleJobs: 100, serverMinimumMs: 9000, maxInFlight: Infinity, lastBatchJobs: 10 })).toBe(9200);
  });

  it("the calls a run's faults added count in the workers' bound too (the caller gives the server's minimum for them)", () => {
    // 100 jobs and 4 faults on 10 workers: 11 rounds of answers, not 10.
    expect(idealMs({ jobs: 100, workers: 10, latencyMs: 50, admissibleJobs: 100, serverMinimumMs: 0, maxInFlight: Infinity, faultCalls: 4 })).toBe(550);
    expect(idealMs({ jobs: 100, workers: 10, latencyMs: 50, admissibleJobs: 100, serverMinimumMs: 0, maxInFlight: Infinity })).toBe(500);
  });

  it("a run's ideal counts the units its 503s and dropped GETs spent: a sliding 40 per 3 s whose faults push calls past 120 needs a fourth window", async () => {
    const scenario = parseScenario(
      { name: "faults", server: { limiter: "sliding-window", limit: 40, windowMs: 3000, latencyMs: 200, faults: { error503Share: 0.02, dropShare: 0.02 } }, workload: { jobs: 120, workers: 35 }, clock: "virtual", seed: 11005 },
      STRATEGY_NAMES,
    );
    const run = await runStrategy(scenario, strategyByName("ours")!);
    const faults = run.requests.filter((r) => r.fault === "503" || r.fault === "drop").length;
    expect(faults).toBeGreaterThan(0);
    expect(run.result.calls).toBeGreaterThan(120);
    // Three windows hold 120 calls: the faults' own add a fourth (6 s, and its last answer).
    expect(run.result.idealMs).toBeGreaterThanOrEqual(9000);
    expect(run.result.makespanMs).toBeGreaterThanOrEqual(run.result.idealMs);
  });

  it("a run's ideal counts the units its GETs cut by the client's timeout spent: a bucket of 30 per 3 s needs a tenth of a second more for each", async () => {
    const scenario = parseScenario(
      { name: "cut", server: { limiter: "token-bucket", limit: 30, windowMs: 3000, latencyMs: 50, faults: { slowShare: 0.1, slowMs: 3000 } }, workload: { jobs: 100, workers: 10, requestTimeoutMs: 1000 }, clock: "virtual", seed: 160201 },
      STRATEGY_NAMES,
    );
    const run = await runStrategy(scenario, strategyByName("ours")!);
    const cut = run.requests.filter((r) => r.fault === "slow").length;
    expect(cut).toBeGreaterThan(0);
    // The bucket's 30 go at once; every other call, the cut ones' retries among them, waits 100 ms for its token.
    expect(run.result.idealMs).toBeGreaterThanOrEqual((100 + cut - 30) * 100);
    expect(run.result.makespanMs).toBeGreaterThanOrEqual(run.result.idealMs);
  });

  it("the workers' bound carries the slow answers' extra time: 12 answers 800 ms late on 3 workers add 3.2 s", () => {
    expect(idealMs({ jobs: 120, workers: 3, latencyMs: 60, admissibleJobs: 120, serverMinimumMs: 0, maxInFlight: 7, slowAnswerMs: 12 * 800 })).toBe(5600);
    expect(idealMs({ jobs: 120, workers: 3, latencyMs: 60, admissibleJobs: 120, serverMinimumMs: 0, maxInFlight: 7 })).toBe(2400);
  });

  it("a run's ideal counts its slow answers, cut at the client's timeout: no strategy finishes under it", async () => {
    const base = { name: "slow", server: { limiter: "concurrency", limit: 7, latencyMs: 60, faults: { slowShare: 0.1, slowMs: 800 } }, clock: "virtual", seed: 405 };
    const waited = await runStrategy(parseScenario({ ...base, workload: { jobs: 120, workers: 3 } }, STRATEGY_NAMES), strategyByName("naive")!);
    const slow = waited.requests.filter((r) => r.fault === "slow").length;
    expect(slow).toBeGreaterThan(0);
    expect(waited.result.idealMs).toBe(Math.round((120 * 60 + slow * 800) / 3));
    expect(waited.result.makespanMs).toBeGreaterThanOrEqual(waited.result.idealMs);
    // With a 300 ms timeout a slow answer holds its worker 300 ms at most (then the job goes again).
    const cut = await runStrategy(parseScenario({ ...base, workload: { jobs: 120, workers: 3, requestTimeoutMs: 300 } }, STRATEGY_NAMES), strategyByName("ours")!);
    const cutSlow = cut.requests.filter((r) => r.fault === "slow").length;
    expect(cut.result.idealMs).toBeGreaterThanOrEqual(Math.round((120 * 60 + cutSlow * 300) / 3));
    expect(cut.result.idealMs).toBeLessThan(Math.round((120 * 60 + cutSlow * 800) / 3));
    expect(cut.result.makespanMs).toBeGreaterThanOrEqual(cut.result.idealMs);
  });
});

describe("scenario files", () => {
  it("rejects an unknown limiter, a missing limit and an unknown strategy with one line", () => {
    expect(() => parseScenario({ name: "x", server: { limiter: "leaky", limit: 1, windowMs: 1 }, workload: { jobs: 1 } }, STRATEGY_NAMES)).toThrow(ScenarioError);
    expect(() => parseScenario({ name: "x", server: { limiter: "fixed-window", windowMs: 1 }, workload: { jobs: 1 } }, STRATEGY_NAMES)).toThrow(/server.limit is required/);
    expect(() => parseScenario({ name: "x", server: { limiter: "fixed-window", limit: 1, windowMs: 1 }, workload: { jobs: 1 }, strategies: ["magic"] }, STRATEGY_NAMES)).toThrow(/unknown strategy magic/);
  });

  it("takes server.throttleBody for the generic and IETF dialects only, as a string of at most 2,000 characters", () => {
    const withBody = (dialect: string, throttleBody: unknown) => parseScenario({ name: "x", server: { limiter: "concurrency", limit: 2, dialect, throttleBody }, workload: { jobs: 1 } }, STRATEGY_NAMES);
    expect(withBody("generic", "too many concurrent requests").server.throttleBody).toBe("too many concurrent requests");
    expect(withBody("ietf", "concurrent").server.throttleBody).toBe("concurrent");
    expect(() => withBody("stripe", "concurrent")).toThrow(/generic and ietf dialects only \(this scenario's is stripe\)/);
    expect(() => withBody("generic", 42)).toThrow(/server.throttleBody must be a string/);
    expect(() => withBody("generic", "x".repeat(2001))).toThrow(/server.throttleBody must be a string of 1 to 2000/);
    expect(parseScenario({ name: "x", server: { limiter: "fixed-window", limit: 1, windowMs: 1 }, workload: { jobs: 1 } }, STRATEGY_NAMES).server).not.toHaveProperty("throttleBody");
  });
});
