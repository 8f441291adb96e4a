/**
 * One child process of `workload.processes` (forked by processes.ts): runs its share of the
 * workers, each asking the parent for its next job, with the strategy's own runners (so its own
 * clients and stores). Cross-flow state comes from the parent with each job and goes back when a
 * job writes it. It exits when its workers have no job left.
 */
import { globalClock } from "./clock";
import type { ChildSays, ParentSays } from "./processes";
import { strategyByName } from "./strategies";
import type { Job, SharedStore, StrategyEnv } from "./strategies/common";
import { runWithLimit } from "./workers";

const say = (message: ChildSays): void => {
  process.send?.(message);
};

const waiting = new Map<number, (job: Job | null) => void>();
let latestState: Record<string, unknown> = {};

const shared: SharedStore = {
  get crossFlowState() {
    return latestState;
  },
  set crossFlowState(value: Record<string, unknown>) {
    latestState = value;
    say({ kind: "state", crossFlowState: value });
  },
  memory: new Map(),
};

function nextJob(worker: number): Promise<Job | null> {
  return new Promise((resolve) => {
    waiting.set(worker, resolve);
    say({ kind: "next", worker });
  });
}

async function start(message: Extract<ParentSays, { kind: "start" }>): Promise<void> {
  const strategy = strategyByName(message.strategy);
  if (!strategy) throw new Error(`unknown strategy ${message.strategy}`);
  const env: StrategyEnv = { scenario: message.scenario, baseUrl: message.baseUrl, adapter: undefined, clock: globalClock, shared, redis: message.redis };
  await Promise.all(
    message.workers.map(async (worker) => {
      const runner = strategy.createRunner(env, worker);
      for (let job = await nextJob(worker); job; job = await nextJob(worker)) {
        const outcome = await runWithLimit(runner, job, message.scenario.workload.executionLimitMs, undefined);
        say({ kind: "done", jobId: job.id, outcome, endAtMs: globalClock.nowMs() });
      }
    }),
  );
}

process.on("message", (message: ParentSays) => {
  if (message.kind === "job") {
    latestState = message.crossFlowState;
    const resolve = waiting.get(message.worker);
    waiting.delete(message.worker);
    resolve?.(message.job);
    return;
  }
  start(message).then(
    () => {
      say({ kind: "finished" });
      process.disconnect?.();
    },
    (error: unknown) => {
      say({ kind: "error", message: error instanceof Error ? error.message : String(error) });
      process.disconnect?.();
    },
  );
});

say({ kind: "ready" });
