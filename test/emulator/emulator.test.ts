import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHarness } from "@prismatic-io/spectral/dist/testing";
import { ThrottleDeferredError } from "../../src/client";
import component from "../../src/index";
import { startServer, type TestServer } from "../helpers/server";
import { PrismaticEmulator, type Step } from "./emulator";

const T0 = Date.parse("2026-03-02T10:00:00.000Z");
const MINUTE = 60_000;
// Only Date is faked: sockets and timers stay real, the platform's clock jumps whole minutes.
const clock = { nowMs: () => Date.now(), setMs: (ms: number) => vi.setSystemTime(ms) };

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"], now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the emulator's own rules", () => {
  it("writes state only for a successful execution, and the last one to finish wins", async () => {
    const emulator = new PrismaticEmulator(clock);
    const write = (value: string): Step => async (ctx) => ({ crossFlowState: { ...ctx.crossFlowState, k: value } });
    const boom: Step = async () => {
      throw new Error("boom");
    };
    const a = emulator.begin();
    const b = emulator.begin();
    await b.run([write("b")]);
    b.end();
    await a.run([write("a")]);
    a.end();
    expect(emulator.storedCrossFlowState).toEqual({ k: "a" });
    const c = emulator.begin();
    await c.run([write("c"), boom]);
    expect(c.end()).toMatchObject({ status: "failed", wroteState: false });
    expect(emulator.storedCrossFlowState).toEqual({ k: "a" });
  });

  it("a later step of the same execution sees an earlier step's state; a concurrent execution does not", async () => {
    const emulator = new PrismaticEmulator(clock);
    const seen: unknown[] = [];
    const other = emulator.begin();
    const exec = emulator.begin();
    await exec.run([async (ctx) => ({ crossFlowState: { ...ctx.crossFlowState, x: 1 } }), async (ctx) => (seen.push(ctx.crossFlowState.x), undefined)]);
    exec.end();
    await other.run([async (ctx) => (seen.push(ctx.crossFlowState.x), undefined)]);
    expect(seen).toEqual([1, undefined]);
  });

  it("Flow retry re-runs a failed execution from its first step, whole minutes later", async () => {
    const emulator = new PrismaticEmulator(clock, { attempts: 2, minutesBetween: 3 });
    const ran: number[] = [];
    emulator.trigger(T0 + 20_000, [
      async () => {
        ran.push(Date.now());
        throw new Error("fail");
      },
    ]);
    const records = await emulator.runUntil(T0 + 60 * MINUTE);
    expect(records.map((r) => r.retryAttempt)).toEqual([0, 1, 2]);
    expect(ran[1]! % MINUTE).toBe(0);
    expect(ran[1]! - ran[0]!).toBeGreaterThanOrEqual(3 * MINUTE);
  });
});

describe("a provider's 10-minute wait, honoured end to end", () => {
  let provider: TestServer;
  let blockedUntilMs = 0;
  const calls: Array<{ atMs: number; early: boolean }> = [];

  beforeEach(async () => {
    blockedUntilMs = 0;
    calls.length = 0;
    provider = await startServer([
      () => {
        const nowMs = Date.now();
        if (blockedUntilMs === 0) {
          blockedUntilMs = nowMs + 10 * MINUTE;
          calls.push({ atMs: nowMs, early: false });
          return { status: 429, headers: { "retry-after": "600" }, body: { error: "rate limited for 10 minutes" } };
        }
        const early = nowMs < blockedUntilMs;
        calls.push({ atMs: nowMs, early });
        if (early) return { status: 429, headers: { "retry-after": String(Math.ceil((blockedUntilMs - nowMs) / 1000)) }, body: { error: "still limited" } };
        return { status: 200, body: { ok: true } };
      },
    ]);
  });
  afterEach(async () => {
    await provider.close();
  });

  const harness = createHarness(component);
  const sendStep =
    (onLongWait: "fail" | "defer"): Step =>
    async (ctx) => {
      const result = await harness.action("sendRequest", { url: `${provider.url}/things`, method: "GET", onLongWait, maxInlineWaitSeconds: "60" }, { crossFlowState: ctx.crossFlowState, startedAt: ctx.startedAt });
      return result as { branch?: string; crossFlowState?: Record<string, unknown> };
    };

  it("defer mode: every execution succeeds and none calls the provider before notBefore", async () => {
    const emulator = new PrismaticEmulator(clock);
    for (let minute = 0; minute <= 14; minute += 2) emulator.trigger(T0 + minute * MINUTE, [sendStep("defer")]);
    const records = await emulator.runUntil(T0 + 15 * MINUTE);
    expect(records).toHaveLength(8);
    expect(records.every((r) => r.status === "succeeded")).toBe(true);
    // The first execution discovers the limit; the next four (2-8 min) defer with 0 calls.
    expect(records.map((r) => r.branches[0])).toEqual(["Deferred", "Deferred", "Deferred", "Deferred", "Deferred", "Success", "Success", "Success"]);
    expect(calls.filter((c) => c.early)).toHaveLength(0);
    expect(calls.filter((c) => c.atMs > T0 && c.atMs < blockedUntilMs)).toHaveLength(0);
    expect(calls).toHaveLength(4);
  });

  it("fail mode: Flow retry re-runs the flow; each retry makes at most one probe call", async () => {
    const emulator = new PrismaticEmulator(clock, { attempts: 5, minutesBetween: 4 });
    emulator.trigger(T0, [sendStep("fail")]);
    const records = await emulator.runUntil(T0 + 60 * MINUTE);
    expect(records.map((r) => r.status)).toEqual(["failed", "failed", "failed", "succeeded"]);
    for (const r of records.slice(0, 3)) expect(r.error).toBeInstanceOf(ThrottleDeferredError);
    // One call per execution: state is not written on failure, so each retry probes once.
    const perExecution = records.map((r) => calls.filter((c) => c.atMs >= r.startedAtMs && c.atMs <= r.endedAtMs).length);
    expect(perExecution).toEqual([1, 1, 1, 1]);
    expect(calls.at(-1)!.atMs).toBeGreaterThanOrEqual(blockedUntilMs);
  });

  it("fail mode: an execution that can see the not_before fails at once without calling", async () => {
    const emulator = new PrismaticEmulator(clock);
    emulator.trigger(T0, [sendStep("defer")]);
    emulator.trigger(T0 + 3 * MINUTE, [sendStep("fail")]);
    const records = await emulator.runUntil(T0 + 5 * MINUTE);
    expect(records[1]!.status).toBe("failed");
    expect(records[1]!.error).toBeInstanceOf(ThrottleDeferredError);
    expect((records[1]!.error as ThrottleDeferredError).notBefore).toBe(new Date(blockedUntilMs).toISOString());
    expect(calls).toHaveLength(1);
  });
});
