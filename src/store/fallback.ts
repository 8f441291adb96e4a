/**
 * A step's store: cross-flow state always, and a shared Redis store when the step was given one.
 *
 * With Redis, Redis is the truth: every wait is written there the moment it is known (a failed
 * execution keeps it too), and concurrent executions see each other's slots. Cross-flow state is
 * still loaded and returned, as the fallback for a later execution that cannot reach Redis: at the
 * end of the step the scopes it used are read back from Redis into it.
 *
 * If Redis fails (unreachable, slow past its timeouts, an error), the step goes on with cross-flow
 * state for the rest of its run and says so in ONE warning: the shared store never fails a step.
 * Waits recorded in cross-flow state while Redis was down are carried into Redis the first time a
 * step that reaches it uses their scope, and park queues are taken from both (items parked during
 * an outage stay in cross-flow state until taken).
 */
import type { GovernorState } from "../engine";
import { STATE_KEY, type CrossFlowStore } from "./cross-flow";
import { escapeGlob, type RedisStore } from "./redis/store";
import type { ClaimScopes, GovernorStore, TakeResult } from "./types";

export interface StepStore extends GovernorStore {
  /** The backing that answers now: "redis" until it fails, then "cross-flow". */
  backing(): "redis" | "cross-flow";
  /** What to return as the step's crossFlowState (this component's key only). */
  toCrossFlowState(): Promise<Record<string, unknown>>;
  /** Every recorded scope of a host (provider|host|credential...), for the backoff steps' warning. */
  scopesForHost(host: string): Promise<Array<[string, GovernorState]>>;
}

export interface StepStoreOptions {
  /** The shared store, when the step was given one. */
  shared?: RedisStore;
  /** One line for the step's log. */
  warn(message: string): void;
  /** Removes the shared store's secrets from a message (its password). */
  redact?(text: string): string;
}

export function createStepStore(crossFlow: CrossFlowStore, options: StepStoreOptions): StepStore {
  const shared = options.shared;
  const redact = options.redact ?? ((text: string) => text);
  let failed = shared === undefined;
  let sharedSalt: string | null = null;
  /** Scopes this step wrote through Redis: read back into cross-flow state at the end. */
  const touched = new Set<string>();
  /** Scopes whose cross-flow wait was checked against Redis in this step. */
  const carried = new Set<string>();

  function giveUp(error: unknown): void {
    if (failed) return;
    failed = true;
    const why = redact(error instanceof Error ? error.message : String(error)).slice(0, 200);
    options.warn(`throttle-aware-http: the shared store (Redis) did not answer (${why}); this step goes on with cross-flow state, whose waits are shared when the execution ends.`);
  }

  /** Runs op on Redis while it works; on the first failure, warns once and answers from cross-flow state from then on. */
  async function either<T>(op: (redis: RedisStore) => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    if (!failed && shared) {
      try {
        return await op(shared);
      } catch (error) {
        giveUp(error);
      }
    }
    return fallback();
  }

  /** A wait cross-flow state holds for these scopes (recorded while Redis was down) goes into Redis before the first claim. */
  async function carryWaits(redis: RedisStore, scopes: ClaimScopes, nowMs: number): Promise<void> {
    for (const scope of [scopes.governor, ...scopes.holds]) {
      if (carried.has(scope)) continue;
      carried.add(scope);
      const state = crossFlow.snapshot().get(scope);
      if (state && state.notBeforeMs > nowMs) await redis.holdUntil(scope, state.notBeforeMs, state.notBeforeReason, state.notBeforeType);
    }
  }

  const store: StepStore = {
    kind: shared ? "redis" : "cross-flow",
    backing: () => (failed ? "cross-flow" : "redis"),
    claim(scopes, request) {
      return either(
        async (redis) => {
          await carryWaits(redis, scopes, request.nowMs);
          touched.add(scopes.governor);
          return redis.claim(scopes, request);
        },
        () => crossFlow.claim(scopes, request),
      );
    },
    observe(scope, observation) {
      return either(
        (redis) => {
          touched.add(scope);
          return redis.observe(scope, observation);
        },
        () => crossFlow.observe(scope, observation),
      );
    },
    release(scope, seq) {
      return either(
        (redis) => redis.release(scope, seq),
        () => crossFlow.release(scope, seq),
      );
    },
    holdUntil(scope, untilMs, reason, limitType) {
      return either(
        (redis) => {
          touched.add(scope);
          return redis.holdUntil(scope, untilMs, reason, limitType);
        },
        () => crossFlow.holdUntil(scope, untilMs, reason, limitType),
      );
    },
    async clear(scope) {
      const inCrossFlow = await crossFlow.clear(scope);
      const inRedis = await either(
        (redis) => redis.clear(scope),
        async () => false,
      );
      return inRedis || inCrossFlow;
    },
    scopesUnder(base) {
      return either(
        (redis) => redis.scopesUnder(base),
        () => crossFlow.scopesUnder(base),
      );
    },
    scopesForHost(host) {
      const ofHost = ([key]: [string, GovernorState]) => key.split("|")[1] === host;
      return either(
        async (redis) => (await redis.scopesMatching(`*|${escapeGlob(host)}|*`)).filter(ofHost),
        async () => [...crossFlow.snapshot().entries()].filter(ofHost),
      );
    },
    changed(scope, waitMs, signal) {
      return failed || !shared ? crossFlow.changed(scope, waitMs, signal) : shared.changed(scope, waitMs, signal);
    },
    async salt() {
      const own = await crossFlow.salt();
      return either(
        async (redis) => {
          sharedSalt = await redis.salt();
          return sharedSalt;
        },
        async () => sharedSalt ?? own,
      );
    },
    park(queue, items, limits) {
      return either(
        (redis) => redis.park(queue, items, limits),
        () => crossFlow.park(queue, items, limits),
      );
    },
    async takeParked(queue, nowMs, maxItems): Promise<TakeResult> {
      // Items parked in cross-flow state (while Redis was down) first, then Redis's.
      const local = await crossFlow.takeParked(queue, nowMs, maxItems);
      if (failed || !shared) return local;
      const room = maxItems - local.items.length;
      const remote = await either<TakeResult | null>(
        async (redis) => (room > 0 ? redis.takeParked(queue, nowMs, room) : { items: [], ...(await redis.peekParked(queue)) }),
        async () => null,
      );
      if (!remote) return local;
      const nexts = [local.nextNotBeforeMs, remote.nextNotBeforeMs].filter((ms): ms is number => ms !== null);
      return { items: [...local.items, ...remote.items], remaining: local.remaining + remote.remaining, nextNotBeforeMs: nexts.length > 0 ? Math.min(...nexts) : null };
    },
    async toCrossFlowState() {
      if (!failed && shared) {
        // The scopes this step used, as Redis holds them now, and the salt that names them: the
        // fallback for a later execution that cannot reach Redis.
        await either(
          async (redis) => {
            sharedSalt ??= await redis.salt();
            const states = new Map(await redis.statesOf([...touched]));
            for (const scope of touched) {
              const state = states.get(scope);
              if (state) crossFlow.load({ [scope]: state });
              else await crossFlow.clear(scope);
            }
          },
          async () => undefined,
        );
      }
      const saved = crossFlow.toCrossFlowState();
      const own = saved[STATE_KEY] as Record<string, unknown>;
      // The salt Redis holds names every scope: a later execution without Redis must use it too.
      return sharedSalt ? { [STATE_KEY]: { ...own, salt: sharedSalt } } : saved;
    },
    async close() {
      await shared?.close();
      await crossFlow.close();
    },
  };
  return store;
}
