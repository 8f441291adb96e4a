/**
 * Ours: createThrottleClient (engine + client) with the not_before ledger, coordinated as the
 * scenario says:
 * - none: each worker has its own in-memory ledger (nothing shared);
 * - in-process: one ledger shared by every worker (one step fanning out);
 * - cross-flow: Prismatic cross-flow-state semantics: each job is one execution that loads the
 *   ledger as the store stood when it started and writes it back when it ends (last writer wins;
 *   a failed execution writes nothing).
 * Long waits defer (onLongWait "defer"); POSTs carry the job id as their idempotency key; the
 * budget threshold is workers - 1, so that the requests still in flight when the budget shows
 * empty fit in what is left.
 */
import { createThrottleClient, realClock, type ThrottleClient } from "../../client";
import { createMemoryLedger, createStateLedger, type Ledger } from "../../ledger";
import { isSuccess } from "../dialects";
import { JOB_HEADER } from "../server";
import type { DialectId, JobOutcome, Scenario } from "../types";
import type { Job, Strategy, StrategyEnv } from "./common";

/** The engine dialect that reads each lab dialect. */
export const ENGINE_PROVIDER: Record<DialectId, string> = {
  generic: "generic",
  ietf: "generic",
  github: "github",
  "github-secondary": "github",
  "shopify-rest": "shopify",
  "shopify-graphql": "shopify",
  stripe: "stripe",
  slack: "slack",
  hubspot: "hubspot",
};

const SHARED_LEDGER = "ours.ledger";

/** In the budget's own unit: requests, or points for a cost bucket (one query's cost per worker in flight). */
export function budgetThresholdFor(scenario: Scenario): number {
  const inFlight = Math.max(0, scenario.workload.workers - 1);
  return scenario.server.limiter === "cost-bucket" ? (inFlight + 1) * scenario.server.costPerRequest : inFlight;
}

function makeClient(env: StrategyEnv, ledger: Ledger, signal: AbortSignal): ThrottleClient {
  const { scenario } = env;
  return createThrottleClient({
    baseUrl: env.baseUrl,
    provider: ENGINE_PROVIDER[scenario.server.dialect],
    ledger,
    budgetThreshold: budgetThresholdFor(scenario),
    // The default policy, as a user gets it: waits up to 2 minutes are slept through, longer ones deferred.
    onLongWait: "defer",
    clock: realClock,
    random: Math.random,
    adapter: env.adapter,
    scopeKey: "lab-api",
    timeoutMs: scenario.workload.requestTimeoutMs || undefined,
    signal,
  });
}

async function runJob(client: ThrottleClient, job: Job, signal: AbortSignal): Promise<JobOutcome> {
  try {
    const result = await client.request({
      method: job.method,
      url: `/items/${job.id}`,
      headers: { [JOB_HEADER]: job.id },
      data: job.method === "POST" ? { jobId: job.id } : undefined,
      idempotencyKey: job.method === "POST" ? job.id : undefined,
      signal,
    });
    if (result.outcome === "deferred") return "deferred";
    if (result.outcome === "success" && result.status !== null && isSuccess(result.status, result.data)) return "ok";
    return "failed";
  } catch {
    return "failed";
  }
}

export const ours: Strategy = {
  name: "ours",
  description: "createThrottleClient + not_before ledger (coordination per scenario), budget threshold workers-1, inline waits up to 2 min, longer ones deferred",
  createRunner(env) {
    const coordination = env.scenario.workload.coordination;
    if (coordination === "cross-flow") {
      return async (job, signal) => {
        const started = env.shared.crossFlowState;
        const ledger = createStateLedger(started, env.clock.nowMs());
        const outcome = await runJob(makeClient(env, ledger, signal), job, signal);
        // Prismatic writes state when an execution ends, and not when it fails.
        if (outcome !== "failed") env.shared.crossFlowState = ledger.toCrossFlowState(started);
        return outcome;
      };
    }
    let ledger: Ledger;
    if (coordination === "in-process") {
      const existing = env.shared.memory.get(SHARED_LEDGER) as Ledger | undefined;
      ledger = existing ?? createMemoryLedger();
      env.shared.memory.set(SHARED_LEDGER, ledger);
    } else {
      ledger = createMemoryLedger();
    }
    return (job, signal) => runJob(makeClient(env, ledger, signal), job, signal);
  },
};
