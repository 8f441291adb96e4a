/**
 * One connection to Redis for one store: node-redis (the `redis` package), the client Prismatic's
 * own Redis connector uses, connected on first use, never reconnected by itself (a failure is the caller's
 * to handle: the step falls back to cross-flow state), with a deadline on connecting and on every
 * command. It runs the store's scripts by their SHA1 (EVALSHA), sending the source once when Redis
 * does not know it yet (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/).
 *
 * It also keeps the offset between this process's clock and Redis's, measured NTP-style from the
 * claims' round trips (Redis's now against the middle of the call,
 * https://www.rfc-editor.org/rfc/rfc5905#section-8): the sample with the shortest round trip (its
 * error is at most half of it), renewed every 30 s.
 */
import { createHash } from "node:crypto";
import { createClient } from "redis";
import type { StoreClock } from "../memory";
import { SCRIPTS, type ScriptName } from "./scripts";

export interface RedisConnectionOptions {
  url: string;
  username?: string;
  password?: string;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  clock: StoreClock;
}

const SHAS = Object.fromEntries(Object.entries(SCRIPTS).map(([name, source]) => [name, createHash("sha1").update(source).digest("hex")])) as Record<ScriptName, string>;
const OFFSET_RENEW_MS = 30_000;

export class RedisConnection {
  private readonly client: ReturnType<typeof createClient>;
  private connecting: Promise<void> | null = null;
  private closed = false;
  private lastError: Error | null = null;
  private readonly offset = { ms: 0, rttMs: Number.POSITIVE_INFINITY, atMs: Number.NEGATIVE_INFINITY };

  constructor(private readonly options: RedisConnectionOptions) {
    this.client = createClient({
      url: options.url,
      username: options.username || undefined,
      password: options.password || undefined,
      // A failed connection is not retried: the step falls back to cross-flow state at once.
      socket: { connectTimeout: options.connectTimeoutMs, reconnectStrategy: false },
      disableOfflineQueue: true,
      commandOptions: { timeout: options.commandTimeoutMs },
    });
    // Without a listener an 'error' event would end the process; the operation that meets it rejects.
    this.client.on("error", (error: unknown) => {
      this.lastError = error instanceof Error ? error : new Error(String(error));
    });
  }

  /** Connects once; rejects after connectTimeoutMs (and a little more for the handshake). */
  connect(): Promise<void> {
    if (this.closed) return Promise.reject(new Error("the Redis store is closed"));
    this.connecting ??= this.open();
    return this.connecting;
  }

  private async open(): Promise<void> {
    const limitMs = this.options.connectTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no connection to Redis within ${limitMs} ms`)), limitMs + 250);
    });
    try {
      await Promise.race([this.client.connect(), timeout]);
    } catch (error) {
      this.client.destroy();
      throw error instanceof Error ? error : new Error(this.lastError?.message ?? String(error));
    } finally {
      clearTimeout(timer);
    }
  }

  async command<T>(args: string[]): Promise<T> {
    await this.connect();
    return (await this.client.sendCommand(args)) as T;
  }

  async script<T>(name: ScriptName, keys: readonly string[], args: readonly string[]): Promise<T> {
    const tail = [String(keys.length), ...keys, ...args];
    try {
      return await this.command<T>(["EVALSHA", SHAS[name], ...tail]);
    } catch (error) {
      // First use on this Redis (or after SCRIPT FLUSH): EVAL sends the source and caches it.
      if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
      return this.command<T>(["EVAL", SCRIPTS[name], ...tail]);
    }
  }

  /** Every key matching a glob, by SCAN (never KEYS: it would block Redis on a large keyspace). */
  async scan(pattern: string): Promise<string[]> {
    const keys = new Set<string>();
    let cursor = "0";
    do {
      const [next, found] = await this.command<[string, string[]]>(["SCAN", cursor, "MATCH", pattern, "COUNT", "1000"]);
      for (const key of found) keys.add(key);
      cursor = next;
    } while (cursor !== "0");
    return [...keys].sort();
  }

  /** A sample of Redis's clock: its now, and our clock before and after asking. */
  learnOffset(redisNowMs: number, sentMs: number, receivedMs: number): void {
    const rttMs = receivedMs - sentMs;
    if (rttMs > this.offset.rttMs && receivedMs - this.offset.atMs < OFFSET_RENEW_MS) return;
    Object.assign(this.offset, { ms: Math.round(redisNowMs - (sentMs + receivedMs) / 2), rttMs, atMs: receivedMs });
  }

  /** Redis's clock minus ours; measured with TIME when no claim has measured it yet. */
  async offsetMs(): Promise<number> {
    if (this.offset.rttMs === Number.POSITIVE_INFINITY) {
      const clock = this.options.clock;
      await this.connect();
      const sentMs = clock.nowMs();
      const [seconds, micros] = await this.command<[string, string]>(["TIME"]);
      this.learnOffset(Number(seconds) * 1000 + Math.floor(Number(micros) / 1000), sentMs, clock.nowMs());
    }
    return this.offset.ms;
  }

  /** Ends the socket (gracefully when it answers within a second). */
  async close(): Promise<void> {
    this.closed = true;
    if (!this.client.isOpen) return;
    try {
      await Promise.race([this.client.close(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    } catch {
      // Closing a broken connection: destroy below ends it either way.
    }
    if (this.client.isOpen) this.client.destroy();
  }
}
