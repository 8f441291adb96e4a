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
import type { ClaimRequest, GovernorState, LimitType, Observation } from "../engine";
import { STATE_KEY, type CrossFlowStore } from "./cross-flow";
import { escapeGlob, type RedisStore } from "./redis/store";
import type { ClaimScopes, GovernorStore, ParkedItem, ParkResult, QueueLimits, StoreClaim, StoreKind, TakeResult } from "./types";

export interface StepStore extends GovernorStore {
  /** The backing that answers now: "redis" until it fails, then "cross-flow". */
  backing(): "redis" | "cross-flow";
  /** Whether the scope is known to limit requests in flight, from the backing that answers now (no trip to Redis). */
  freesOnAnswerNow(scope: string): boolean;
  /** Whether every claim on the scope goes through the backing that answers now, and its state shows no others spending (no trip to Redis). */
  seesEveryClaimNow(scope: string): boolean;
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

/** Redis while it answers; cross-flow state from the first failure on (and always, without Redis). */
class FallbackStepStore implements StepStore {
  readonly kind: StoreKind;
  private failed: boolean;
  private sharedSalt: string | null = null;
  /** Scopes this step wrote through Redis: read back into cross-flow state at the end. */
  private readonly touched = new Set<string>();
  /** Scopes whose cross-flow wait was checked against Redis in this step. */
  private readonly carried = new Set<string>();

  constructor(
    private readonly crossFlow: CrossFlowStore,
    private readonly options: StepStoreOptions,
  ) {
    this.kind = options.shared ? "redis" : "cross-flow";
    this.failed = options.shared === undefined;
  }

  backing(): "redis" | "cross-flow" {
    return this.failed ? "cross-flow" : "redis";
  }

  private giveUp(error: unknown): void {
    if (this.failed) return;
    this.failed = true;
    const redact = this.options.redact ?? ((text: string) => text);
    const why = redact(error instanceof Error ? error.message : String(error)).slice(0, 200);
    this.options.warn(`throttle-aware-http: the shared store (Redis) did not answer (${why}); this step goes on with cross-flow state, whose waits are shared when the execution ends.`);
  }

  /** Runs op on Redis while it works; on the first failure, warns once and answers from cross-flow state from then on. */
  private async either<T>(op: (redis: RedisStore) => Promise<T>, fallback: () => Promise<T>): Promise<T> {
    const shared = this.options.shared;
    if (!this.failed && shared) {
      try {
        return await op(shared);
      } catch (error) {
        this.giveUp(error);
      }
    }
    return fallback();
  }

  /** A wait cross-flow state holds for these scopes (recorded while Redis was down) goes into Redis before the first claim. */
  private async carryWaits(redis: RedisStore, scopes: ClaimScopes, nowMs: number): Promise<void> {
    for (const scope of [scopes.governor, ...scopes.holds]) {
      if (this.carried.has(scope)) continue;
      this.carried.add(scope);
      const state = this.crossFlow.snapshot().get(scope);
      if (state && state.notBeforeMs > nowMs) await redis.holdUntil(scope, state.notBeforeMs, state.notBeforeReason, state.notBeforeType);
    }
  }

  claim(scopes: ClaimScopes, request: ClaimRequest): Promise<StoreClaim> {
    return this.either(
      async (redis) => {
        await this.carryWaits(redis, scopes, request.nowMs);
        this.touched.add(scopes.governor);
        return redis.claim(scopes, request);
      },
      () => this.crossFlow.claim(scopes, request),
    );
  }

  observe(scope: string, observation: Observation): Promise<void> {
    return this.either(
      (redis) => {
        this.touched.add(scope);
        return redis.observe(scope, observation);
      },
      () => this.crossFlow.observe(scope, observation),
    );
  }

  freesOnAnswerNow(scope: string): boolean {
    return this.failed || !this.options.shared ? this.crossFlow.freesOnAnswerNow(scope) : this.options.shared.freesOnAnswerNow(scope);
  }

  seesEveryClaimNow(scope: string): boolean {
    return this.failed || !this.options.shared ? this.crossFlow.seesEveryClaimNow(scope) : this.options.shared.seesEveryClaimNow(scope);
  }

  release(scope: string, seq: number): Promise<void> {
    return this.either(
      (redis) => redis.release(scope, seq),
      () => this.crossFlow.release(scope, seq),
    );
  }

  holdUntil(scope: string, untilMs: number, reason: string, limitType: LimitType | "unknown"): Promise<GovernorState> {
    return this.either(
      (redis) => {
        this.touched.add(scope);
        return redis.holdUntil(scope, untilMs, reason, limitType);
      },
      () => this.crossFlow.holdUntil(scope, untilMs, reason, limitType),
    );
  }

  async clear(scope: string): Promise<boolean> {
    const inCrossFlow = await this.crossFlow.clear(scope);
    const inRedis = await this.either(
      (redis) => redis.clear(scope),
      async () => false,
    );
    return inRedis || inCrossFlow;
  }

  scopesUnder(base: string): Promise<Array<[string, GovernorState]>> {
    return this.either(
      (redis) => redis.scopesUnder(base),
      () => this.crossFlow.scopesUnder(base),
    );
  }

  scopesForHost(host: string): Promise<Array<[string, GovernorState]>> {
    const ofHost = ([key]: [string, GovernorState]) => key.split("|")[1] === host;
    return this.either(
      async (redis) => (await redis.scopesMatching(`*|${escapeGlob(host)}|*`)).filter(ofHost),
      async () => [...this.crossFlow.snapshot().entries()].filter(ofHost),
    );
  }

  changed(scope: string, waitMs: number, signal?: AbortSignal): Promise<void> {
    const shared = this.options.shared;
    return this.failed || !shared ? this.crossFlow.changed(scope, waitMs, signal) : shared.changed(scope, waitMs, signal);
  }

  async salt(): Promise<string> {
    const own = await this.crossFlow.salt();
    return this.either(
      async (redis) => (this.sharedSalt = await redis.salt()),
      async () => this.sharedSalt ?? own,
    );
  }

  park(queue: string, items: readonly ParkedItem[], limits?: Partial<QueueLimits>): Promise<ParkResult> {
    return this.either(
      (redis) => redis.park(queue, items, limits),
      () => this.crossFlow.park(queue, items, limits),
    );
  }

  /** Items parked in cross-flow state (while Redis was down) first, then Redis's. */
  async takeParked(queue: string, nowMs: number, maxItems: number): Promise<TakeResult> {
    const local = await this.crossFlow.takeParked(queue, nowMs, maxItems);
    if (this.failed || !this.options.shared) return local;
    const room = maxItems - local.items.length;
    const remote = await this.either<TakeResult | null>(
      async (redis) => (room > 0 ? redis.takeParked(queue, nowMs, room) : { items: [], ...(await redis.peekParked(queue)) }),
      async () => null,
    );
    if (!remote) return local;
    const nexts = [local.nextNotBeforeMs, remote.nextNotBeforeMs].filter((ms): ms is number => ms !== null);
    return { items: [...local.items, ...remote.items], remaining: local.remaining + remote.remaining, nextNotBeforeMs: nexts.length > 0 ? Math.min(...nexts) : null };
  }

  async toCrossFlowState(): Promise<Record<string, unknown>> {
    if (!this.failed && this.options.shared) {
      // The scopes this step used, as Redis holds them now, and the salt that names them: the
      // fallback for a later execution that cannot reach Redis.
      await this.either(
        async (redis) => {
          this.sharedSalt ??= await redis.salt();
          const states = new Map(await redis.statesOf([...this.touched]));
          for (const scope of this.touched) {
            const state = states.get(scope);
            if (state) this.crossFlow.load({ [scope]: state });
            else await this.crossFlow.clear(scope);
          }
        },
        async () => undefined,
      );
    }
    const saved = this.crossFlow.toCrossFlowState();
    const own = saved[STATE_KEY] as Record<string, unknown>;
    // The salt Redis holds names every scope: a later execution without Redis must use it too.
    return this.sharedSalt ? { [STATE_KEY]: { ...own, salt: this.sharedSalt } } : saved;
  }

  async close(): Promise<void> {
    await this.options.shared?.close();
    await this.crossFlow.close();
  }
}

export function createStepStore(crossFlow: CrossFlowStore, options: StepStoreOptions): StepStore {
  return new FallbackStepStore(crossFlow, options);
}
