/**
 * The Redis store: the governors and park queues shared by every execution, instance and process
 * that uses the same Redis and key prefix. Each operation is one Lua script (scripts.ts), atomic
 * in Redis; the client is node-redis (see connection.ts).
 *
 * Keys, under the prefix (default "throttle-aware-http:"):
 *   s:<scope>   one scope's GovernorState as JSON (expires when nothing in it can matter, plus retainMs)
 *   q:<queue>   a park queue: a list of JSON entries (expires after its latest not_before, plus a week)
 *   salt        the fingerprint salt (expires after 30 days unused)
 *
 * Time is Redis's TIME (see scripts.ts). The offset between this process's clock and Redis's is
 * measured NTP-style from each claim's round trip (Redis's now against the middle of the call,
 * https://www.rfc-editor.org/rfc/rfc5905#section-8), keeping the sample of the shortest round trip
 * (its error is at most half of it) and renewing it every 30 s; an observation's instants are moved
 * by it. Waiting for a scope (`changed`): a waiter in this process
 * is woken as soon as this store writes the scope (a probe's answer observed here); otherwise it
 * sleeps until the time the claim named (a probe's expected answer, a re-check), and at most
 * changeCheckMs, then claims again: polling, with no second connection for pub/sub. The bound is
 * for the writes of other executions, which this store does not see: a grant held far ahead (a
 * probe at a reset, a start laid from an estimate) is claimed again when the state may have
 * changed, and only another execution's answer may show an earlier start. Slept through until its
 * reset, the one unit the others' answers freed was left unused: 50 executions in 5 processes
 * took a fourth window of 100 per 10 s for their 300 requests in about half the runs.
 *
 * Timeouts: connect and every command give up after about a second (connectTimeoutMs,
 * commandTimeoutMs) and the client never reconnects by itself: the caller (the step's fallback)
 * decides what to do. close() ends the socket and every timer.
 */
import { randomBytes } from "node:crypto";
import { clip } from "../../engine/governor/state";
import { DEFAULT_GOVERNOR_OPTIONS, keptHeldGrant, latestPacedStartMs, readState, type ClaimRequest, type GovernorOptions, type GovernorState, type LimitType, type Observation } from "../../engine";
import { defaultStoreClock, type StoreClock } from "../memory";
import { DEFAULT_QUEUE_LIMITS, MAX_QUEUE_NAME_LENGTH } from "../queue";
import type { ClaimScopes, GovernorStore, ParkedItem, ParkResult, QueueLimits, StoreClaim, TakeResult } from "../types";
import { ScopeWaiters } from "../waiters";
import { RedisConnection } from "./connection";

export const DEFAULT_KEY_PREFIX = "throttle-aware-http:";
/** What was learned of a scope is kept this long after the last time anything in it mattered. */
export const DEFAULT_RETAIN_MS = 60 * 60_000;
/** A park queue is kept this long after its latest not_before. */
export const QUEUE_RETAIN_MS = 7 * 86_400_000;
const SALT_RETAIN_MS = 30 * 86_400_000;
/** See `changed`: a few answer times of a typical API, a few claims a second per waiting request. */
export const DEFAULT_CHANGE_CHECK_MS = 250;
/** Scopes whose last answered note (ScopeNote) a Redis store keeps in memory (a memory store keeps at most 500 scopes). */
const MAX_NOTED_SCOPES = 1000;

/** What the scripts answer of a scope's state besides the claim: see RedisGovernorStore.scopeNotes. */
interface ScopeNote {
  places: boolean;
  seen: boolean;
}

export interface RedisStoreOptions {
  /** redis://host:port or rediss://host:port (TLS). */
  url: string;
  username?: string;
  password?: string;
  /** Prefix of every key (default "throttle-aware-http:"). Stores with different prefixes share nothing. */
  keyPrefix?: string;
  /** Default 1,000 ms. */
  connectTimeoutMs?: number;
  /** Default 1,000 ms per command (a script is one command). */
  commandTimeoutMs?: number;
  governor?: Partial<GovernorOptions>;
  /** The clock `changed` sleeps on (default: the real one). */
  clock?: StoreClock;
  /** The longest `changed` sleeps before its waiter claims again (default 250 ms): other executions' writes are not seen here. */
  changeCheckMs?: number;
  /** Park queue bounds per queue (default 1,000 items, 2 MiB). */
  queueLimits?: Partial<QueueLimits>;
  /** How long what a scope learned is kept once nothing in it matters any more (default 1 hour). */
  retainMs?: number;
  /** The salt to set when Redis has none yet (so that an instance's cross-flow salt carries over). */
  saltCandidate?: string;
  /** TEST ONLY: the scripts' "now" instead of Redis's TIME (the differential test). */
  nowForTest?: () => number;
}

export interface RedisStore extends GovernorStore {
  readonly kind: "redis";
  /** Connects (once); rejects after connectTimeoutMs. Every operation calls it. */
  connect(): Promise<void>;
  /** The states of every scope whose key matches a glob over scope names (already escaped by the caller). */
  scopesMatching(pattern: string): Promise<Array<[string, GovernorState]>>;
  /** The states of these scopes (those that exist). */
  statesOf(scopes: readonly string[]): Promise<Array<[string, GovernorState]>>;
  /** A park queue's size and earliest not_before, taking nothing. */
  peekParked(queue: string): Promise<Omit<TakeResult, "items">>;
  /** The key a scope is kept under (for tests and tools). */
  keyOf(scope: string): string;
  /** Whether the scope limited requests in flight at this store's last claim or observe in it (no trip to Redis). */
  freesOnAnswerNow(scope: string): boolean;
  /** Whether the scope's state showed no one spending its budget unseen at this store's last claim or observe in it (no trip to Redis). */
  seesEveryClaimNow(scope: string): boolean;
}

/** Escapes Redis glob characters (https://redis.io/docs/latest/commands/keys/) so that a name matches only itself. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/** The store: every operation one script (or one plain command) on its connection. */
class RedisGovernorStore implements RedisStore {
  readonly kind = "redis" as const;
  private readonly prefix: string;
  private readonly connection: RedisConnection;
  private readonly waiters: ScopeWaiters;
  private readonly governor: GovernorOptions;
  private readonly queueLimits: QueueLimits;
  private readonly retainMs: number;
  private readonly changeCheckMs: number;
  /**
   * Per scope, what the state showed at this store's last claim or observe in it (both scripts
   * answer it): whether it limited requests in flight (freesOnAnswerNow) and whether it saw no one
   * spending its budget unseen (seesEveryClaimNow), read without a trip to Redis. Every request
   * claims before it is sent, so a step's own store knows them by the time an answer is missing.
   * Bounded: the oldest scope goes first.
   */
  private readonly scopeNotes = new Map<string, ScopeNote>();
  private closed = false;

  constructor(private readonly options: RedisStoreOptions) {
    const clock = options.clock ?? defaultStoreClock;
    this.prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
    this.connection = new RedisConnection({ url: options.url, username: options.username, password: options.password, connectTimeoutMs: options.connectTimeoutMs ?? 1000, commandTimeoutMs: options.commandTimeoutMs ?? 1000, clock });
    this.waiters = new ScopeWaiters(clock);
    this.governor = { ...DEFAULT_GOVERNOR_OPTIONS, ...options.governor };
    this.queueLimits = { ...DEFAULT_QUEUE_LIMITS, ...options.queueLimits };
    this.changeCheckMs = options.changeCheckMs ?? DEFAULT_CHANGE_CHECK_MS;
    this.retainMs = options.retainMs ?? DEFAULT_RETAIN_MS;
  }

  connect(): Promise<void> {
    return this.connection.connect();
  }

  keyOf(scope: string): string {
    return `${this.prefix}s:${scope}`;
  }

  private queueKey(queue: string): string {
    return `${this.prefix}q:${queue}`;
  }

  /** What every script reads: the test-only now, how long a key outlives what it holds, the governor's options. */
  private common() {
    return { nowMs: this.options.nowForTest?.() ?? null, retainMs: this.retainMs, breakerThreshold: this.governor.breakerThreshold, leaseMs: this.governor.leaseMs, probeSilentRate: this.governor.probeSilentRate };
  }

  private get clock(): StoreClock {
    return this.options.clock ?? defaultStoreClock;
  }

  async claim(scopes: ClaimScopes, request: ClaimRequest): Promise<StoreClaim> {
    // The paced latest start as claim.ts reads it (never before latestStartMs); null: no limit.
    const pacedMs = latestPacedStartMs(request);
    const args = {
      ...this.common(),
      clientNowMs: request.nowMs,
      latestStartMs: Number.isFinite(request.latestStartMs) ? request.latestStartMs : null,
      latestPacedStartMs: Number.isFinite(pacedMs) ? pacedMs : null,
      units: request.units ?? null,
      random: request.random ?? null,
      holding: request.holding ?? null,
      waitedMs: request.waitedMs ?? null,
    };
    const sentMs = this.clock.nowMs();
    const text = await this.connection.script<string>("claim", [this.keyOf(scopes.governor), ...scopes.holds.map((h) => this.keyOf(h))], [JSON.stringify(args)]);
    const answer = JSON.parse(text) as StoreClaim & ScopeNote;
    this.noteScope(scopes.governor, { places: answer.places, seen: answer.seen });
    if (!this.options.nowForTest) this.connection.learnOffset(answer.nowMs, sentMs, this.clock.nowMs());
    if (!keptHeldGrant(request, answer.result)) this.waiters.notify(scopes.governor);
    return { result: answer.result, nowMs: answer.nowMs };
  }

  /** The observation's instants (taken on our clock) moved into Redis's by the measured offset. */
  async observe(scope: string, observation: Observation): Promise<void> {
    const shiftMs = this.options.nowForTest ? 0 : await this.connection.offsetMs();
    const budget = observation.budget && { ...observation.budget, resetAtMs: observation.budget.resetAtMs === null ? null : observation.budget.resetAtMs + shiftMs };
    const inRedisTime = { ...observation, sentAtMs: observation.sentAtMs + shiftMs, nowMs: observation.nowMs + shiftMs, budget, reason: clip(observation.reason) };
    const answer = await this.connection.script<string>("observe", [this.keyOf(scope)], [JSON.stringify({ ...this.common(), observation: inRedisTime })]);
    const flags = answer.split(":");
    this.noteScope(scope, { places: flags.includes("places"), seen: flags.includes("seen") });
    this.waiters.notify(scope);
  }

  /** What a claim or an observe answered of the scope's state, kept for freesOnAnswerNow and seesEveryClaimNow. */
  private noteScope(scope: string, note: ScopeNote): void {
    this.scopeNotes.delete(scope);
    if (this.scopeNotes.size >= MAX_NOTED_SCOPES) this.scopeNotes.delete(this.scopeNotes.keys().next().value as string);
    this.scopeNotes.set(scope, note);
  }

  freesOnAnswerNow(scope: string): boolean {
    return this.scopeNotes.get(scope)?.places === true;
  }

  seesEveryClaimNow(scope: string): boolean {
    return this.scopeNotes.get(scope)?.seen === true;
  }

  async release(scope: string, seq: number): Promise<void> {
    await this.connection.script("release", [this.keyOf(scope)], [JSON.stringify({ ...this.common(), seq })]);
    this.waiters.notify(scope);
  }

  async holdUntil(scope: string, untilMs: number, reason: string, limitType: LimitType | "unknown"): Promise<GovernorState> {
    const text = await this.connection.script<string>("hold", [this.keyOf(scope)], [JSON.stringify({ ...this.common(), untilMs, reason: clip(reason), limitType })]);
    this.waiters.notify(scope);
    const read = readState(JSON.parse(text));
    if ("error" in read) throw new Error(`the Redis store wrote a state it cannot read (${read.error})`);
    return read.state;
  }

  async clear(scope: string): Promise<boolean> {
    const removed = await this.connection.command<number>(["DEL", this.keyOf(scope)]);
    this.waiters.notify(scope);
    return removed > 0;
  }

  async scopesUnder(base: string): Promise<Array<[string, GovernorState]>> {
    const keys = await this.connection.scan(`${escapeGlob(this.keyOf(base))}*`);
    const wanted = keys.filter((key) => {
      const scope = key.slice(this.prefix.length + 2);
      return scope === base || scope.startsWith(`${base}|`);
    });
    return this.readStates(wanted);
  }

  async scopesMatching(pattern: string): Promise<Array<[string, GovernorState]>> {
    return this.readStates(await this.connection.scan(`${escapeGlob(this.prefix)}s:${pattern}`));
  }

  async statesOf(scopes: readonly string[]): Promise<Array<[string, GovernorState]>> {
    return this.readStates(scopes.map((scope) => this.keyOf(scope)));
  }

  /** States as stored, checked by readState; a value that is not ours is skipped, as a malformed cross-flow scope is dropped. */
  private async readStates(keys: string[]): Promise<Array<[string, GovernorState]>> {
    if (keys.length === 0) return [];
    const values = await this.connection.command<Array<string | null>>(["MGET", ...keys]);
    const out: Array<[string, GovernorState]> = [];
    keys.forEach((key, i) => {
      const text = values[i];
      if (typeof text !== "string") return;
      try {
        const read = readState(JSON.parse(text));
        if ("state" in read) out.push([key.slice(this.prefix.length + 2), read.state]);
      } catch {
        // Not JSON: not a state this store wrote.
      }
    });
    return out;
  }

  changed(scope: string, waitMs: number, signal?: AbortSignal): Promise<void> {
    return this.waiters.changed(scope, Math.min(waitMs, this.changeCheckMs), signal);
  }

  async salt(): Promise<string> {
    const candidate = this.options.saltCandidate ?? randomBytes(16).toString("hex");
    return this.connection.script<string>("salt", [`${this.prefix}salt`], [candidate, String(SALT_RETAIN_MS)]);
  }

  async park(queue: string, items: readonly ParkedItem[], limits?: Partial<QueueLimits>): Promise<ParkResult> {
    checkQueueName(queue);
    const bounds: QueueLimits = { ...this.queueLimits, ...limits };
    const entries = items.map(entryText);
    const args = { ...this.common(), retainMs: QUEUE_RETAIN_MS, maxItems: bounds.maxItems, maxBytes: bounds.maxBytes, notBefores: items.map((i) => i.notBeforeMs) };
    const answer = JSON.parse(await this.connection.script<string>("park", [this.queueKey(queue)], [JSON.stringify(args), ...entries])) as { parked: number; queued: number };
    const overflow = entries.slice(answer.parked).map((text) => JSON.parse(text) as ParkedItem);
    return { parked: answer.parked, overflow, queued: answer.queued };
  }

  async takeParked(queue: string, nowMs: number, maxItems: number): Promise<TakeResult> {
    if (!Number.isSafeInteger(maxItems) || maxItems < 1) throw new TypeError(`Invalid maxItems ${String(maxItems)}: give a whole number, 1 or more.`);
    return this.take(queue, nowMs, maxItems);
  }

  async peekParked(queue: string): Promise<Omit<TakeResult, "items">> {
    const { remaining, nextNotBeforeMs } = await this.take(queue, 0, 0);
    return { remaining, nextNotBeforeMs };
  }

  private async take(queue: string, nowMs: number, maxItems: number): Promise<TakeResult> {
    checkQueueName(queue);
    const [head, ...taken] = await this.connection.script<string[]>("take", [this.queueKey(queue)], [JSON.stringify({ ...this.common(), takeAtMs: nowMs, maxItems })]);
    const summary = JSON.parse(head!) as { remaining: number; nextNotBeforeMs: number | null };
    return { items: taken.map((text) => JSON.parse(text) as ParkedItem), remaining: summary.remaining, nextNotBeforeMs: summary.nextNotBeforeMs };
  }

  /** Wakes every waiter and ends the socket: no timer or socket outlives the store. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.waiters.notifyAll();
    await this.connection.close();
  }
}

export function createRedisStore(options: RedisStoreOptions): RedisStore {
  return new RedisGovernorStore(options);
}

function checkQueueName(queue: string): void {
  if (typeof queue !== "string" || queue.trim() === "" || queue.length > MAX_QUEUE_NAME_LENGTH) {
    throw new TypeError(`Invalid park queue name "${String(queue).slice(0, 40)}": give a name of 1 to ${MAX_QUEUE_NAME_LENGTH} characters.`);
  }
}

/** An item as the memory store keeps it: the same JSON text, so that both stores hold the same bytes. */
function entryText(parked: ParkedItem): string {
  if (parked.item === null || typeof parked.item !== "object" || Array.isArray(parked.item) || !Number.isFinite(parked.notBeforeMs) || typeof parked.reason !== "string") {
    throw new TypeError("Invalid parked item: it needs an item object, a finite notBeforeMs and a reason.");
  }
  try {
    return JSON.stringify({ item: parked.item, notBeforeMs: parked.notBeforeMs, reason: parked.reason });
  } catch (error) {
    throw new TypeError(`Invalid parked item: it cannot be stored as JSON (${error instanceof Error ? error.message : String(error)}).`, { cause: error });
  }
}
