import { describe, expect, it } from "vitest";
import { createCrossFlowStore, createMemoryStore, STATE_KEY, type ParkedItem } from "../../src/store";

const T0 = Date.parse("2026-03-02T10:00:00.000Z");
const parkedItem = (id: string, notBeforeMs: number, extra: Record<string, unknown> = {}): ParkedItem => ({
  item: { id, method: "POST", url: `/contacts/${id}`, data: { id }, ...extra },
  notBeforeMs,
  reason: "429: quota spent until the next hour.",
});
const ids = (items: readonly ParkedItem[]) => items.map((p) => p.item.id);

describe("park queues in the memory store", () => {
  it("takes nothing before the not_before, the ripe items after it, then nothing again", async () => {
    const store = createMemoryStore();
    expect(await store.park("crm", [parkedItem("a", T0 + 1000), parkedItem("b", T0 + 1000)])).toEqual({ parked: 2, overflow: [], queued: 2 });
    expect(await store.takeParked("crm", T0 + 999, 10)).toEqual({ items: [], remaining: 2, nextNotBeforeMs: T0 + 1000 });
    const ripe = await store.takeParked("crm", T0 + 1000, 10);
    expect(ids(ripe.items)).toEqual(["a", "b"]);
    expect(ripe).toMatchObject({ remaining: 0, nextNotBeforeMs: null });
    expect((await store.takeParked("crm", T0 + 5000, 10)).items).toEqual([]);
  });

  it("leaves items still waiting, and items past maxItems, in their order", async () => {
    const store = createMemoryStore();
    await store.park("q", [parkedItem("1", T0), parkedItem("2", T0 + 60_000), parkedItem("3", T0), parkedItem("4", T0), parkedItem("5", T0)]);
    const first = await store.takeParked("q", T0 + 1, 2);
    expect(ids(first.items)).toEqual(["1", "3"]);
    expect(first).toMatchObject({ remaining: 3, nextNotBeforeMs: T0 });
    expect(ids((await store.takeParked("q", T0 + 1, 10)).items)).toEqual(["4", "5"]);
    expect(ids((await store.takeParked("q", T0 + 60_000, 10)).items)).toEqual(["2"]);
  });

  it("hands back what does not fit the item bound, in order, instead of dropping it", async () => {
    const store = createMemoryStore();
    await store.park("q", [parkedItem("1", T0), parkedItem("2", T0)], { maxItems: 3 });
    const result = await store.park("q", [parkedItem("3", T0), parkedItem("4", T0), parkedItem("5", T0)], { maxItems: 3 });
    expect(result.parked).toBe(1);
    expect(result.queued).toBe(3);
    expect(ids(result.overflow)).toEqual(["4", "5"]);
    expect(result.overflow[0]).toEqual(parkedItem("4", T0));
  });

  it("bounds a queue's bytes and all queues' bytes together", async () => {
    const store = createMemoryStore({ queues: { limits: { maxBytes: 2000 }, maxTotalBytes: 3000 } });
    const big = (id: string) => parkedItem(id, T0, { data: "x".repeat(800) });
    expect((await store.park("a", [big("1"), big("2"), big("3")])).parked).toBe(2);
    // Queue b has room of its own, but the store as a whole has room for one more item only.
    const b = await store.park("b", [big("4"), big("5")]);
    expect(b.parked).toBe(1);
    expect(ids(b.overflow)).toEqual(["5"]);
    expect((await store.park("c", [parkedItem("huge", T0, { data: "y".repeat(5000) })])).overflow).toHaveLength(1);
  });

  it("keeps a JSON copy: changing an item after parking or after taking changes nothing stored", async () => {
    const store = createMemoryStore();
    const given = parkedItem("a", T0);
    await store.park("q", [given]);
    (given.item as { url: string }).url = "/changed";
    expect(store.queuesSnapshot().q![0]!.item.url).toBe("/contacts/a");
  });

  it("refuses a nameless queue, a bad maxItems and an item that is not JSON, in one line each", async () => {
    const store = createMemoryStore();
    await expect(store.park(" ", [parkedItem("a", T0)])).rejects.toThrow(/^Invalid park queue name/);
    await expect(store.takeParked("q", T0, 0)).rejects.toThrow(/^Invalid maxItems 0/);
    const circular: Record<string, unknown> = { id: "c" };
    circular.self = circular;
    await expect(store.park("q", [{ item: circular, notBeforeMs: T0, reason: "r" }])).rejects.toThrow(/^Invalid parked item: it cannot be stored as JSON/);
    await expect(store.park("q", [{ item: { id: "n" }, notBeforeMs: Number.NaN, reason: "r" }])).rejects.toThrow(/^Invalid parked item/);
  });
});

describe("park queues in cross-flow state", () => {
  it("are saved under the component's key beside the governors and read back by the next execution", async () => {
    const first = createCrossFlowStore({});
    await first.park("crm", [parkedItem("a", T0), parkedItem("b", T0 + 10_000)]);
    const state = first.toCrossFlowState();
    expect(Object.keys(state)).toEqual([STATE_KEY]);
    expect(Object.keys(state[STATE_KEY] as object).sort()).toEqual(["queues", "salt", "scopes", "v"]);

    const second = createCrossFlowStore(JSON.parse(JSON.stringify(state)));
    expect(ids((await second.takeParked("crm", T0 + 1, 10)).items)).toEqual(["a"]);
    // The state the taking step returns no longer holds what it took.
    const third = createCrossFlowStore(JSON.parse(JSON.stringify(second.toCrossFlowState())));
    expect(ids((await third.takeParked("crm", T0 + 10_000, 10)).items)).toEqual(["b"]);
    expect(Object.keys(third.toCrossFlowState()[STATE_KEY] as object)).not.toContain("queues");
  });

  it("reads a state saved before queues existed, and writes no queues key when there are none", () => {
    const warnings: string[] = [];
    const salt = "0123456789abcdef0123456789abcdef";
    const store = createCrossFlowStore({ [STATE_KEY]: { v: 1, salt, scopes: {} } }, { warn: (m) => warnings.push(m) });
    expect(warnings).toEqual([]);
    expect(store.toCrossFlowState()).toEqual({ [STATE_KEY]: { v: 1, salt, scopes: {} } });
  });

  it("drops malformed stored items with one warning per queue, and keeps the good ones", async () => {
    const warnings: string[] = [];
    const good = parkedItem("ok", T0);
    const store = createCrossFlowStore(
      { [STATE_KEY]: { v: 1, scopes: {}, queues: { crm: [good, { item: "x", notBeforeMs: T0, reason: "r" }, { item: {}, notBeforeMs: "soon", reason: "r" }], other: "not a list" } } },
      { warn: (m) => warnings.push(m) },
    );
    expect(warnings).toEqual([
      "throttle-aware-http: 2 item(s) of park queue crm were not in a known format and were dropped",
      "throttle-aware-http: park queue other is not a named list; it was dropped",
    ]);
    expect((await store.takeParked("crm", T0, 10)).items).toEqual([good]);
  });
});
