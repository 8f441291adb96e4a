/**
 * Runs one strategy against one scenario, on the virtual clock (in-process adapter, fake timers,
 * seeded Math.random) or the real one (node:http on 127.0.0.1), and turns what the server
 * recorded into the benchmark's numbers.
 */
import { inProcessAdapter } from "./adapter";
import { globalClock, runVirtual } from "./clock";
import { herdPeak, idealMs } from "./metrics";
import { ThrottledApi } from "./server";
import type { SharedStore, Strategy, StrategyEnv } from "./strategies/common";
import type { Scenario, StrategyRun } from "./types";
import { makeJobs, runWorkers, type JobRecord } from "./workers";

function summarise(scenario: Scenario, strategy: Strategy, api: ThrottledApi, jobs: JobRecord[], wallMs: number, error: string | null): StrategyRun {
  const { server, workload } = scenario;
  const count = (o: string): number => jobs.filter((j) => j.outcome === o).length;
  const admissibleJobs = server.limiter === "daily-quota" ? Math.floor(server.limit / api.cost) : workload.jobs;
  const ideal = idealMs({
    jobs: workload.jobs,
    workers: workload.workers,
    latencyMs: server.latencyMs,
    admissibleJobs,
    serverMinimumMs: api.minimumMs(Math.min(workload.jobs, admissibleJobs)),
    maxInFlight: server.limiter === "concurrency" ? server.limit : Number.POSITIVE_INFINITY,
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

async function execute(scenario: Scenario, strategy: Strategy, api: ThrottledApi, baseUrl: string, virtual: boolean, signal: AbortSignal | undefined): Promise<JobRecord[]> {
  const shared: SharedStore = { crossFlowState: {}, memory: new Map() };
  const env: StrategyEnv = { scenario, baseUrl, adapter: virtual ? inProcessAdapter(api) : undefined, clock: globalClock, shared };
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

export async function runStrategy(scenario: Scenario, strategy: Strategy): Promise<StrategyRun> {
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
  const api = new ThrottledApi(scenario.server, globalClock, scenario.seed);
  const { url, close } = await api.listen();
  const controller = new AbortController();
  const limit = setTimeout(() => controller.abort(), scenario.maxRunMs);
  try {
    const jobs = await execute(scenario, strategy, api, url, false, controller.signal);
    return summarise(scenario, strategy, api, jobs, performance.now() - wallStart, controller.signal.aborted ? `stopped at maxRunMs ${scenario.maxRunMs}` : null);
  } finally {
    clearTimeout(limit);
    await close();
  }
}

/** Runs every strategy a scenario names, one after another (each on a fresh server). */
export async function runScenario(
  scenario: Scenario,
  resolve: (name: string) => Strategy,
  onProgress?: (strategy: string, index: number, total: number) => void,
): Promise<StrategyRun[]> {
  const runs: StrategyRun[] = [];
  for (const [index, name] of scenario.strategies.entries()) {
    onProgress?.(name, index, scenario.strategies.length);
    runs.push(await runStrategy(scenario, resolve(name)));
  }
  return runs;
}
