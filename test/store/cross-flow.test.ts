/**
 * The cross-flow store: loaded from the execution's crossFlowState (src/actions/shared.ts
 * openStore passes context.crossFlowState and context.logger.warn), run in memory, and handed back
 * as the step's crossFlowState under this component's one key (the actions return
 * store.toCrossFlowState()). Prismatic persists it as JSON, so every round trip here goes through
 * JSON too.
 */
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/actions/shared";
import { emptyState, type GovernorState } from "../../src/engine";
import { createCrossFlowStore, createMemoryStore, STATE_KEY, type CrossFlowStore } from "../../src/store";
import { FakeClock } from "./fake-clock";

const T0 = Date.UTC(2027, 0, 15, 8);
const HOUR_MS = 3_600_000;
const SALT = "0123456789abcdef0123456789abcdef";
const scope = "generic|api.example.com|cred-1";

/** What Prismatic hands the next execution: the returned state, through JSON. */
const persisted = (value: Record<string, unknown>): Record<string, unknown> => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;

function open(crossFlowState: unknown, extra: { maxScopes?: number } = {}): { store: CrossFlowStore; warnings: string[] } {
  const warnings: string[] = [];
  const store = createCrossFlowStore(crossFlowState, { clock: new FakeClock(T0), warn: (message) => warnings.push(message), ...extra });
  return { store, warnings };
}

/** A state with a wait until untilMs, last touched at updatedAtMs. */
function waiting(untilMs: number, updatedAtMs = T0 - 60_000): GovernorState {
  return { ...emptyState(updatedAtMs), notBeforeMs: untilMs, notBeforeReason: "429", notBeforeType: "quota" };
}

describe("the cross-flow store", () => {
  it("loads what an earlier execution returned: its waits hold, what it learned is kept, its salt is the same", async () => {
    const first = open(undefined).store;
    await first.holdUntil(scope, T0 + 30 * 60_000, "daily quota spent", "quota");
    const probe = await first.claim({ governor: `${scope}|b`, holds: [] }, { nowMs: T0, latestStartMs: T0 + HOUR_MS });
    if (probe.result.kind !== "go") expect.fail("expected the probe to go");
    await first.observe(`${scope}|b`, { seq: probe.result.seq, sentAtMs: T0, nowMs: T0 + 50, kind: "ok", limitType: "none", waitMs: null, waitFromServer: false, budget: { remaining: 7, limit: 10, resetAtMs: T0 + 60_000, windowMs: 60_000, restorePerSecond: null, unitsPerRequest: null }, reason: "200" });
    const { store: second, warnings } = open(persisted({ other: 1, ...first.toCrossFlowState() }));
    expect(warnings).toEqual([]);
    expect(await second.salt()).toBe(await first.salt());
    expect(JSON.stringify([...second.snapshot()])).toBe(JSON.stringify([...first.snapshot()]));
    const { result } = await second.claim({ governor: scope, holds: [] }, { nowMs: T0 + 1000, latestStartMs: T0 + 60_000 });
    expect(result).toEqual({ kind: "defer", notBeforeMs: T0 + 30 * 60_000, why: "daily quota spent", limitType: "quota" });
    expect(second.snapshot().get(`${scope}|b`)).toMatchObject({ limit: 10, windowMs: 60_000, anchor: { remaining: 7 } });
  });

  it("tells its governors that others spend unseen: a spent throttle does not lengthen a window from its own log, as the memory store's does", async () => {
    const slots: GovernorState["slots"] = [[T0 + 2040, 1, 1], [T0 + 2050, 2, 1], [T0 + 2060, 3, 1], [T0 + 3100, 4, 1]];
    const misread: GovernorState = { ...emptyState(T0), seq: 4, limit: 3, windowMs: 1020, windowSource: "inferred", rttMs: 20, slots, inFlight: [[4, T0 + 33_100, 1]] };
    const throttled = { seq: 4, sentAtMs: T0 + 3100, nowMs: T0 + 3120, kind: "throttled" as const, limitType: "burst" as const, waitMs: 1000, waitFromServer: true, budget: { remaining: 0, limit: 3, resetAtMs: T0 + 5000, windowMs: null, restorePerSecond: null, unitsPerRequest: null }, reason: "429" };
    const crossFlow = open(persisted({ [STATE_KEY]: { v: 1, salt: SALT, scopes: { [scope]: misread } } })).store;
    await crossFlow.observe(scope, throttled);
    expect(crossFlow.snapshot().get(scope)?.windowMs).toBe(1020);
    const memory = createMemoryStore({ clock: new FakeClock(T0) });
    expect(memory.load({ [scope]: misread })).toEqual([]);
    await memory.observe(scope, throttled);
    expect(memory.snapshot().get(scope)?.windowMs).toBe(1960);
  });

  it("returns only its own key: other components' keys are neither returned nor changed", async () => {
    const crossFlowState = { "other.component.cursor": { page: 7 }, counter: 3, [STATE_KEY]: { v: 1, salt: SALT, scopes: {} } };
    const before = structuredClone(crossFlowState);
    const { store } = open(crossFlowState);
    await store.holdUntil(scope, T0 + 1000, "wait", "burst");
    const returned = store.toCrossFlowState();
    expect(Object.keys(returned)).toEqual([STATE_KEY]);
    expect(crossFlowState).toEqual(before);
    expect(returned[STATE_KEY]).toMatchObject({ v: 1, salt: SALT, scopes: { [scope]: { notBeforeMs: T0 + 1000 } } });
    expect(returned[STATE_KEY]).not.toHaveProperty("queues");
  });

  it("writes its park queues only while one holds items", async () => {
    const { store } = open(undefined);
    await store.park("batch", [{ item: { id: 1 }, notBeforeMs: T0 + 1000, reason: "quota" }]);
    expect(store.toCrossFlowState()[STATE_KEY]).toHaveProperty("queues.batch");
    const { store: next } = open(persisted(store.toCrossFlowState()));
    expect((await next.takeParked("batch", T0 + 1000, 10)).items).toHaveLength(1);
    expect(next.toCrossFlowState()[STATE_KEY]).not.toHaveProperty("queues");
  });

  it.each([
    ["a string", "garbage"],
    ["JSON-ish text", '{"v":1,"scopes":{'],
    ["an array", [{ v: 1, scopes: {} }]],
    ["a number", 42],
    ["true", true],
    ["another version", { v: 2, scopes: {} }],
    ["no scopes", { v: 1 }],
    ["scopes as an array", { v: 1, scopes: [] }],
    ["scopes as text", { v: 1, scopes: "x" }],
  ])("ignores %s under its key with one warning line, no throw, and starts afresh", async (_name, value) => {
    const other = { keep: "me" };
    const { store, warnings } = open({ other, [STATE_KEY]: value });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^throttle-aware-http: the stored state under ${STATE_KEY.replace(/\./g, "\\.")} is not in a known format; starting afresh\\.$`));
    const { result } = await store.claim({ governor: scope, holds: [] }, { nowMs: T0, latestStartMs: T0 + 1000 });
    expect(result).toMatchObject({ kind: "go", probe: true });
    expect(Object.keys(await store.toCrossFlowState())).toEqual([STATE_KEY]);
  });

  it("drops each malformed scope with one warning line naming it, and keeps the good ones", () => {
    const good = waiting(T0 + HOUR_MS);
    const { store, warnings } = open({ [STATE_KEY]: { v: 1, salt: SALT, scopes: { good, text: "garbage", list: [1, 2], wrongVersion: { ...good, v: 7 }, nanWait: { ...good, notBeforeMs: "NaN" }, "": good } } });
    expect([...store.snapshot().keys()]).toEqual(["good"]);
    expect(warnings).toHaveLength(5);
    for (const warning of warnings) {
      expect(warning).not.toContain("\n");
      expect(warning).not.toMatch(/\bat\s+\S+\s+\(/);
    }
    expect(warnings.join("\n")).toMatch(/scope text was dropped: not an object/);
    expect(warnings.join("\n")).toMatch(/scope nanWait was dropped: notBeforeMs is not a valid number/);
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["a string", "state"],
    ["an array", []],
    ["an empty object", {}],
    ["null under its key", { [STATE_KEY]: null }],
  ])("starts quietly from %s (no state saved yet)", (_name, value) => {
    const { store, warnings } = open(value);
    expect(warnings).toEqual([]);
    expect(store.snapshot().size).toBe(0);
    expect(store.saltValue).toMatch(/^[0-9a-f]{32}$/);
  });

  it("keeps a stored salt, and replaces one that is not 32 hex characters", () => {
    expect(open({ [STATE_KEY]: { v: 1, salt: SALT, scopes: {} } }).store.saltValue).toBe(SALT);
    for (const salt of ["short", SALT.toUpperCase(), 42, `${SALT}0`]) {
      const { store } = open({ [STATE_KEY]: { v: 1, salt, scopes: {} } });
      expect(store.saltValue).toMatch(/^[0-9a-f]{32}$/);
      expect(store.saltValue).not.toBe(salt);
    }
  });

  it("10,000 scopes: keeps every one whose wait is still ahead, drops idle ones (least recently used first) down to its bound of 500", async () => {
    const scopes: Record<string, GovernorState> = {};
    for (let i = 0; i < 10_000; i++) {
      const ahead = i % 25 === 0; // 400 scopes with a wait ahead
      scopes[`api|host-${i}|cred`] = ahead ? waiting(T0 + 60_000 + i) : { ...emptyState(T0 - 100_000 + i), notBeforeMs: T0 - 1000 };
    }
    const { store, warnings } = open(persisted({ [STATE_KEY]: { v: 1, salt: SALT, scopes } }));
    expect(warnings).toEqual([]);
    const kept = store.snapshot();
    expect(kept.size).toBe(500);
    const aheadKeys = Object.keys(scopes).filter((_, i) => i % 25 === 0);
    expect(aheadKeys.every((key) => kept.has(key))).toBe(true);
    // The idle ones kept are the most recently used.
    const idleKept = [...kept.keys()].filter((key) => !aheadKeys.includes(key)).map((key) => Number(key.split("-")[1]!.split("|")[0]));
    expect(Math.min(...idleKept)).toBeGreaterThan(9000);
    // A new scope later in the step does not push out a wait either.
    await store.holdUntil("api|new-host|cred", T0 + 120_000, "new wait", "burst");
    expect(aheadKeys.every((key) => store.snapshot().has(key))).toBe(true);
    expect(store.snapshot().has("api|new-host|cred")).toBe(true);
    const saved = store.toCrossFlowState()[STATE_KEY] as { scopes: Record<string, unknown> };
    expect(Object.keys(saved.scopes)).toHaveLength(500);
  });

  it("more waits ahead than its bound: it keeps the 500 that end last (a wait that ends first costs least to lose)", () => {
    const scopes: Record<string, GovernorState> = {};
    for (let i = 0; i < 10_000; i++) scopes[`api|host-${i}|cred`] = waiting(T0 + 60_000 + i * 1000);
    const { store } = open(persisted({ [STATE_KEY]: { v: 1, salt: SALT, scopes } }));
    const untils = [...store.snapshot().values()].map((s) => s.notBeforeMs).sort((a, b) => a - b);
    expect(untils).toHaveLength(500);
    expect(untils[0]).toBe(T0 + 60_000 + 9500 * 1000);
  });
});

describe("openStore (how an action opens it)", () => {
  it("reads context.crossFlowState and sends each problem to context.logger.warn as one line", async () => {
    const warned: string[] = [];
    const context = { crossFlowState: { [STATE_KEY]: "garbage", other: { x: 1 } }, logger: { warn: (message: string) => warned.push(message), info: () => undefined, error: () => undefined, debug: () => undefined, metric: () => undefined } };
    const store = openStore(context as unknown as Parameters<typeof openStore>[0]);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain(STATE_KEY);
    expect(Object.keys(await store.toCrossFlowState())).toEqual([STATE_KEY]);
  });
});
