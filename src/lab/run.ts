/**
 * Runs one strategy against one scenario, on the virtual clock (in-process adapter, fake timers,
 * seeded Math.random) or the real one (node:http on 127.0.0.1), and turns what the server
 * recorded into the benchmark's numbers.
 */
import { inProcessAdapter } from "./adapter";
import { globalClock, runVirtual } from "./clock";
import { herdPeak, idealMs } from "./metrics";
import { forkPool, type ProcessPool } from "./processes";
import { redisServerAvailable, startGate, startRedisServer, type RedisGate } from "./redis-server";
import { needsRedis, ScenarioError } from "./scenario";
import { ThrottledApi } from "./server";
import type { SharedStore, Strategy, StrategyEnv } from "./strategies/common";
import type { Scenario, StrategyRun } from "./types";
import { makeJobs, runWorkers, type JobRecord } from "./workers";

/**
 * Calls the server admitted and counted whose job was not done by them: a 503 (answered without being
 * executed), a dropped GET (its retry is a request of its own) and a GET whose slow answer the
 * client's per-attempt timeout cut (the same: no client reads an answer it gave up on). A dropped or
 * cut POST was executed, and its retry with the same idempotency key is a replay that spends nothing.
 */
function unitsSpentOnFaults(scenario: Scenario, api: ThrottledApi): number {
  const timeoutMs = scenario.workload.requestTimeoutMs;
  const slowCut = timeoutMs > 0 && scenario.server.faults.slowMs > timeoutMs;
  let units = 0;
  for (const r of api.records) {
    if (r.fault === "503" || (r.method === "GET" && (r.fault === "drop" || (r.fault === "slow" && slowCut)))) units += 1;
  }
  return units;
}

/**
 * The worker time the run's slow answers held beyond the usual answer time: each one's delay, or the
 * client's per-attempt timeout where that is shorter (a client that cuts one waits no longer).
 */
function slowAnswerMs(scenario: Scenario, api: ThrottledApi): number {
  const { slowMs } = scenario.server.faults;
  const timeoutMs = scenario.workload.requestTimeoutMs;
  const perSlowMs = timeoutMs > 0 ? Math.min(slowMs, timeoutMs) : slowMs;
  let count = 0;
  for (const r of api.records) if (r.fault === "slow") count += 1;
  return count * perSlowMs;
}

function summarise(scenario: Scenario, strategy: Strategy, api: ThrottledApi, jobs: JobRecord[], wallMs: number, error: string | null): StrategyRun {
  const { server, workload } = scenario;
  const count = (o: string): number => jobs.filter((j) => j.outcome === o).length;
  const admissibleJobs = server.limiter === "daily-quota" ? Math.floor(server.limit / api.cost) : workload.jobs;
  // The faults the server drew in this run each spent a unit of the limit and left their job to do
  // again: no client reaches the job count's minimum then (a quota's are left out: it caps the jobs).
  const faultCalls = server.limiter === "daily-quota" ? 0 : unitsSpentOnFaults(scenario, api);
  const calls = Math.min(workload.jobs, admissibleJobs) + faultCalls;
  const ideal = idealMs({
    jobs: workload.jobs,
    workers: workload.workers,
    latencyMs: server.latencyMs,
    admissibleJobs,
    serverMinimumMs: api.minimumMs(calls),
    lastBatchJobs: api.lastBatch(calls),
    maxInFlight: server.limiter === "concurrency" ? server.limit : Number.POSITIVE_INFINITY,
    faultCalls,
    slowAnswerMs: slowAnswerMs(scenario, api),
  });
  const makespan = jobs.reduce((m, j) => Math.max(m, j.endAtMs - api.originMs), 0);
  const missing = workload.jobs - jobs.length;
  return {
    result: {
      strategy: strategy.name,
      ok: count("ok"),
      failed: count("failed") + missing,
      deferred: count("deferred"),
      calls: api.records.length,
      throttled: api.records.filter((r) => r.throttled).length,
      makespanMs: Math.round(makespan),
      idealMs: Math.round(ideal),
      duplicates: api.duplicates(),
      herdPeak: herdPeak(api.records),
    },
    requests: api.records.slice(),
    jobs: jobs.map((j) => ({ jobId: j.jobId, endMs: Math.round(j.endAtMs - api.originMs), outcome: j.outcome })),
    wallMs,
    error,
  };
}

/** Where a run's Redis is: the server's URL (behind a gate when the scenario has an outage) and the run's own key prefix. */
type LabRedis = { url: string; keyPrefix: string } | undefined;

async function execute(scenario: Scenario, strategy: Strategy, api: ThrottledApi, baseUrl: string, virtual: boolean, signal: AbortSignal | undefined, redis?: LabRedis): Promise<JobRecord[]> {
  const shared: SharedStore = { crossFlowState: {}, memory: new Map() };
  const env: StrategyEnv = { scenario, baseUrl, adapter: virtual ? inProcessAdapter(api) : undefined, clock: globalClock, shared, redis };
  const jobs = makeJobs(scenario.workload.jobs, scenario.workload.method);
  if (strategy.runAll) return strategy.runAll(env, jobs, signal);
  return runWorkers({
    jobs,
    workers: scenario.workload.workers,
    executionLimitMs: scenario.workload.executionLimitMs,
    clock: globalClock,
    createRunner: (workerIndex) => strategy.createRunner(env, workerIndex),
    signal,
  });
}

/** Makes Redis unreachable (through the gate) from atMs after the API's start, for forMs. */
function scheduleOutage(scenario: Scenario, gate: RedisGate | null): () => void {
  const outage = scenario.workload.storeOutage;
  if (!gate || !outage) return () => undefined;
  const shut = setTimeout(() => void gate.shut(), outage.atMs);
  const open = setTimeout(() => void gate.open(), outage.atMs + outage.forMs);
  return () => {
    clearTimeout(shut);
    clearTimeout(open);
  };
}

/** A real-clock run: the API on a loopback socket, and for Redis scenarios the gate and the child processes. */
async function runReal(scenario: Scenario, strategy: Strategy, redisUrl: string | undefined): Promise<StrategyRun> {
  const wallStart = performance.now();
  const { processes, storeOutage } = scenario.workload;
  // Children start before the API, so that their start-up (tsx) is not counted in the makespan.
  const pool: ProcessPool | null = processes > 1 ? await forkPool(processes) : null;
  const gate = redisUrl && storeOutage ? await startGate(redisUrl) : null;
  const redis: LabRedis = redisUrl ? { url: gate?.url ?? redisUrl, keyPrefix: `lab:${strategy.name}:${Date.now().toString(36)}:` } : undefined;
  const api = new ThrottledApi(scenario.server, globalClock, scenario.seed);
  const { url, close } = await api.listen();
  const controller = new AbortController();
  const limit = setTimeout(() => controller.abort(), scenario.maxRunMs);
  const stopOutage = scheduleOutage(scenario, gate);
  try {
    const jobs = pool
      ? await pool.run({ scenario, strategy: strategy.name, baseUrl: url, redis, jobs: makeJobs(scenario.workload.jobs, scenario.workload.method), signal: controller.signal })
      : await execute(scenario, strategy, api, url, false, controller.signal, redis);
    return summarise(scenario, strategy, api, jobs, performance.now() - wallStart, controller.signal.aborted ? `stopped at maxRunMs ${scenario.maxRunMs}` : null);
  } finally {
    clearTimeout(limit);
    stopOutage();
    pool?.kill();
    await gate?.close();
    await close();
  }
}

export async function runStrategy(scenario: Scenario, strategy: Strategy, redisUrl?: string): Promise<StrategyRun> {
  const wallStart = performance.now();
  if (scenario.clock === "virtual") {
    let api: ThrottledApi | undefined;
    try {
      const { jobs, server } = await runVirtual({ seed: scenario.seed, maxRunMs: scenario.maxRunMs }, async () => {
        const virtualApi = new ThrottledApi(scenario.server, globalClock, scenario.seed);
        api = virtualApi;
        return { jobs: await execute(scenario, strategy, virtualApi, "http://lab.invalid", true, undefined), server: virtualApi };
      });
      return summarise(scenario, strategy, server, jobs, performance.now() - wallStart, null);
    } catch (error) {
      if (!api) throw error;
      return summarise(scenario, strategy, api, [], performance.now() - wallStart, error instanceof Error ? error.message : String(error));
    }
  }
  return runReal(scenario, strategy, redisUrl);
}

/** No redis-server on PATH and no REDIS_URL: a Redis scenario cannot run. */
export class RedisUnavailableError extends ScenarioError {}

/**
 * A Redis scenario's server for the whole scenario: REDIS_URL when set, else a redis-server from
 * PATH on a free port, stopped afterwards. Without either, one line says so.
 */
async function withScenarioRedis<T>(scenario: Scenario, body: (url: string | undefined) => Promise<T>): Promise<T> {
  if (!needsRedis(scenario)) return body(undefined);
  if (!process.env.REDIS_URL && !redisServerAvailable()) {
    throw new RedisUnavailableError(`${scenario.name}: needs Redis (workload.coordination "redis"), and there is no redis-server on PATH: install it (apt-get install -y redis-server) or set REDIS_URL=redis://host:port`);
  }
  const server = await startRedisServer();
  try {
    return await body(server.url);
  } finally {
    await server.stop();
  }
}

/** Runs every strategy a scenario names, one after another (each on a fresh server). */
export async function runScenario(
  scenario: Scenario,
  resolve: (name: string) => Strategy,
  onProgress?: (strategy: string, index: number, total: number) => void,
): Promise<StrategyRun[]> {
  return withScenarioRedis(scenario, async (redisUrl) => {
    const runs: StrategyRun[] = [];
    for (const [index, name] of scenario.strategies.entries()) {
      onProgress?.(name, index, scenario.strategies.length);
      runs.push(await runStrategy(scenario, resolve(name), redisUrl));
    }
    return runs;
  });
}
