/**
 * The Redis store: the governors and park queues shared by every execution, instance and process
 * that uses the same Redis and key prefix. Each operation is one Lua script (scripts.ts), atomic
 * in Redis; the client is node-redis (the `redis` package, as Prismatic's own Redis connector).
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
 * sleeps until the time the claim named (a probe's expected answer, a re-check), then claims again:
 * polling at the governor's own interval, with no second connection for pub/sub.
 *
 * Timeouts: connect and every command give up after about a second (connectTimeoutMs,
 * commandTimeoutMs) and the client never reconnects by itself: the caller (the step's fallback)
 * decides what to do. close() ends the socket and every timer.
 */
import { createHash, randomBytes } from "node:crypto";
import { createClient } from "redis";
import { clip } from "../../engine/governor/state";
import { DEFAULT_GOVERNOR_OPTIONS, readState, type ClaimResult, type GovernorOptions, type GovernorState } from "../../engine";
import { defaultStoreClock, type StoreClock } from "../memory";
import { DEFAULT_QUEUE_LIMITS, MAX_QUEUE_NAME_LENGTH } from "../queue";
import type { GovernorStore, ParkedItem, QueueLimits, StoreClaim, TakeResult } from "../types";
import { SCRIPTS, type ScriptName } from "./scripts";

export const DEFAULT_KEY_PREFIX = "throttle-aware-http:";
/** What was learned of a scope is kept this long after the last time anything in it mattered. */
export const DEFAULT_RETAIN_MS = 60 * 60_000;
/** A park queue is kept this long after its latest not_before. */
export const QUEUE_RETAIN_MS = 7 * 86_400_000;
const SALT_RETAIN_MS = 30 * 86_400_000;

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
}

/** Escapes Redis glob characters (https://redis.io/docs/latest/commands/keys/) so that a name matches only itself. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

function sha1(text: string): string {
  return createHash("sha1").update(text).digest("hex");
}

type Client = ReturnType<typeof createClient>;

export function createRedisStore(options: RedisStoreOptions): RedisStore {
  const prefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  const clock = options.clock ?? defaultStoreClock;
  const governor: GovernorOptions = { ...DEFAULT_GOVERNOR_OPTIONS, ...options.governor };
  const retainMs = options.retainMs ?? DEFAULT_RETAIN_MS;
  const queueLimits: QueueLimits = { ...DEFAULT_QUEUE_LIMITS, ...options.queueLimits };
  const connectTimeoutMs = options.connectTimeoutMs ?? 1000;
  const shas = Object.fromEntries(Object.entries(SCRIPTS).map(([name, source]) => [name, sha1(source)])) as Record<ScriptName, string>;
  const waiters = new Map<string, Set<() => void>>();
  let closed = false;
  let lastError: Error | null = null;

  const client: Client = createClient({
    url: options.url,
    username: options.username || undefined,
    password: options.password || undefined,
    // A failed connection is not retried: the step falls back to cross-flow state at once.
    socket: { connectTimeout: connectTimeoutMs, reconnectStrategy: false },
    disableOfflineQueue: true,
    commandOptions: { timeout: options.commandTimeoutMs ?? 1000 },
  });
  // Without a listener an 'error' event would end the process; the operation that meets it rejects.
  client.on("error", (error: unknown) => {
    lastError = error instanceof Error ? error : new Error(String(error));
  });

  let connecting: Promise<void> | null = null;
  function connect(): Promise<void> {
    if (closed) return Promise.reject(new Error("the Redis store is closed"));
    connecting ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no connection to Redis within ${connectTimeoutMs} ms`)), connectTimeoutMs + 250);
      });
      try {
        await Promise.race([client.connect(), timeout]);
      } catch (error) {
        client.destroy();
        throw error instanceof Error ? error : new Error(lastError?.message ?? String(error));
      } finally {
        clearTimeout(timer);
      }
    })();
    return connecting;
  }

  const keyOf = (scope: string): string => `${prefix}s:${scope}`;
  const queueKey = (queue: string): string => `${prefix}q:${queue}`;

  async function run(name: ScriptName, keys: string[], args: string[]): Promise<unknown> {
    await connect();
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await client.sendCommand(["EVALSHA", shas[name], ...tail]);
    } catch (error) {
      // First use on this Redis (or after SCRIPT FLUSH): EVAL sends the source and caches it.
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return client.sendCommand(["EVAL", SCRIPTS[name], ...tail]);
    }
  }

  /** Redis's clock minus ours: the sample with the shortest round trip, renewed every 30 s. */
  const offset = { ms: 0, rttMs: Number.POSITIVE_INFINITY, atMs: Number.NEGATIVE_INFINITY };
  function learnOffset(redisNowMs: number, sentMs: number, receivedMs: number): void {
    const rttMs = receivedMs - sentMs;
    if (rttMs > offset.rttMs && receivedMs - offset.atMs < 30_000) return;
    Object.assign(offset, { ms: Math.round(redisNowMs - (sentMs + receivedMs) / 2), rttMs, atMs: receivedMs });
  }
  /** The offset, measured with TIME when no claim has measured it yet (an observation first). */
  async function offsetMs(): Promise<number> {
    if (options.nowForTest) return 0;
    if (offset.rttMs === Number.POSITIVE_INFINITY) {
      await connect();
      const sentMs = clock.nowMs();
      const [seconds, micros] = (await client.sendCommand(["TIME"])) as [string, string];
      learnOffset(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000), sentMs, clock.nowMs());
    }
    return offset.ms;
  }

  const json = (value: unknown): string => JSON.stringify(value);
  const common = () => ({ nowMs: options.nowForTest?.() ?? null, retainMs, breakerThreshold: governor.breakerThreshold, leaseMs: governor.leaseMs });

  function notify(scope: string): void {
    const set = waiters.get(scope);
    if (!set) return;
    waiters.delete(scope);
    for (const wake of set) wake();
  }

  async function readStates(keys: string[]): Promise<Array<[string, GovernorState]>> {
    if (keys.length === 0) return [];
    const values = (await client.sendCommand(["MGET", ...keys])) as Array<string | null>;
    const out: Array<[string, GovernorState]> = [];
    keys.forEach((key, i) => {
      const text = values[i];
      if (typeof text !== "string") return;
      try {
        const read = readState(JSON.parse(text));
        if ("state" in read) out.push([key.slice(prefix.length + 2), read.state]);
      } catch {
        // A value that is not JSON is not ours: skipped, as a malformed cross-flow scope is dropped.
      }
    });
    return out;
  }

  async function scan(pattern: string): Promise<string[]> {
    await connect();
    const keys = new Set<string>();
    let cursor = "0";
    do {
      const [next, found] = (await client.sendCommand(["SCAN", cursor, "MATCH", `${escapeGlob(prefix)}s:${pattern}`, "COUNT", "1000"])) as [string, string[]];
      for (const key of found) keys.add(key);
      cursor = next;
    } while (cursor !== "0");
    return [...keys].sort();
  }

  async function take(queue: string, nowMs: number, maxItems: number): Promise<TakeResult> {
    checkQueueName(queue);
    const [head, ...taken] = (await run("take", [queueKey(queue)], [json({ ...common(), takeAtMs: nowMs, maxItems })])) as string[];
    const summary = JSON.parse(head!) as { remaining: number; nextNotBeforeMs: number | null };
    return { items: taken.map((text) => JSON.parse(text) as ParkedItem), remaining: summary.remaining, nextNotBeforeMs: summary.nextNotBeforeMs };
  }

  const store: RedisStore = {
    kind: "redis",
    connect,
    keyOf,
    async claim(scopes, request): Promise<StoreClaim> {
      const args = {
        ...common(),
        clientNowMs: request.nowMs,
        latestStartMs: Number.isFinite(request.latestStartMs) ? request.latestStartMs : null,
        units: request.units ?? null,
        random: request.random ?? null,
      };
      const sentMs = clock.nowMs();
      const text = (await run("claim", [keyOf(scopes.governor), ...scopes.holds.map(keyOf)], [json(args)])) as string;
      const answer = JSON.parse(text) as { result: ClaimResult; nowMs: number };
      if (!options.nowForTest) learnOffset(answer.nowMs, sentMs, clock.nowMs());
      notify(scopes.governor);
      return { result: answer.result, nowMs: answer.nowMs };
    },
    async observe(scope, observation) {
      const shiftMs = await offsetMs();
      const budget = observation.budget && { ...observation.budget, resetAtMs: observation.budget.resetAtMs === null ? null : observation.budget.resetAtMs + shiftMs };
      const inRedisTime = { ...observation, sentAtMs: observation.sentAtMs + shiftMs, nowMs: observation.nowMs + shiftMs, budget, reason: clip(observation.reason) };
      await run("observe", [keyOf(scope)], [json({ ...common(), observation: inRedisTime })]);
      notify(scope);
    },
    async release(scope, seq) {
      await run("release", [keyOf(scope)], [json({ ...common(), seq })]);
      notify(scope);
    },
    async holdUntil(scope, untilMs, reason, limitType) {
      const text = (await run("hold", [keyOf(scope)], [json({ ...common(), untilMs, reason: clip(reason), limitType })])) as string;
      notify(scope);
      const read = readState(JSON.parse(text));
      if ("error" in read) throw new Error(`the Redis store wrote a state it cannot read (${read.error})`);
      return read.state;
    },
    async clear(scope) {
      await connect();
      const removed = (await client.sendCommand(["DEL", keyOf(scope)])) as number;
      notify(scope);
      return removed > 0;
    },
    async scopesUnder(base) {
      const keys = await scan(`${escapeGlob(base)}*`);
      const wanted = keys.filter((key) => {
        const scope = key.slice(prefix.length + 2);
        return scope === base || scope.startsWith(`${base}|`);
      });
      return readStates(wanted);
    },
    async scopesMatching(pattern) {
      return readStates(await scan(pattern));
    },
    async statesOf(scopes) {
      await connect();
      return readStates(scopes.map(keyOf));
    },
    async peekParked(queue) {
      const { remaining, nextNotBeforeMs } = await take(queue, 0, 0);
      return { remaining, nextNotBeforeMs };
    },
    changed(scope, waitMs, signal) {
      return new Promise<void>((resolve, reject) => {
        const stop = new AbortController();
        const onAbort = () => stop.abort(signal?.reason);
        signal?.addEventListener("abort", onAbort, { once: true });
        const set = waiters.get(scope) ?? new Set<() => void>();
        waiters.set(scope, set);
        const wake = () => {
          set.delete(wake);
          signal?.removeEventListener("abort", onAbort);
          stop.abort();
          resolve();
        };
        set.add(wake);
        clock.sleep(waitMs, stop.signal).then(wake, (error: unknown) => {
          set.delete(wake);
          signal?.removeEventListener("abort", onAbort);
          if (signal?.aborted) reject(error);
          else resolve();
        });
      });
    },
    async salt() {
      const candidate = options.saltCandidate ?? randomBytes(16).toString("hex");
      return (await run("salt", [`${prefix}salt`], [candidate, String(SALT_RETAIN_MS)])) as string;
    },
    async park(queue, items, limits) {
      checkQueueName(queue);
      const bounds: QueueLimits = { ...queueLimits, ...limits };
      const entries = items.map(entryText);
      const args = { ...common(), retainMs: QUEUE_RETAIN_MS, maxItems: bounds.maxItems, maxBytes: bounds.maxBytes, notBefores: items.map((i) => i.notBeforeMs) };
      const text = (await run("park", [queueKey(queue)], [json(args), ...entries])) as string;
      const answer = JSON.parse(text) as { parked: number; queued: number };
      const overflow = entries.slice(answer.parked).map((text) => JSON.parse(text) as ParkedItem);
      return { parked: answer.parked, overflow, queued: answer.queued };
    },
    async takeParked(queue, nowMs, maxItems): Promise<TakeResult> {
      if (!Number.isSafeInteger(maxItems) || maxItems < 1) throw new TypeError(`Invalid maxItems ${String(maxItems)}: give a whole number, 1 or more.`);
      return take(queue, nowMs, maxItems);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const scope of [...waiters.keys()]) notify(scope);
      if (!client.isOpen) return;
      try {
        await Promise.race([client.close(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      } catch {
        // Closing a broken connection: destroy below ends it either way.
      }
      if (client.isOpen) client.destroy();
    },
  };
  return store;
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
