/**
 * The Redis store beyond the governor (which redis-differential.test.ts checks): park queues as
 * the memory store keeps them, expiry, the salt, scope listing with awkward names, Redis's own
 * clock, timeouts when Redis is unreachable or silent, and the step's fallback to cross-flow state.
 */
import net from "node:net";
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGate, startRedisServer, type RedisServer } from "../../src/lab/redis-server";
import { createCrossFlowStore, createMemoryStore, STATE_KEY, type ParkedItem } from "../../src/store";
import { createStepStore } from "../../src/store/fallback";
import { createRedisStore } from "../../src/store/redis/store";
import { REDIS_AVAILABLE } from "../helpers/redis";

const T0 = Date.parse("2026-03-02T10:00:00.000Z");
const parked = (id: string, notBeforeMs: number, extra: Record<string, unknown> = {}): ParkedItem => ({ item: { id, url: `/contacts/${id}`, ...extra }, notBeforeMs, reason: "429: quota spent." });
const ids = (items: readonly ParkedItem[]) => items.map((p) => p.item.id);

describe.skipIf(!REDIS_AVAILABLE)("the Redis store", () => {
  let server: RedisServer;
  let raw: ReturnType<typeof createClient>;
  let prefixes = 0;
  const fresh = (options: Partial<Parameters<typeof createRedisStore>[0]> = {}) => createRedisStore({ url: server.url, keyPrefix: `t${++prefixes}:`, ...options });

  beforeAll(async () => {
    server = await startRedisServer();
    raw = createClient({ url: server.url });
    await raw.connect();
  });
  afterAll(async () => {
    await raw?.close();
    await server?.stop();
  });

  it("parks and takes exactly as the memory store does: order, bounds, overflow handed back, nothing before its not_before", async () => {
    const redis = fresh();
    const memory = createMemoryStore();
    const limits = { maxItems: 4, maxBytes: 10_000 };
    const batch = [parked("1", T0), parked("2", T0 + 60_000), parked("3", T0, { note: "ü…" }), parked("4", T0), parked("5", T0), parked("6", T0)];
    try {
      expect(await redis.park("crm", batch, limits)).toEqual(await memory.park("crm", batch, limits));
      for (const [atMs, max] of [[T0 - 1, 10], [T0 + 1, 2], [T0 + 1, 10], [T0 + 60_000, 10], [T0 + 60_000, 10]] as const) {
        expect(await redis.takeParked("crm", atMs, max)).toEqual(await memory.takeParked("crm", atMs, max));
      }
      const big = [parked("a", T0), parked("b", T0, { blob: "x".repeat(600) }), parked("c", T0)];
      const small = { maxItems: 10, maxBytes: 700 };
      const result = await redis.park("small", big, small);
      expect(result).toEqual(await memory.park("small", big, small));
      expect(ids(result.overflow)).toEqual(["b", "c"]);
      await expect(redis.takeParked("crm", T0, 0)).rejects.toThrow(/maxItems/);
      await expect(redis.park(" ", big)).rejects.toThrow(/park queue name/);
    } finally {
      await redis.close();
    }
  });

  it("gives every key an expiry: a scope while it matters plus retainMs, a queue until its latest not_before plus a week, the salt 30 days", async () => {
    const redis = fresh({ retainMs: 5_000 });
    try {
      const { nowMs } = await redis.claim({ governor: "api", holds: [] }, { nowMs: Date.now(), latestStartMs: Date.now() + 60_000 });
      // A cold scope's probe holds a 30 s lease, and its grant counts for a minute while the
      // window is unknown: the key lives that minute, plus retainMs.
      const scopeTtl = await raw.pTTL(redis.keyOf("api"));
      expect(scopeTtl).toBeGreaterThan(60_000);
      expect(scopeTtl).toBeLessThanOrEqual(65_000);
      await redis.holdUntil("quiet", nowMs - 1, "past", "burst");
      const quietTtl = await raw.pTTL(redis.keyOf("quiet"));
      expect(quietTtl).toBeGreaterThan(0);
      expect(quietTtl).toBeLessThanOrEqual(65_000);
      await redis.park("later", [parked("1", nowMs + 3_600_000)]);
      const queueTtl = await raw.pTTL(`t${prefixes}:q:later`);
      expect(queueTtl).toBeGreaterThan(3_600_000 + 7 * 86_400_000 - 60_000);
      await redis.salt();
      expect(await raw.pTTL(`t${prefixes}:salt`)).toBeGreaterThan(29 * 86_400_000);
    } finally {
      await redis.close();
    }
  });

  it("wakes a waiter at least every changeCheckMs (default 250 ms): another execution's writes are not seen here, and may show an earlier start", async () => {
    const asked: number[] = [];
    const clock = { nowMs: () => Date.now(), sleep: async (ms: number) => void asked.push(ms) };
    const byDefault = fresh({ clock });
    const quicker = fresh({ clock, changeCheckMs: 40 });
    try {
      await byDefault.changed("api", 10_000);
      await byDefault.changed("api", 30);
      await quicker.changed("api", 10_000);
      expect(asked).toEqual([250, 30, 40]);
    } finally {
      await byDefault.close();
      await quicker.close();
    }
  });

  it("tells, without a trip to Redis, whether the scope limited requests in flight and whether it saw others spending, at this store's last claim or observe, as the memory store does", async () => {
    const keyPrefix = `t${++prefixes}:`;
    const redis = fresh({ keyPrefix });
    // Another step's store on the same Redis: it has only claimed, and knows it from the claim's answer.
    const later = fresh({ keyPrefix });
    const memory = createMemoryStore();
    const concurrent = { remaining: 4, limit: 5, resetAtMs: null, windowMs: null, restorePerSecond: null, unitsPerRequest: null, concurrent: true };
    const window = { remaining: 9, limit: 10, resetAtMs: null, windowMs: 60_000, restorePerSecond: null, unitsPerRequest: null };
    const step = createStepStore(createCrossFlowStore({}), { shared: redis, warn: () => undefined });
    try {
      for (const store of [redis, memory]) {
        const nowMs = Date.now();
        const answer = async (scope: string, budget: typeof concurrent | typeof window) => {
          const { result } = await store.claim({ governor: scope, holds: [] }, { nowMs, latestStartMs: nowMs + 60_000 });
          if (result.kind !== "go") throw new Error(`no start: ${result.kind}`);
          await store.observe(scope, { seq: result.seq, sentAtMs: nowMs, nowMs: nowMs + 10, kind: "ok", limitType: "burst", waitMs: null, waitFromServer: false, budget, reason: "ok" });
        };
        expect(store.freesOnAnswerNow("in-flight")).toBe(false);
        await answer("in-flight", concurrent);
        await answer("per-minute", window);
        expect([store.freesOnAnswerNow("in-flight"), store.freesOnAnswerNow("per-minute")]).toEqual([true, false]);
        // Nothing in either count beyond our own claims: every claim seen.
        expect([store.seesEveryClaimNow("in-flight"), store.seesEveryClaimNow("per-minute"), store.seesEveryClaimNow("never-claimed")]).toEqual([true, true, false]);
        // One claim of ours since, and the count fell by four: three units spent by someone the state does not see.
        const reading = (seq: number, sentAtMs: number, remaining: number) => ({ seq, sentAtMs, nowMs: sentAtMs + 10, kind: "ok" as const, limitType: "burst" as const, waitMs: null, waitFromServer: false, budget: { ...window, remaining, resetAtMs: nowMs + 60_000 }, reason: "ok" });
        const first = await store.claim({ governor: "spent-by-others", holds: [] }, { nowMs, latestStartMs: nowMs + 60_000 });
        if (first.result.kind !== "go") throw new Error(`no start: ${first.result.kind}`);
        await store.observe("spent-by-others", reading(first.result.seq, nowMs, 9));
        expect(store.seesEveryClaimNow("spent-by-others")).toBe(true);
        const next = await store.claim({ governor: "spent-by-others", holds: [] }, { nowMs: nowMs + 20, latestStartMs: nowMs + 60_000 });
        if (next.result.kind !== "go") throw new Error(`no start: ${next.result.kind}`);
        await store.observe("spent-by-others", reading(next.result.seq, nowMs + 20, 5));
        expect(store.seesEveryClaimNow("spent-by-others")).toBe(false);
      }
      // The step's store answers from Redis while Redis works.
      expect(step.freesOnAnswerNow("in-flight")).toBe(true);
      expect([step.seesEveryClaimNow("in-flight"), step.seesEveryClaimNow("spent-by-others")]).toEqual([true, false]);
      expect(later.freesOnAnswerNow("in-flight")).toBe(false);
      const nowMs = Date.now();
      await later.claim({ governor: "in-flight", holds: [] }, { nowMs, latestStartMs: nowMs + 60_000 });
      await later.claim({ governor: "per-minute", holds: [] }, { nowMs, latestStartMs: nowMs + 60_000 });
      expect([later.freesOnAnswerNow("in-flight"), later.freesOnAnswerNow("per-minute")]).toEqual([true, false]);
      await later.claim({ governor: "spent-by-others", holds: [] }, { nowMs, latestStartMs: nowMs + 60_000 });
      expect([later.seesEveryClaimNow("in-flight"), later.seesEveryClaimNow("spent-by-others")]).toEqual([true, false]);
    } finally {
      await redis.close();
      await later.close();
    }
  });

  it("keeps one salt: the first candidate wins, and every store on the same prefix reads it", async () => {
    const first = fresh({ saltCandidate: "a".repeat(32) });
    const second = createRedisStore({ url: server.url, keyPrefix: `t${prefixes}:`, saltCandidate: "b".repeat(32) });
    try {
      expect(await first.salt()).toBe("a".repeat(32));
      expect(await second.salt()).toBe("a".repeat(32));
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("lists a scope and its parts, and only them, whatever characters the names hold", async () => {
    const redis = fresh();
    try {
      const names = ["key*[1]?", "key*[1]?|resource=search", "key*[1]?x", "keyA[1]B", "other|key*[1]?"];
      for (const name of names) await redis.holdUntil(name, T0 + 1000, "r", "burst");
      expect((await redis.scopesUnder("key*[1]?")).map(([key]) => key)).toEqual(["key*[1]?", "key*[1]?|resource=search"]);
      expect(await redis.clear("key*[1]?x")).toBe(true);
      expect(await redis.clear("key*[1]?x")).toBe(false);
    } finally {
      await redis.close();
    }
  });

  it("decides on Redis's clock: a client whose clock is an hour behind gets the same slot times, in Redis's time", async () => {
    const behind = { nowMs: () => Date.now() - 3_600_000, sleep: async () => undefined };
    const redis = fresh({ clock: behind });
    try {
      const hourAgo = behind.nowMs();
      const { result, nowMs } = await redis.claim({ governor: "api", holds: [] }, { nowMs: hourAgo, latestStartMs: hourAgo + 10_000 });
      expect(Math.abs(nowMs - Date.now())).toBeLessThan(1000);
      expect(result).toMatchObject({ kind: "go", probe: true });
      // The answer came 200 ms later on the client's clock; the wait it read ends 30 s after that.
      await redis.observe("api", { seq: 1, sentAtMs: hourAgo, nowMs: hourAgo + 200, kind: "throttled", limitType: "burst", waitMs: 30_000, waitFromServer: true, budget: null, reason: "429" });
      const state = (await redis.scopesUnder("api"))[0]![1];
      expect(state.rttMs).toBe(200);
      expect(state.notBeforeMs - Date.now()).toBeGreaterThan(28_000);
      expect(state.notBeforeMs - Date.now()).toBeLessThanOrEqual(30_300);
    } finally {
      await redis.close();
    }
  });

  it("gives up within about a second when Redis refuses connections, and when it accepts them but never answers", async () => {
    const refused = createRedisStore({ url: `redis://127.0.0.1:${await closedPort()}` });
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const mute = createRedisStore({ url: `redis://127.0.0.1:${(silent.address() as net.AddressInfo).port}` });
    try {
      for (const store of [refused, mute]) {
        const started = Date.now();
        await expect(store.claim({ governor: "api", holds: [] }, { nowMs: Date.now(), latestStartMs: Date.now() })).rejects.toThrow();
        expect(Date.now() - started).toBeLessThan(2500);
      }
    } finally {
      await refused.close();
      await mute.close();
      silent.close();
    }
  });

  describe("the step's store (Redis in front of cross-flow state)", () => {
    it("falls back to cross-flow state on the first failure with ONE warning, and stays there for the step", async () => {
      const gate = await startGate(server.url);
      const warnings: string[] = [];
      const step = createStepStore(createCrossFlowStore({}), { shared: createRedisStore({ url: gate.url, keyPrefix: `t${++prefixes}:` }), warn: (m) => warnings.push(m) });
      try {
        const claim = () => step.claim({ governor: "api", holds: [] }, { nowMs: Date.now(), latestStartMs: Date.now() + 60_000 });
        expect((await claim()).result.kind).toBe("go");
        expect(step.backing()).toBe("redis");
        await gate.shut();
        await step.observe("api", { seq: 1, sentAtMs: Date.now(), nowMs: Date.now(), kind: "throttled", limitType: "burst", waitMs: 60_000, waitFromServer: true, budget: null, reason: "429" });
        expect(step.backing()).toBe("cross-flow");
        await gate.open();
        await claim();
        await step.holdUntil("api", Date.now() + 1000, "r", "burst");
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(/shared store \(Redis\) did not answer/);
        const saved = (await step.toCrossFlowState())[STATE_KEY] as { scopes: Record<string, { notBeforeMs: number }> };
        expect(saved.scopes.api!.notBeforeMs).toBeGreaterThan(Date.now() + 50_000);
      } finally {
        await step.close();
        await gate.close();
      }
    });

    it("carries a wait recorded in cross-flow state during an outage into Redis, returns Redis's states and salt, and takes parked items from both", async () => {
      const keyPrefix = `t${++prefixes}:`;
      const outage = createCrossFlowStore({});
      await outage.holdUntil("api", Date.now() + 120_000, "recorded while Redis was down", "quota");
      await outage.park("q", [parked("from-outage", T0)]);
      const loaded = outage.toCrossFlowState();
      const shared = createRedisStore({ url: server.url, keyPrefix, saltCandidate: "c".repeat(32) });
      await shared.park("q", [parked("from-redis", T0)]);
      await shared.salt();
      const step = createStepStore(createCrossFlowStore(loaded), { shared, warn: () => undefined });
      try {
        const { result } = await step.claim({ governor: "api|part", holds: ["api"] }, { nowMs: Date.now(), latestStartMs: Date.now() + 60_000 });
        expect(result).toMatchObject({ kind: "defer", why: "recorded while Redis was down", limitType: "quota" });
        const taken = await step.takeParked("q", T0, 10);
        expect(ids(taken.items)).toEqual(["from-outage", "from-redis"]);
        expect(taken.remaining).toBe(0);
        const saved = (await step.toCrossFlowState())[STATE_KEY] as { salt: string; scopes: Record<string, unknown>; queues?: unknown };
        expect(saved.salt).toBe("c".repeat(32));
        expect(Object.keys(saved.scopes).sort()).toEqual(["api", "api|part"]);
        expect(saved.queues).toBeUndefined();
      } finally {
        await step.close();
      }
    });
  });
});

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
