/**
 * Send Batch from the BUILT bundle (webpack into a scratch directory, as test/build.test.ts does),
 * through spectral's harness, against the lab's throttled API on loopback: 10 requests per second
 * in fixed windows aligned to whole seconds, X-RateLimit-* budget headers. Functional goals and
 * loose bounds only; `npm run bench:batch` prints the figures (and checks the 1.10 x goal).
 */
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { batchApiSpec, buildBundle, labRequests, runnerFor, startAlignedApi, timeBatch, timeLoop, type ActionRunner } from "../../src/lab/batch";

let run: ActionRunner;
let cleanup = (): void => undefined;

beforeAll(async () => {
  const built = await buildBundle(join(__dirname, "..", ".."));
  run = runnerFor(built.component, { quiet: true });
  cleanup = built.cleanup;
}, 180_000);
afterAll(() => cleanup());
afterEach(() => {
  vi.useRealTimers();
});

describe("Send Batch from the built bundle", () => {
  it("60 GETs at concurrency 8 against 10 per second: 60 successes, at most 1 throttled answer, near the API's minimum; the same as a loop of Send Request", async () => {
    const batchLab = await startAlignedApi(batchApiSpec());
    let batch;
    try {
      batch = (await timeBatch(run, batchLab, labRequests(batchLab.url, 60), 8)).figures;
    } finally {
      await batchLab.close();
    }
    expect(batch).toMatchObject({ ok: 60, failed: 0, deferred: 0, calls: batch.throttled + 60 });
    expect(batch.throttled).toBeLessThanOrEqual(1);
    // Loose: the goal (1.10 x) is checked by npm run bench:batch, not by a timed test.
    expect(batch.makespanMs).toBeGreaterThanOrEqual(5000);
    expect(batch.makespanMs).toBeLessThan(1.5 * batch.idealMs);

    const loopLab = await startAlignedApi(batchApiSpec());
    try {
      const loop = await timeLoop(run, loopLab, labRequests(loopLab.url, 60));
      expect(loop).toMatchObject({ ok: 60, failed: 0, deferred: 0 });
      expect(loop.makespanMs).toBeGreaterThanOrEqual(5000);
    } finally {
      await loopLab.close();
    }
  }, 60_000);

  it("started 14 minutes ago with a Park Queue: every item deferred and parked; Take Parked Items: nothing before the notBefore, all after it, then nothing", async () => {
    const lab = await startAlignedApi(batchApiSpec());
    try {
      const requests = labRequests(lab.url, 60);
      const startedAt = new Date(Date.now() - 14 * 60_000).toISOString();
      const out = (await run("sendBatch", { requests, concurrency: "8", parkQueue: "later" }, { crossFlowState: {}, startedAt })) as {
        branch: string;
        data: { summary: Record<string, number>; results: Array<{ id: string; outcome: string; notBefore?: string; reason: string }>; deferred: unknown[] };
        crossFlowState: Record<string, unknown>;
      };
      expect(out.branch).toBe("Deferred");
      expect(out.data.summary).toEqual({ total: 60, succeeded: 0, failed: 0, deferred: 60, parked: 60 });
      expect(lab.api.records).toHaveLength(0);
      for (const result of out.data.results) {
        expect(result.outcome).toBe("deferred");
        expect(Number.isFinite(Date.parse(result.notBefore ?? ""))).toBe(true);
        expect(result.reason).toMatch(/could not finish inside this execution/);
      }
      const notBefores = out.data.results.map((r) => Date.parse(r.notBefore!));
      type Taken = { data: { items: Array<{ id: string }> }; crossFlowState: Record<string, unknown> };
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(Math.min(...notBefores) - 1);
      const before = (await run("takeParked", { parkQueue: "later" }, { crossFlowState: out.crossFlowState })) as Taken;
      expect(before.data.items).toEqual([]);
      vi.setSystemTime(Math.max(...notBefores));
      const after = (await run("takeParked", { parkQueue: "later" }, { crossFlowState: before.crossFlowState })) as Taken;
      expect(after.data.items.map((i) => i.id)).toEqual(requests.map((r) => r.id));
      const third = (await run("takeParked", { parkQueue: "later" }, { crossFlowState: after.crossFlowState })) as Taken;
      expect(third.data.items).toEqual([]);
    } finally {
      await lab.close();
    }
  }, 30_000);
});
