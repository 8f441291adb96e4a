/**
 * Ours: createThrottleClient with the component's defaults, its governors shared as the scenario
 * says. It is given nothing a user would not know: no worker count, no limit.
 * - none: each worker has its own in-memory store (nothing shared);
 * - in-process: one store shared by every worker (one step fanning out);
 * - cross-flow: Prismatic cross-flow-state semantics: each job is one execution that loads the
 *   state as it stood when it started and writes it back when it ends (last writer wins; a failed
 *   execution writes nothing).
 * - redis: each job is one execution with a Shared Store, as the component runs it (openStore):
 *   Redis in front of its cross-flow state, one connection per execution, closed at its end; when
 *   Redis does not answer, the execution goes on with cross-flow state.
 * Long waits defer (onLongWait "defer"): the API's past 2 minutes, the governor's pacing past the
 * request's 10 minutes. POSTs carry the job id as their idempotency key where the API honours one
 * (`server.honoursIdempotencyKey`, as a user reads in the provider's docs: Stripe's Idempotency-Key,
 * https://docs.stripe.com/api/idempotent_requests); where it does not, a key would not make a repeat
 * safe, so none is sent and a POST whose answer was lost is not repeated (write-safety.ts).
 */
import { createThrottleClient, realClock, type ThrottleClient } from "../../client";
import { createCrossFlowStore, createMemoryStore, type GovernorStore } from "../../store";
import { createStepStore } from "../../store/fallback";
import { createRedisStore } from "../../store/redis/store";
import { isSuccess } from "../dialects";
import { JOB_HEADER } from "../server";
import type { DialectId, JobOutcome } from "../types";
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
  marketo: "marketo",
};

const SHARED_STORE = "ours.store";

function makeClient(env: StrategyEnv, store: GovernorStore, signal: AbortSignal): ThrottleClient {
  const { scenario } = env;
  return createThrottleClient({
    baseUrl: env.baseUrl,
    provider: ENGINE_PROVIDER[scenario.server.dialect],
    store,
    // The default policy, as a user gets it: the API's waits up to 2 minutes and the governor's turns
    // up to the request's 10 minutes are slept through, longer ones deferred.
    onLongWait: "defer",
    clock: realClock,
    random: Math.random,
    adapter: env.adapter,
    scopeKey: "lab-api",
    timeoutMs: scenario.workload.requestTimeoutMs || undefined,
    signal,
  });
}

async function runJob(client: ThrottleClient, job: Job, signal: AbortSignal, keyHonoured: boolean): Promise<JobOutcome> {
  try {
    const result = await client.request({
      method: job.method,
      url: `/items/${job.id}`,
      headers: { [JOB_HEADER]: job.id },
      data: job.method === "POST" ? { jobId: job.id } : undefined,
      idempotencyKey: job.method === "POST" && keyHonoured ? job.id : undefined,
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
  description: "createThrottleClient with the component's defaults: a governor per scope (shared as the scenario says), inline waits up to 2 min, longer ones deferred",
  createRunner(env) {
    const coordination = env.scenario.workload.coordination;
    const keyHonoured = env.scenario.server.honoursIdempotencyKey;
    if (coordination === "cross-flow") {
      return async (job, signal) => {
        const started = env.shared.crossFlowState;
        const store = createCrossFlowStore(started, { clock: realClock });
        const outcome = await runJob(makeClient(env, store, signal), job, signal, keyHonoured);
        // Prismatic writes state when an execution ends, and not when it fails.
        if (outcome !== "failed") env.shared.crossFlowState = { ...env.shared.crossFlowState, ...store.toCrossFlowState() };
        return outcome;
      };
    }
    if (coordination === "redis") {
      const redis = env.redis;
      if (!redis) throw new Error('coordination "redis" needs a Redis: the runner starts one (or uses REDIS_URL)');
      return async (job, signal) => {
        const crossFlow = createCrossFlowStore(env.shared.crossFlowState, { clock: realClock });
        const shared = createRedisStore({ url: redis.url, keyPrefix: redis.keyPrefix, saltCandidate: crossFlow.saltValue });
        // The fallback warns in the step's log; the lab judges the outcome, not the log line.
        const store = createStepStore(crossFlow, { shared, warn: () => undefined });
        try {
          const outcome = await runJob(makeClient(env, store, signal), job, signal, keyHonoured);
          if (outcome !== "failed") env.shared.crossFlowState = { ...env.shared.crossFlowState, ...(await store.toCrossFlowState()) };
          return outcome;
        } finally {
          await store.close();
        }
      };
    }
    let store: GovernorStore;
    if (coordination === "in-process") {
      const existing = env.shared.memory.get(SHARED_STORE) as GovernorStore | undefined;
      store = existing ?? createMemoryStore({ clock: realClock });
      env.shared.memory.set(SHARED_STORE, store);
    } else {
      store = createMemoryStore({ clock: realClock });
    }
    // One client per worker (a worker is one execution), as a user's step would build it.
    const client = makeClient(env, store, new AbortController().signal);
    return (job, signal) => runJob(client, job, signal, keyHonoured);
  },
};
