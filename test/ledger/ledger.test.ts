import { describe, expect, it, vi } from "vitest";
import { createMemoryLedger, createStateLedger, LEDGER_STATE_KEY } from "../../src/ledger";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const write = (ms: number, reason = "429") => ({ notBefore: at(ms), provider: "generic", limitType: "burst", reason });

describe("memory ledger", () => {
  it("keeps the later notBefore: an earlier write never shortens the wait", () => {
    const ledger = createMemoryLedger();
    ledger.setIfLater("s", write(10_000, "first"), T0);
    ledger.setIfLater("s", write(5_000, "earlier"), T0);
    expect(ledger.get("s")?.notBefore).toBe(at(10_000));
    expect(ledger.get("s")?.reason).toBe("first");
    ledger.setIfLater("s", write(20_000, "later"), T0);
    expect(ledger.get("s")?.notBefore).toBe(at(20_000));
  });

  it("gates requests until notBefore, then frees the scope", () => {
    const ledger = createMemoryLedger();
    ledger.setIfLater("s", write(10_000), T0);
    expect(ledger.gate("s", T0).blockedUntilMs).toBe(T0 + 10_000);
    expect(ledger.gate("s", T0 + 10_000).blockedUntilMs).toBe(0);
    expect(ledger.gate("other", T0).blockedUntilMs).toBe(0);
  });

  it("prunes entries expired for longer than retainMs", () => {
    const ledger = createMemoryLedger({ retainMs: 1000 });
    ledger.setIfLater("old", write(0), T0);
    ledger.setIfLater("new", write(60_000), T0);
    expect(ledger.prune(T0 + 1000)).toBe(1);
    expect(Object.keys(ledger.entries())).toEqual(["new"]);
  });

  it("bounds its size, dropping the entries that free up first", () => {
    const ledger = createMemoryLedger({ maxEntries: 3 });
    for (let i = 0; i < 5; i++) ledger.setIfLater(`s${i}`, write(1000 * (5 - i)), T0);
    expect(Object.keys(ledger.entries()).sort()).toEqual(["s0", "s1", "s2"]);
  });

  it("opens the breaker after N consecutive throttles, lets one probe through after notBefore, closes on success", () => {
    const ledger = createMemoryLedger();
    for (let i = 0; i < 2; i++) ledger.recordThrottle("s", write(1000), T0, 3);
    expect(ledger.get("s")?.breaker).toBe("closed");
    ledger.recordThrottle("s", write(1000), T0, 3);
    expect(ledger.get("s")?.breaker).toBe("open");
    expect(ledger.gate("s", T0 + 500).blockedUntilMs).toBe(T0 + 1000);
    // After notBefore: the first caller is the probe, the second waits for it.
    expect(ledger.gate("s", T0 + 1000).blockedUntilMs).toBe(0);
    expect(ledger.get("s")?.breaker).toBe("half_open");
    expect(ledger.gate("s", T0 + 1001).blockedUntilMs).toBeGreaterThan(T0 + 1001);
    ledger.recordSuccess("s", T0 + 1100);
    expect(ledger.get("s")?.breaker).toBe("closed");
    expect(ledger.get("s")?.consecutiveThrottles).toBe(0);
    expect(ledger.gate("s", T0 + 1101).blockedUntilMs).toBe(0);
  });

  it("re-opens the breaker when the probe is throttled", () => {
    const ledger = createMemoryLedger();
    ledger.recordThrottle("s", write(1000), T0, 1);
    ledger.gate("s", T0 + 1000);
    ledger.recordThrottle("s", write(5000), T0 + 1000, 1);
    expect(ledger.get("s")?.breaker).toBe("open");
    expect(ledger.gate("s", T0 + 2000).blockedUntilMs).toBe(T0 + 5000);
  });

  it("round-trips through a plain object and drops invalid entries with a warning", () => {
    const warn = vi.fn();
    const ledger = createMemoryLedger({ warn });
    ledger.recordThrottle("good", write(1000), T0, 3);
    const state = JSON.parse(JSON.stringify(ledger.toState())) as { entries: Record<string, unknown> };
    state.entries.bad = { notBefore: "tomorrow-ish", setAt: at(0) };
    state.entries.worse = "not an object";
    state.entries.negative = { notBefore: at(1), setAt: at(0), consecutiveThrottles: -1 };
    const copy = createMemoryLedger({ warn });
    expect(copy.load(state)).toBe(1);
    expect(copy.get("good")).toEqual(ledger.get("good"));
    expect(copy.get("bad")).toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(3);
    expect(String(warn.mock.calls[0]![0])).toMatch(/dropped the entry for bad: notBefore/);
  });

  it("ignores garbage state with a warning instead of throwing", () => {
    const warn = vi.fn();
    const ledger = createMemoryLedger({ warn });
    expect(ledger.load("nonsense")).toBe(0);
    expect(ledger.load({ entries: [1, 2] })).toBe(0);
    expect(ledger.load(undefined)).toBe(0);
    expect(warn).toHaveBeenCalledTimes(2);
  });

  it("load merges set-if-later: a stale stored entry never shortens a live one", () => {
    const ledger = createMemoryLedger();
    ledger.setIfLater("s", write(10_000, "live"), T0);
    ledger.load({ version: 1, entries: { s: { ...write(1000, "stale"), setAt: at(0), consecutiveThrottles: 0, breaker: "closed" } } });
    expect(ledger.get("s")?.reason).toBe("live");
  });
});

describe("cross-flow-state ledger", () => {
  it("reads its namespaced key, prunes, and writes back without touching other keys", () => {
    const stored = { other: 42, [LEDGER_STATE_KEY]: { version: 1, entries: { s: { ...write(60_000), setAt: at(0), consecutiveThrottles: 1, breaker: "closed" } } } };
    const ledger = createStateLedger(stored, T0);
    expect(ledger.gate("s", T0).blockedUntilMs).toBe(T0 + 60_000);
    ledger.setIfLater("t", write(5000), T0);
    const next = ledger.toCrossFlowState(stored);
    expect(next.other).toBe(42);
    expect(Object.keys((next[LEDGER_STATE_KEY] as { entries: object }).entries).sort()).toEqual(["s", "t"]);
    // The input object is not mutated: Prismatic writes only what the step returns.
    expect(Object.keys((stored[LEDGER_STATE_KEY] as { entries: object }).entries)).toEqual(["s"]);
  });

  it("starts empty when cross-flow state has no ledger", () => {
    expect(createStateLedger(undefined, T0).entries()).toEqual({});
    expect(createStateLedger({}, T0).entries()).toEqual({});
  });
});
