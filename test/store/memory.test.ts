/**
 * The in-memory store through the GovernorStore interface: claims, answers, releases, holds,
 * clear, scopesUnder, the salt, and changed() (woken by a change to its scope, else after waitMs,
 * and rejected on abort), on a clock that moves only when the test says so.
 */
import { describe, expect, it } from "vitest";
import { createCrossFlowStore, createMemoryStore, type GovernorStore, type StoreEvent } from "../../src/store";
import type { ClaimResult, Observation } from "../../src/engine";
import { FakeClock, isSettled, settle } from "./fake-clock";

const T0 = Date.UTC(2027, 0, 15, 8);
const HOUR_MS = 3_600_000;
const scope = "generic|api.example.com|cred-1";
const only = (governor: string) => ({ governor, holds: [] as string[] });

async function go(store: GovernorStore, governor: string, nowMs: number, holds: string[] = []): Promise<Extract<ClaimResult, { kind: "go" }>> {
  const { result } = await store.claim({ governor, holds }, { nowMs, latestStartMs: nowMs + HOUR_MS });
  if (result.kind !== "go") throw new Error(`expected go, got ${JSON.stringify(result)}`);
  return result;
}

function ok(seq: number, sentAtMs: number, nowMs: number, extra: Partial<Observation> = {}): Observation {
  return { seq, sentAtMs, nowMs, kind: "ok", limitType: "none", waitMs: null, waitFromServer: false, budget: null, reason: "200", ...extra };
}

describe("the memory store: claims and answers", () => {
  it("a cold scope lets one probe go, holds the next, and the probe's answer wakes it at once (not after a lease)", async () => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock });
    const probe = await go(store, scope, T0);
    expect(probe.probe).toBe(true);
    const held = await store.claim(only(scope), { nowMs: T0 + 1, latestStartMs: T0 + HOUR_MS });
    expect(held).toMatchObject({ result: { kind: "wait" }, nowMs: T0 + 1 });
    const woken = store.changed(scope, 30_000);
    expect(await isSettled(woken)).toBe(false);
    await store.observe(scope, ok(probe.seq, T0, T0 + 40, { budget: { remaining: 9, limit: 10, resetAtMs: T0 + 60_000, windowMs: 60_000, restorePerSecond: null, unitsPerRequest: null } }));
    expect(await isSettled(woken)).toBe(true);
    expect(clock.nowMs()).toBe(T0);
    expect((await go(store, scope, T0 + 40)).atMs).toBe(T0 + 40);
    expect(clock.pending).toBe(0);
  });

  it("holdUntil is set-if-later and returns the state; claims defer to it", async () => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock });
    expect((await store.holdUntil(scope, T0 + 60_000, "quota spent", "quota")).notBeforeMs).toBe(T0 + 60_000);
    expect((await store.holdUntil(scope, T0 + 1000, "shorter", "burst")).notBeforeMs).toBe(T0 + 60_000);
    const { result } = await store.claim(only(scope), { nowMs: T0, latestStartMs: T0 + 30_000 });
    expect(result).toEqual({ kind: "defer", notBeforeMs: T0 + 60_000, why: "quota spent", limitType: "quota" });
  });

  it("a wider scope's wait holds a claim in a narrower one (GitHub's search under its API), and stays on the narrower scope", async () => {
    const store = createMemoryStore({ clock: new FakeClock(T0) });
    const base = "github|api.github.com|cred-1";
    const search = `${base}|search`;
    await store.holdUntil(base, T0 + 5000, "secondary limit", "burst");
    const { result } = await store.claim({ governor: search, holds: [base] }, { nowMs: T0, latestStartMs: T0 + 1000 });
    expect(result).toMatchObject({ kind: "defer", notBeforeMs: T0 + 5000 });
    expect((await go(store, search, T0, [base])).atMs).toBe(T0 + 5000);
    expect(store.snapshot().get(search)?.notBeforeMs).toBe(T0 + 5000);
    // The other way round, nothing: a narrower scope's wait does not hold its base.
    await store.holdUntil(`${base}|core`, T0 + HOUR_MS, "core spent", "quota");
    expect((await store.claim(only(base), { nowMs: T0 + 6000, latestStartMs: T0 + 7000 })).result.kind).not.toBe("defer");
  });

  it("release gives the slot back: the next claim starts when the released one would have", async () => {
    const store = createMemoryStore({ clock: new FakeClock(T0) });
    const probe = await go(store, scope, T0);
    await store.observe(scope, ok(probe.seq, T0, T0 + 10, { budget: { remaining: 1, limit: 2, resetAtMs: T0 + 1000, windowMs: 1000, restorePerSecond: null, unitsPerRequest: null } }));
    const last = await go(store, scope, T0 + 20);
    const { result: later } = await store.claim(only(scope), { nowMs: T0 + 20, latestStartMs: T0 + HOUR_MS });
    expect(later.kind === "go" && later.atMs).toBeGreaterThanOrEqual(T0 + 1000);
    await store.release(scope, last.seq);
    if (later.kind === "go") await store.release(scope, later.seq);
    expect((await go(store, scope, T0 + 30)).atMs).toBe(T0 + 30);
  });

  it("release of a scope it does not have creates nothing", async () => {
    const store = createMemoryStore({ clock: new FakeClock(T0) });
    await store.release("nobody", 3);
    expect(store.snapshot().size).toBe(0);
  });

  it("clear forgets the scope (its wait, breaker and what was learned), says whether it had it, and wakes its waiters", async () => {
    const store = createMemoryStore({ clock: new FakeClock(T0) });
    await store.holdUntil(scope, T0 + HOUR_MS, "quota", "quota");
    const woken = store.changed(scope, 60_000);
    expect(await store.clear(scope)).toBe(true);
    expect(await isSettled(woken)).toBe(true);
    expect(await store.clear(scope)).toBe(false);
    expect((await go(store, scope, T0)).probe).toBe(true);
  });

  it("scopesUnder returns the scope and those under it (`scope|...`), not those that merely start with the same text", async () => {
    const store = createMemoryStore({ clock: new FakeClock(T0) });
    for (const key of [scope, `${scope}|search`, `${scope}|search|x`, `${scope}2`, `${scope}-other`, "other|api.example.com|cred-1", "generic|api.example.com"]) await store.holdUntil(key, T0 + 1000, key, "burst");
    const keys = (await store.scopesUnder(scope)).map(([key]) => key).sort();
    expect(keys).toEqual([scope, `${scope}|search`, `${scope}|search|x`]);
  });

  it("the salt is stable per store, 32 hex characters, different between stores, and the one given when given", async () => {
    const a = createMemoryStore();
    const b = createMemoryStore();
    expect(await a.salt()).toBe(await a.salt());
    expect(await a.salt()).toMatch(/^[0-9a-f]{32}$/);
    expect(await a.salt()).not.toBe(await b.salt());
    expect(await createMemoryStore({ salt: "0123456789abcdef0123456789abcdef" }).salt()).toBe("0123456789abcdef0123456789abcdef");
  });

  it("tells onEvent every decision with the state it left", async () => {
    const events: StoreEvent[] = [];
    const store = createMemoryStore({ clock: new FakeClock(T0), onEvent: (event) => events.push(event) });
    const probe = await go(store, scope, T0);
    await store.observe(scope, ok(probe.seq, T0, T0 + 5));
    expect(events.map((e) => [e.kind, e.scope, e.state.seq])).toEqual([
      ["claim", scope, 1],
      ["observe", scope, 1],
    ]);
  });

  it("keeps at most maxScopes: idle scopes go first (least recently used), a wait still ahead goes last", async () => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock, maxScopes: 3 });
    await store.holdUntil("waiting", T0 + HOUR_MS, "quota", "quota");
    for (const [i, key] of ["idle-1", "idle-2", "idle-3"].entries()) {
      await clock.advance(10);
      await go(store, key, T0 + 10 * (i + 1)).then((g) => store.observe(key, ok(g.seq, g.atMs, g.atMs + 1)));
    }
    expect([...store.snapshot().keys()].sort()).toEqual(["idle-2", "idle-3", "waiting"]);
  });
});

describe("changed()", () => {
  it("resolves after waitMs when nothing changes, and leaves no timer behind", async () => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock });
    const waiting = store.changed(scope, 1000);
    await clock.advance(999);
    expect(await isSettled(waiting)).toBe(false);
    await clock.advance(1);
    expect(await isSettled(waiting)).toBe(true);
    expect(clock.pending).toBe(0);
  });

  it.each([
    ["a claim", (store: GovernorStore) => store.claim(only(scope), { nowMs: T0, latestStartMs: T0 + 1000 })],
    ["an answer", (store: GovernorStore) => store.observe(scope, ok(1, T0, T0 + 1))],
    ["a release", async (store: GovernorStore) => store.release(scope, 1)],
    ["a hold", (store: GovernorStore) => store.holdUntil(scope, T0 + 1, "r", "burst")],
    ["a clear", (store: GovernorStore) => store.clear(scope)],
  ])("resolves early on %s in its scope, and cancels its timer", async (_name, change) => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock });
    await go(store, scope, T0);
    const waiting = store.changed(scope, 60_000);
    await change(store);
    expect(await isSettled(waiting)).toBe(true);
    expect(clock.pending).toBe(0);
  });

  it("is not woken by a change to another scope", async () => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock });
    const waiting = store.changed(scope, 60_000);
    await store.holdUntil(`${scope}|search`, T0 + 1000, "other", "burst");
    await go(store, "another", T0);
    expect(await isSettled(waiting)).toBe(false);
    await clock.advance(60_000);
    expect(await isSettled(waiting)).toBe(true);
  });

  it("rejects with the signal's reason when aborted while waiting, and leaves no timer behind", async () => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock });
    const controller = new AbortController();
    const waiting = store.changed(scope, 60_000, controller.signal);
    const outcome = waiting.then(
      () => "resolved",
      (error: unknown) => error,
    );
    controller.abort(new Error("caller gave up"));
    await settle();
    expect(await outcome).toEqual(new Error("caller gave up"));
    expect(clock.pending).toBe(0);
  });

  it("a woken waiter does not leave its abort listener on the caller's signal", async () => {
    const store = createMemoryStore({ clock: new FakeClock(T0) });
    const signal = new AbortController().signal;
    const listening = new Set<unknown>();
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<AbortSignal["addEventListener"]>) => {
      listening.add(args[1]);
      add(...args);
    }) as AbortSignal["addEventListener"];
    signal.removeEventListener = ((...args: Parameters<AbortSignal["removeEventListener"]>) => {
      listening.delete(args[1]);
      remove(...args);
    }) as AbortSignal["removeEventListener"];
    const waiting = store.changed(scope, 60_000, signal);
    expect(listening.size).toBe(1);
    await store.holdUntil(scope, T0 + 1, "r", "burst");
    await waiting;
    expect(listening.size).toBe(0);
  });
});

describe("sleepUntilConcurrencyLearned()", () => {
  const shownConcurrency = { remaining: 4, limit: 5, resetAtMs: null, windowMs: null, restorePerSecond: null, unitsPerRequest: null, concurrent: true };
  /** A first answer showing nothing, then two claims out in the slow start, the first of them throttled with no wait told. */
  const twoOutFirstThrottled = async (store: ReturnType<typeof createMemoryStore>) => {
    const first = await go(store, scope, T0);
    await store.observe(scope, ok(first.seq, T0, T0 + 10));
    const [a, b] = [await go(store, scope, T0 + 10), await go(store, scope, T0 + 10)];
    await store.observe(scope, { ...ok(a.seq, T0 + 10, T0 + 20), kind: "throttled", limitType: "burst", waitMs: 500 });
    return [a, b] as const;
  };

  it("ends when an answer teaches a limit on requests in flight, not on another answer", async () => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock });
    const first = await go(store, scope, T0);
    const backoff = store.sleepUntilConcurrencyLearned(scope, 500);
    // An answer that shows a rate (a window) changes the scope but teaches no concurrency limit.
    await store.observe(scope, ok(first.seq, T0, T0 + 10, { budget: { remaining: 9, limit: 10, resetAtMs: T0 + 60_000, windowMs: 60_000, restorePerSecond: null, unitsPerRequest: null } }));
    expect(await isSettled(backoff)).toBe(false);
    const second = await go(store, scope, T0 + 20);
    await store.observe(scope, ok(second.seq, T0 + 20, T0 + 30, { budget: shownConcurrency }));
    expect(await isSettled(backoff)).toBe(true);
    expect(clock.nowMs()).toBe(T0);
    expect(clock.pending).toBe(0);
  });

  it("sleeps the whole wait where the scope was already known to limit requests in flight (a throttle under the limit itself)", async () => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock });
    const first = await go(store, scope, T0);
    await store.observe(scope, ok(first.seq, T0, T0 + 10, { budget: shownConcurrency }));
    const backoff = store.sleepUntilConcurrencyLearned(scope, 500);
    await settle();
    expect(await isSettled(backoff)).toBe(false);
    await clock.advance(500);
    expect(await isSettled(backoff)).toBe(true);
  });

  it("judges a throttle by the scope at its answer: answered before the limit was learned, or granted beyond the cap its answer left, its backoff ends at once; granted within a held cap, it is slept out", async () => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock });
    // Two out in the slow start, neither a limit known: the first is throttled, then an answer shows a limit of one in flight.
    const [a, b] = await twoOutFirstThrottled(store);
    await store.observe(scope, ok(b.seq, T0 + 10, T0 + 20, { budget: { ...shownConcurrency, remaining: 0, limit: 1 } }));
    // Learned before its backoff began: the cap holds its retry, no sleep.
    expect(await isSettled(store.sleepUntilConcurrencyLearned(scope, 500, undefined, a.seq))).toBe(true);
    // Granted within the cap (one in flight of one) and still throttled: the backoff is slept out.
    const c = await go(store, scope, T0 + 20);
    await store.observe(scope, { ...ok(c.seq, T0 + 20, T0 + 30), kind: "throttled", limitType: "burst", waitMs: 500, budget: { ...shownConcurrency, remaining: 0, limit: 1 } });
    const backoff = store.sleepUntilConcurrencyLearned(scope, 500, undefined, c.seq);
    await settle();
    expect(await isSettled(backoff)).toBe(false);
    await clock.advance(500);
    expect(await isSettled(backoff)).toBe(true);
  });

  it("keeps a throttle's note for its backoff through many throttles the server named a wait for (those are never backed off by us)", async () => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock });
    const [a, b] = await twoOutFirstThrottled(store);
    // Elsewhere, ten thousand throttles whose wait the server told: each retry sleeps the server's wait, not a backoff.
    for (let seq = 1; seq <= 10_000; seq++) {
      store.observeNow(`${scope}|told`, { ...ok(seq, T0 + 10, T0 + 20), kind: "throttled", limitType: "burst", waitMs: 1000, waitFromServer: true, reason: "429" });
    }
    await store.observe(scope, ok(b.seq, T0 + 10, T0 + 20, { budget: { ...shownConcurrency, remaining: 0, limit: 1 } }));
    expect(await isSettled(store.sleepUntilConcurrencyLearned(scope, 500, undefined, a.seq))).toBe(true);
  });

  it("freesOnAnswerNow tells, at once, whether the scope is known to limit requests in flight", async () => {
    const store = createMemoryStore({ clock: new FakeClock(T0) });
    expect(store.freesOnAnswerNow(scope)).toBe(false);
    const first = await go(store, scope, T0);
    await store.observe(scope, ok(first.seq, T0, T0 + 10, { budget: { remaining: 9, limit: 10, resetAtMs: T0 + 60_000, windowMs: 60_000, restorePerSecond: null, unitsPerRequest: null } }));
    expect(store.freesOnAnswerNow(scope)).toBe(false);
    const second = await go(store, scope, T0 + 20);
    await store.observe(scope, ok(second.seq, T0 + 20, T0 + 30, { budget: shownConcurrency }));
    expect(store.freesOnAnswerNow(scope)).toBe(true);
  });

  it("seesEveryClaimNow tells, at once, whether the scope's count shows no one else spending its budget; cross-flow copies never do", async () => {
    const store = createMemoryStore({ clock: new FakeClock(T0) });
    const window = (remaining: number) => ({ budget: { remaining, limit: 10, resetAtMs: T0 + 60_000, windowMs: 60_000, restorePerSecond: null, unitsPerRequest: null } });
    expect(store.seesEveryClaimNow(scope)).toBe(false);
    const first = await go(store, scope, T0);
    await store.observe(scope, ok(first.seq, T0, T0 + 10, window(9)));
    expect(store.seesEveryClaimNow(scope)).toBe(true);
    // One claim of ours since, and the count fell by four: three units spent by someone this state does not see.
    const second = await go(store, scope, T0 + 20);
    await store.observe(scope, ok(second.seq, T0 + 20, T0 + 30, window(5)));
    expect(store.seesEveryClaimNow(scope)).toBe(false);
    const copy = createCrossFlowStore({});
    const own = await go(copy, scope, T0);
    await copy.observe(scope, ok(own.seq, T0, T0 + 10, window(9)));
    expect(copy.seesEveryClaimNow(scope)).toBe(false);
  });

  it("seesEveryClaimNow stays true behind a silent API after a throttle taught a limit: a lost attempt's slot stays in the state's own log as a unit spent", async () => {
    const store = createMemoryStore({ clock: new FakeClock(T0) });
    for (let i = 0; i < 4; i++) {
      const next = await go(store, scope, T0 + 20 * i);
      await store.observe(scope, ok(next.seq, T0 + 20 * i, T0 + 20 * i + 10));
    }
    const lost = await go(store, scope, T0 + 80);
    await store.observe(scope, { ...ok(lost.seq, T0 + 80, T0 + 90), kind: "lost", reason: "no answer" });
    const throttled = await go(store, scope, T0 + 100);
    await store.observe(scope, { ...ok(throttled.seq, T0 + 100, T0 + 110), kind: "throttled", limitType: "burst", waitMs: 1000, waitFromServer: true, reason: "429" });
    const state = store.snapshot().get(scope);
    expect(state?.limit).not.toBeNull();
    expect(state?.slots.some(([, seq]) => seq === lost.seq)).toBe(true);
    expect(store.seesEveryClaimNow(scope)).toBe(true);
  });

  it("sleeps the whole wait where nothing is learned", async () => {
    const clock = new FakeClock(T0);
    const store = createMemoryStore({ clock });
    const backoff = store.sleepUntilConcurrencyLearned(scope, 500);
    await clock.advance(499);
    expect(await isSettled(backoff)).toBe(false);
    await clock.advance(1);
    expect(await isSettled(backoff)).toBe(true);
  });
});
