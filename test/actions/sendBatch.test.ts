/**
 * Send Batch and Take Parked Items through spectral's harness (clean and defaults run) against
 * real loopback servers: the lab's throttled API (src/lab/server.ts) or a scripted one.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createConnection, createHarness, invoke } from "@prismatic-io/spectral/dist/testing";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sendBatch } from "../../src/actions";
import { bearerToken } from "../../src/connections";
import component from "../../src/index";
import { globalClock } from "../../src/lab/clock";
import { batchApiSpec, labRequests, startAlignedApi } from "../../src/lab/batch";
import { ThrottledApi } from "../../src/lab/server";
import type { ServerSpec } from "../../src/lab/types";
import { createCrossFlowStore, STATE_KEY } from "../../src/store";
import { recordingLogger, startServer, type TestServer } from "../helpers/server";

const harness = createHarness(component);
const MINUTE_MS = 60_000;

interface ItemResult {
  id: string | number;
  outcome: "success" | "failed" | "deferred";
  status: number | null;
  data: unknown;
  notBefore?: string;
  reason: string;
  attempts: number | null;
}
interface BatchOutput {
  branch: "Success" | "Deferred";
  data: {
    summary: { total: number; succeeded: number; failed: number; deferred: number; parked: number };
    results: ItemResult[];
    deferred: Array<Record<string, unknown> & { notBefore: string; reason: string }>;
    parkQueue: { name: string; parked: number; waiting: number } | null;
    warnings: string[];
  };
  crossFlowState: Record<string, unknown>;
}
interface TakeOutput {
  data: { items: Array<Record<string, unknown>>; remaining: number; nextNotBefore: string | null };
  crossFlowState: Record<string, unknown>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.useRealTimers();
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function labApi(overrides: Partial<ServerSpec> = {}, seed = 1) {
  const api = new ThrottledApi(batchApiSpec(overrides), globalClock, seed);
  const { url, close } = await api.listen();
  cleanups.push(close);
  return { api, url };
}

async function scripted(replies: Parameters<typeof startServer>[0]): Promise<TestServer> {
  const server = await startServer(replies);
  cleanups.push(() => server.close());
  return server;
}

const sendBatchStep = (params: Record<string, unknown>, context: Record<string, unknown> = {}) =>
  harness.action("sendBatch", params, { crossFlowState: {}, startedAt: new Date().toISOString(), ...context }) as Promise<BatchOutput>;
const takeParkedStep = (params: Record<string, unknown>, crossFlowState: Record<string, unknown>) => harness.action("takeParked", params, { crossFlowState }) as Promise<TakeOutput>;
const minutesAgo = (minutes: number, plusMs = 0) => new Date(Date.now() - minutes * MINUTE_MS + plusMs).toISOString();

describe("Send Batch: time", () => {
  it("started 14 minutes into the execution: nothing is sent, every item is deferred with a notBefore and a reason", async () => {
    const { api, url } = await labApi();
    const out = await sendBatchStep({ requests: labRequests(url, 60), concurrency: "8" }, { startedAt: minutesAgo(14) });
    expect(out.branch).toBe("Deferred");
    expect(out.data.summary).toEqual({ total: 60, succeeded: 0, failed: 0, deferred: 60, parked: 0 });
    expect(api.records).toHaveLength(0);
    expect(out.data.deferred.map((d) => d.id)).toEqual(labRequests(url, 60).map((r) => r.id));
    for (const item of out.data.deferred) {
      expect(Number.isFinite(Date.parse(item.notBefore))).toBe(true);
      expect(item.reason).toMatch(/^Not started: it could not finish inside this execution \(Prismatic stops an execution after 15 minutes/);
      expect(item.url).toMatch(/\/items\/job-/);
    }
    for (const result of out.data.results) expect(result).toMatchObject({ outcome: "deferred", status: null, attempts: 0 });
  });

  it("with seconds left: what can finish is sent, the rest is parked; Take Parked Items gives it back once, after its notBefore", async () => {
    const { api, url, close } = await startAlignedApi(batchApiSpec());
    cleanups.push(close);
    // 3.5 s left in the execution and 1 s per attempt: items start for about 2.5 s, in three windows of 10.
    const out = await sendBatchStep({ requests: labRequests(url, 60), concurrency: "8", timeoutSeconds: "1", parkQueue: "lab-jobs" }, { startedAt: minutesAgo(14, 3500) });
    const { summary } = out.data;
    expect(out.branch).toBe("Deferred");
    expect(summary.succeeded + summary.deferred).toBe(60);
    expect(summary.succeeded).toBeGreaterThanOrEqual(20);
    expect(summary.deferred).toBeGreaterThan(0);
    expect(summary.parked).toBe(summary.deferred);
    expect(out.data.deferred).toEqual([]);
    expect(out.data.parkQueue).toEqual({ name: "lab-jobs", parked: summary.deferred, waiting: summary.deferred });
    expect(api.records.filter((r) => r.status === 200)).toHaveLength(summary.succeeded);
    const deferredResults = out.data.results.filter((r) => r.outcome === "deferred");
    const notBefores = deferredResults.map((r) => Date.parse(r.notBefore!));
    for (const r of deferredResults) expect(r.reason).toMatch(/could not finish inside this execution/);

    // Take Parked Items reads only Date.now(): set it before and after the notBefores.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Math.min(...notBefores) - 1);
    const before = await takeParkedStep({ parkQueue: "lab-jobs" }, out.crossFlowState);
    expect(before.data.items).toEqual([]);
    expect(before.data.remaining).toBe(summary.deferred);
    vi.setSystemTime(Math.max(...notBefores));
    const after = await takeParkedStep({ parkQueue: "lab-jobs" }, before.crossFlowState);
    expect(after.data.items.map((i) => i.id)).toEqual(deferredResults.map((r) => r.id));
    expect(after.data.items[0]).toMatchObject({ method: "GET", url: expect.stringContaining("/items/job-"), headers: { "x-job-id": expect.any(String) }, notBefore: expect.any(String), reason: expect.any(String) });
    expect(after.data).toMatchObject({ remaining: 0, nextNotBefore: null });
    const third = await takeParkedStep({ parkQueue: "lab-jobs" }, after.crossFlowState);
    expect(third.data.items).toEqual([]);
  });
});

describe("Send Batch: the API's answers", () => {
  it("reports a 404 and a 422 in the results, in input order, ids defaulting to the index; Success when nothing is deferred", async () => {
    const server = await scripted([(req) => (req.url === "/items/2" ? { status: 404, body: { error: "no such item" } } : req.url === "/items/3" ? { status: 422, body: { error: "bad" } } : { status: 200, body: { path: req.url } })]);
    const requests = [0, 1, 2, 3, 4].map((i) => ({ method: "GET", url: `${server.url}/items/${i}` }));
    const out = await sendBatchStep({ requests: JSON.stringify(requests), concurrency: "2" });
    expect(out.branch).toBe("Success");
    expect(out.data.summary).toEqual({ total: 5, succeeded: 3, failed: 2, deferred: 0, parked: 0 });
    expect(out.data.results.map((r) => [r.id, r.outcome, r.status])).toEqual([
      [0, "success", 200],
      [1, "success", 200],
      [2, "failed", 404],
      [3, "failed", 422],
      [4, "success", 200],
    ]);
    expect(out.data.results[2]!.data).toEqual({ error: "no such item" });
    expect(out.data.results[4]!.data).toEqual({ path: "/items/4" });
  });

  it("a long wait on a quota defers the rest of that scope at once, without calling, and leaves another API's items alone", async () => {
    let served = 0;
    const quota = await scripted([() => (++served <= 3 ? { status: 200, body: {} } : { status: 429, headers: { "retry-after": "3600" }, body: { error: "daily quota" } })]);
    const other = await scripted([{ status: 200, body: { ok: true } }]);
    const requests = Array.from({ length: 40 }, (_, i) => ({ id: `r${i}`, url: i % 4 === 3 ? `${other.url}/ok/${i}` : `${quota.url}/q/${i}` }));
    const out = await sendBatchStep({ requests, concurrency: "4" });
    expect(out.branch).toBe("Deferred");
    // 3 answered, then at most one 429 per request already in flight.
    expect(quota.calls.length).toBeLessThanOrEqual(3 + 4);
    expect(other.calls).toHaveLength(10);
    const quotaResults = out.data.results.filter((_, i) => i % 4 !== 3);
    expect(quotaResults.filter((r) => r.outcome === "success")).toHaveLength(3);
    const deferred = quotaResults.filter((r) => r.outcome === "deferred");
    expect(deferred).toHaveLength(30 - 3);
    for (const r of deferred) expect(Date.parse(r.notBefore!)).toBeGreaterThan(Date.now() + 3500_000);
    expect(deferred.filter((r) => r.attempts === 0).length).toBeGreaterThanOrEqual(30 - 3 - 4);
    expect(deferred.find((r) => r.attempts === 0)!.reason).toMatch(/^Not sent: an earlier item to the same API cannot start before \S+: The server asks for 3600 s/);
    expect(out.data.results.filter((_, i) => i % 4 === 3).every((r) => r.outcome === "success")).toBe(true);
    expect(out.data.deferred).toHaveLength(27);
  });

  it("a turn paced past the batch (a spent hourly window, no 429) defers the scope's later items without saying the API told a wait", async () => {
    const resetS = Math.ceil(Date.now() / 1000) + 3600;
    const server = await scripted([{ status: 200, headers: { "x-ratelimit-limit": "1", "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(resetS) }, body: {} }]);
    const requests = ["a", "b", "c"].map((id) => ({ id, url: `${server.url}/hourly/${id}` }));
    const out = await sendBatchStep({ requests, concurrency: "1" });
    expect(server.calls).toHaveLength(1);
    expect(out.data.results.map((r) => r.outcome)).toEqual(["success", "deferred", "deferred"]);
    const [, paced, held] = out.data.results;
    expect(Date.parse(paced!.notBefore!)).toBeGreaterThanOrEqual(resetS * 1000);
    expect(held!.notBefore).toBe(paced!.notBefore);
    expect(paced!.reason).toMatch(/^The scope's pacing gives its next turn after this request's latest start/i);
    expect(held!.reason).toMatch(/^Not sent: an earlier item to the same API cannot start before /);
    for (const r of [paced!, held!]) expect(r.reason).not.toMatch(/told to wait/);
  });

  it("parks items with a real future notBefore: Take Parked Items gives nothing now, all of them after it, then nothing", async () => {
    const server = await scripted([{ status: 429, headers: { "retry-after": "600" }, body: {} }]);
    const requests = ["a", "b", "c"].map((id) => ({ id, method: "POST", url: `${server.url}/contacts`, data: { id }, idempotencyKey: id }));
    const out = await sendBatchStep({ requests, concurrency: "1", parkQueue: "crm" });
    expect(out.data.summary).toMatchObject({ deferred: 3, parked: 3 });
    expect(server.calls).toHaveLength(1);
    const now = await takeParkedStep({ parkQueue: "crm", maxItems: "10" }, out.crossFlowState);
    expect(now.data.items).toEqual([]);
    expect(Date.parse(now.data.nextNotBefore!)).toBeGreaterThan(Date.now() + 590_000);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.parse(now.data.nextNotBefore!) + 1);
    const later = await takeParkedStep({ parkQueue: "crm", maxItems: "2" }, now.crossFlowState);
    expect(later.data.items.map((i) => i.id)).toEqual(["a", "b"]);
    expect(later.data.items[0]).toMatchObject({ method: "POST", data: { id: "a" }, idempotencyKey: "a" });
    const rest = await takeParkedStep({ parkQueue: "crm", maxItems: "2" }, later.crossFlowState);
    expect(rest.data.items.map((i) => i.id)).toEqual(["c"]);
    expect((await takeParkedStep({ parkQueue: "crm" }, rest.crossFlowState)).data.items).toEqual([]);
  });

  it("an empty list (nothing parked, nothing new) is a Success with nothing done", async () => {
    const out = await sendBatchStep({ requests: "[]", parkQueue: "crm" });
    expect(out.branch).toBe("Success");
    expect(out.data).toEqual({ summary: { total: 0, succeeded: 0, failed: 0, deferred: 0, parked: 0 }, results: [], deferred: [], parkQueue: null, warnings: [] });
  });

  it("keeps at most Concurrency requests in flight", async () => {
    let inFlight = 0;
    let peak = 0;
    const server = createServer((req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      }, 40);
      req.resume();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const out = await sendBatchStep({ requests: Array.from({ length: 24 }, (_, i) => ({ url: `${url}/x/${i}` })), concurrency: "3" });
    expect(out.data.summary.succeeded).toBe(24);
    expect(peak).toBe(3);
  });
});

describe("Send Batch: writes", () => {
  it("300 POSTs with idempotency keys against an API that drops 2% of connections after the work: none executed twice, all accounted for", async () => {
    const { api, url } = await labApi({ limit: 100, faults: { error503Share: 0, dropShare: 0.02, slowShare: 0, slowMs: 0 } }, 7);
    const requests = labRequests(url, 300, "POST");
    const out = await sendBatchStep({ requests, concurrency: "8" });
    expect(api.records.filter((r) => r.fault === "drop").length).toBeGreaterThan(0);
    expect(api.duplicates()).toBe(0);
    expect(out.data.results.map((r) => r.id)).toEqual(requests.map((r) => r.id));
    const { summary } = out.data;
    expect(summary.succeeded + summary.failed + summary.deferred).toBe(300);
    expect(summary.succeeded).toBe(300);
    expect(api.executedJobs()).toBe(300);
  }, 60_000);

  it("without idempotency keys, a dropped POST is reported as failed (its outcome unknown) and never repeated", async () => {
    const { api, url } = await labApi({ limit: 100, faults: { error503Share: 0, dropShare: 0.05, slowShare: 0, slowMs: 0 } }, 3);
    const requests = labRequests(url, 60, "POST").map((request) => ({ ...request, idempotencyKey: undefined }));
    const out = await sendBatchStep({ requests, concurrency: "4" });
    const dropped = api.records.filter((r) => r.fault === "drop").map((r) => r.jobId);
    expect(dropped.length).toBeGreaterThan(0);
    expect(api.duplicates()).toBe(0);
    expect(api.records).toHaveLength(60);
    const failed = out.data.results.filter((r) => r.outcome === "failed");
    expect(failed.map((r) => r.id).sort()).toEqual([...dropped].sort());
    for (const r of failed) expect(r).toMatchObject({ status: null, attempts: null, reason: expect.stringMatching(/may or may not have happened.*give the item an idempotencyKey/) });
  });
});

describe("Send Batch: bad input fails the step in one line naming the item", () => {
  const url = "https://api.example.test/items";
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ["text that is not JSON", { requests: "[{oops" }, /^Invalid Requests: it is not JSON\. /],
    ["an object", { requests: '{"method": "GET"}' }, /^Invalid Requests: it is an object, not a list\. /],
    ["nothing", { requests: "" }, /^Invalid Requests: it is empty\. /],
    ["an item without url", { requests: [{ url }, { method: "GET" }] }, /^Invalid Requests: the item at index 1 has no url\. /],
    ["a bad method", { requests: [{ id: "c-9", url, method: "FETCH" }] }, /^Invalid Requests: the item at index 0 \(id "c-9"\) has an invalid method "FETCH"\. Use one of: GET, POST/],
    ["a misspelt key", { requests: [{ url, idempotencykey: "k" }] }, /^Invalid Requests: the item at index 0 has an unknown key "idempotencykey"\. /],
    ["a path without a Base URL", { requests: [{ url }, { id: 7, url: "/contacts" }] }, /^Invalid Requests: the item at index 1 \(id 7\) has an invalid url: "\/contacts": it is not a full http\(s\) URL/],
    ["headers that are not an object", { requests: [{ url, headers: "Accept: x" }] }, /^Invalid Requests: the item at index 0 has headers that is not an object/],
    ["a Concurrency of 0", { requests: [{ url }], concurrency: "0" }, /^Invalid Concurrency: "0" is not a whole number from 1 to 32/],
    ["a long Park Queue name", { requests: [{ url }], parkQueue: "q".repeat(201) }, /^Invalid Park Queue: /],
  ];
  for (const [what, params, message] of cases) {
    it(what, async () => {
      const error = (await sendBatchStep(params).catch((e: unknown) => e)) as Error;
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain("\n");
    });
  }

  it("the same checks run in perform (spectral's invoke skips clean)", async () => {
    const error = (await invoke(sendBatch, { requests: [{ method: "GET" }] } as never, { crossFlowState: {} }).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/^Invalid Requests: the item at index 0 has no url\./);
  });

  it("Take Parked Items without a queue name", async () => {
    const error = (await takeParkedStep({ parkQueue: " " }, {}).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/^Invalid Park Queue: it is empty\. Enter the same name as the Send Batch step's Park Queue/);
  });
});

describe("Send Batch: the park queue's bound and secrets", () => {
  it("a full queue: the overflow comes back in deferred, with a warning in the output and one log line", async () => {
    const filled = createCrossFlowStore({});
    const waiting = Array.from({ length: 999 }, (_, i) => ({ item: { id: `old-${i}`, url: "https://api.example.test/x" }, notBeforeMs: Date.now() + MINUTE_MS, reason: "waiting" }));
    await filled.park("full", waiting);
    const logger = recordingLogger();
    const requests = ["n1", "n2", "n3"].map((id) => ({ id, url: `https://api.example.test/items/${id}` }));
    const out = await sendBatchStep({ requests, parkQueue: "full" }, { startedAt: minutesAgo(14), crossFlowState: filled.toCrossFlowState(), logger });
    expect(out.data.summary).toMatchObject({ deferred: 3, parked: 1 });
    expect(out.data.parkQueue).toEqual({ name: "full", parked: 1, waiting: 1000 });
    expect(out.data.deferred.map((d) => d.id)).toEqual(["n2", "n3"]);
    expect(out.data.warnings).toEqual([expect.stringMatching(/^Park queue "full" is full \(1000 items waiting\): 2 deferred item\(s\) were not parked and are returned in deferred\./)]);
    expect(logger.lines.filter((l) => l.includes("is full"))).toHaveLength(1);
  });

  it("stores no connection credential: the parked items and the state hold only what the items held", async () => {
    const token = "tok-batch-secret-7781";
    const connection = createConnection(bearerToken, { token });
    const server = await scripted([{ status: 429, headers: { "retry-after": "900" }, body: { echo: `Bearer ${token}` } }]);
    const out = await sendBatchStep({ connection, requests: [{ id: 1, url: `${server.url}/a` }, { id: 2, url: `${server.url}/b` }], parkQueue: "q" });
    expect(server.calls[0]!.headers.authorization).toBe(`Bearer ${token}`);
    expect(out.data.summary.parked).toBe(2);
    expect(JSON.stringify(out)).not.toContain(token);
    expect(JSON.stringify(out.crossFlowState[STATE_KEY])).not.toContain(token);
  });
});

describe("real outputs match the output schemas", () => {
  const ajv = new Ajv({ strict: true, allErrors: true });
  addFormats(ajv);
  const schemaOf = (key: string, branch?: string) => {
    const output = component.actions[key]!.outputSchema!;
    const text = output.type === "actionOutput" ? output.schema : output.branchSchemas.find((b) => b.name === branch)!.schema;
    return JSON.parse(text) as object;
  };
  const expectValid = (key: string, branch: string | undefined, data: unknown) => {
    const validate = ajv.compile(schemaOf(key, branch));
    expect(validate(data), ajv.errorsText(validate.errors)).toBe(true);
  };

  it("Send Batch Success and Deferred, Take Parked Items", async () => {
    const server = await scripted([(req) => (req.url === "/gone" ? { status: 404, body: {} } : req.url.startsWith("/slow") ? { status: 429, headers: { "retry-after": "3600" } } : { status: 200, body: { ok: 1 } })]);
    const success = await sendBatchStep({ requests: [{ url: `${server.url}/a` }, { url: `${server.url}/gone` }] });
    expect(success.branch).toBe("Success");
    expectValid("sendBatch", "Success", success.data);
    const deferred = await sendBatchStep({ requests: [{ id: "s", method: "POST", url: `${server.url}/slow`, data: { n: 1 }, headers: { "X-Trace": "1" }, queryParams: { page: 2 } }], parkQueue: "q" });
    expect(deferred.branch).toBe("Deferred");
    expectValid("sendBatch", "Deferred", deferred.data);
    const unparked = await sendBatchStep({ requests: [{ url: `${server.url}/slow` }] }, { crossFlowState: deferred.crossFlowState });
    expect(unparked.data.deferred).toHaveLength(1);
    expectValid("sendBatch", "Deferred", unparked.data);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 3601_000);
    const taken = await takeParkedStep({ parkQueue: "q" }, deferred.crossFlowState);
    expect(taken.data.items).toHaveLength(1);
    expectValid("takeParked", undefined, taken.data);
  });
});
