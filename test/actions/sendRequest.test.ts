import { createHarness, invoke, loggerMock } from "@prismatic-io/spectral/dist/testing";
import { afterEach, describe, expect, it } from "vitest";
import { sendRequest } from "../../src/actions";
import { ThrottleDeferredError, WriteOutcomeUnknownError } from "../../src/client";
import component from "../../src/index";
import { STATE_KEY } from "../../src/store";
import { recordingLogger, startServer, type TestServer } from "../helpers/server";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const harness = createHarness(component);
const ok = { status: 200, body: { ok: true } };
const tooMany = (seconds: number) => ({ status: 429, headers: { "retry-after": String(seconds) }, body: { error: "slow down" } });

/** Raw step inputs as Prismatic passes them (strings); the harness fills defaults and runs clean. */
function inputs(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { url, method: "GET", ...extra };
}

function branchOf(result: unknown): string | undefined {
  return result && typeof result === "object" && "branch" in result ? String((result as { branch: unknown }).branch) : undefined;
}

describe("sendRequest through spectral's invoke (raw perform)", () => {
  it("Retry-After 2: one inline wait, Success, 2 calls", async () => {
    server = await startServer([tooMany(2), ok]);
    const { result } = await invoke(sendRequest, inputs(`${server.url}/items`) as never, { crossFlowState: {} });
    expect(branchOf(result)).toBe("Success");
    expect(server.calls).toHaveLength(2);
    const data = result!.data as { attempts: Array<{ status: number; waitMs: number; waitSource: string }>; status: number };
    expect(data.status).toBe(200);
    expect(data.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(data.attempts[0]!.waitMs).toBeGreaterThanOrEqual(2000);
  });

  it("Retry-After 3600 with defer: Deferred after 1 call; its crossFlowState makes the next invocation Deferred with 0 calls", async () => {
    server = await startServer([tooMany(3600)]);
    const first = await invoke(sendRequest, inputs(`${server.url}/items`, { onLongWait: "defer" }) as never, { crossFlowState: {} });
    expect(branchOf(first.result)).toBe("Deferred");
    expect(server.calls).toHaveLength(1);
    const data = first.result!.data as { outcome: string; notBefore: string; waitMs: number; reason: string; verdict: { throttled: boolean } };
    expect(data.outcome).toBe("deferred");
    expect(Date.parse(data.notBefore)).toBeGreaterThan(Date.now() + 3500_000);
    expect(data.verdict.throttled).toBe(true);
    const state = first.result!.crossFlowState!;
    expect(state[STATE_KEY]).toBeDefined();
    // Only this component's own key goes back (Prismatic merges returned keys; others stay as they are).
    expect(Object.keys(state)).toEqual([STATE_KEY]);

    const second = await invoke(sendRequest, inputs(`${server.url}/other`, { onLongWait: "defer" }) as never, { crossFlowState: state });
    expect(branchOf(second.result)).toBe("Deferred");
    expect((second.result!.data as { attempts: unknown[] }).attempts).toHaveLength(0);
    expect(server.calls).toHaveLength(1);
  });

  it("logs one structured line per decision through context.logger", async () => {
    server = await startServer([tooMany(0), ok]);
    const logger = loggerMock();
    (logger.info as unknown as { mockClear(): void }).mockClear();
    await invoke(sendRequest, inputs(`${server.url}/items?x=1`) as never, { logger, crossFlowState: {} });
    const lines = (logger.info as unknown as { mock: { calls: unknown[][] } }).mock.calls.map((c) => String(c[0]));
    const decisions = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(decisions.map((d) => d.decision)).toEqual(["retry", "done"]);
    for (const d of decisions) expect(Object.keys(d)).toEqual(expect.arrayContaining(["provider", "method", "path", "scope", "attempt", "status", "waitMs", "waitSource", "decision", "remaining"]));
    expect(decisions[0]!.path).toBe("/items?x=…");
  });
});

describe("sendRequest through createHarness (clean and defaults run)", () => {
  it("onLongWait=fail throws a ThrottleDeferredError carrying notBefore", async () => {
    server = await startServer([tooMany(3600)]);
    const error = await harness.action("sendRequest", inputs(`${server.url}/items`, { onLongWait: "fail" }), { crossFlowState: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ThrottleDeferredError);
    expect((error as ThrottleDeferredError).notBefore).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(server.calls).toHaveLength(1);
  });

  /** Send Request in respond mode against a 429 whose Retry-After is `seconds`: its branch, status code and Retry-After. */
  async function respondTo(seconds: number): Promise<{ branch: unknown; statusCode?: number; retryAfterSeconds: number; calls: number }> {
    const api = await startServer([tooMany(seconds)]);
    server = api;
    const result = await harness.action("sendRequest", inputs(`${api.url}/items`, { onLongWait: "respond" }), { crossFlowState: {} });
    const r = result as { statusCode?: number; headers?: Record<string, string> };
    return { branch: branchOf(result), statusCode: r.statusCode, retryAfterSeconds: Number(r.headers?.["Retry-After"]), calls: api.calls.length };
  }

  it("respond mode answers Deferred with statusCode 429 and Retry-After", async () => {
    const answer = await respondTo(3600);
    expect(answer.branch).toBe("Deferred");
    expect(answer.statusCode).toBe(429);
    expect(answer.retryAfterSeconds).toBeGreaterThan(3500);
  });

  it("respond mode does not sleep past a synchronous caller's answer: a 40 s Retry-After (within Max Inline Wait) is answered 429 at once", async () => {
    const answer = await respondTo(40);
    expect(answer.branch).toBe("Deferred");
    expect(answer.statusCode).toBe(429);
    expect(answer.retryAfterSeconds).toBeGreaterThanOrEqual(39);
    expect(answer.calls).toBe(1);
  });

  it("a GitHub-style 403 with x-ratelimit-remaining 0 waits until its reset", async () => {
    server = await startServer([() => ({ status: 403, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000", "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 2), "x-ratelimit-resource": "core" }, body: { message: "API rate limit exceeded" } }), ok]);
    const result = await harness.action("sendRequest", inputs(`${server.url}/repos/o/r`, { provider: "github" }), { crossFlowState: {} });
    expect(branchOf(result)).toBe("Success");
    expect(server.calls).toHaveLength(2);
  });

  it("a GitHub-style 403 whose reset is an hour away defers", async () => {
    server = await startServer([() => ({ status: 403, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600) }, body: { message: "API rate limit exceeded" } })]);
    const result = await harness.action("sendRequest", inputs(`${server.url}/repos/o/r`, { provider: "github", onLongWait: "defer" }), { crossFlowState: {} });
    expect(branchOf(result)).toBe("Deferred");
    expect(server.calls).toHaveLength(1);
  });

  it("a POST that times out without a key is not retried", async () => {
    server = await startServer([{ status: 201, body: { id: 1 }, delayMs: 3000 }]);
    const error = await harness.action("sendRequest", inputs(`${server.url}/orders`, { method: "POST", data: '{"a":1}', timeoutSeconds: "0.3" }), { crossFlowState: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WriteOutcomeUnknownError);
    expect((error as Error).message).toMatch(/may or may not have happened/);
    expect(server.calls).toHaveLength(1);
  });

  it("a Shopify GraphQL 200 THROTTLED is retried after its computed cost wait", async () => {
    const throttled = {
      status: 200,
      body: { errors: [{ message: "Throttled", extensions: { code: "THROTTLED" } }], extensions: { cost: { requestedQueryCost: 101, throttleStatus: { maximumAvailable: 1000, currentlyAvailable: 51, restoreRate: 50 } } } },
    };
    server = await startServer([throttled, { status: 200, body: { data: { shop: { name: "s" } } } }]);
    const result = await harness.action("sendRequest", inputs(`${server.url}/admin/api/2025-01/graphql.json`, { method: "POST", provider: "shopify", data: '{"query":"{ shop { name } }"}' }), { crossFlowState: {} });
    expect(branchOf(result)).toBe("Success");
    expect(server.calls).toHaveLength(2);
    const attempts = (result as { data: { attempts: Array<{ waitMs: number; waitSource: string }> } }).data.attempts;
    expect(attempts[0]!.waitSource).toBe("extensions.cost");
    expect(attempts[0]!.waitMs).toBeGreaterThanOrEqual(1000);
  });

  it("bad input gives one clear line naming the input's label and what to enter", async () => {
    await expect(harness.action("sendRequest", inputs("https://api.example.test/x", { maxAttempts: "abc" }))).rejects.toThrow(/^Invalid Max Attempts: "abc" is not a whole number from 1 to 20\. Enter digits only, e\.g\. 10\.$/);
    await expect(harness.action("sendRequest", inputs("ht!tp://nope"))).rejects.toThrow(/^Invalid URL "ht!tp:\/\/nope": it is not a full http\(s\) URL and the connection has no Base URL\./);
    await expect(harness.action("sendRequest", inputs("https://api.example.test/x", { onLongWait: "later" }))).rejects.toThrow(/^Invalid On Long Wait: "later"\. Use one of: fail, defer, respond\.$/);
    await expect(harness.action("sendRequest", inputs("https://api.example.test/x", { backoffBaseSeconds: "2", backoffCapSeconds: "1" }))).rejects.toThrow(/^Invalid Backoff Cap \(seconds\): 1 is below Backoff Base \(seconds\) 2\./);
    await expect(harness.action("sendRequest", inputs("https://api.example.test/x", { data: '{"a":1}', formData: [{ key: "b", value: "2" }] }))).rejects.toThrow(/^Invalid Data: fill in either Data, or Form Data \/ File Data/);
    // The same checks run under invoke, which skips clean.
    await expect(invoke(sendRequest, inputs("https://api.example.test/x", { maxInlineWaitSeconds: "1e3" }) as never)).rejects.toThrow(/^Invalid Max Inline Wait \(seconds\): "1e3" is not a number of seconds from 0 to 840/);
    for (const bad of [{ maxAttempts: "abc" }, { timeoutSeconds: "-5" }, { retryWritesAfterThrottle: "maybe" }, { provider: "githubb" }]) {
      const error = await harness.action("sendRequest", inputs("https://api.example.test/x", bad)).catch((e: unknown) => e);
      expect(String((error as Error).message)).toMatch(/^Invalid (Max Attempts|Timeout \(seconds\)|Retry Writes After a Throttle|Provider): /);
      expect(String((error as Error).message)).not.toContain("\n");
    }
  });
});

describe("backoff actions", () => {
  it("checkBackoff is Blocked after a deferral, recordBackoff sets if later, clearBackoff clears", async () => {
    server = await startServer([tooMany(3600), ok]);
    const deferred = await harness.action("sendRequest", inputs(`${server.url}/items`, { onLongWait: "defer" }), { crossFlowState: {} });
    const state = (deferred as { crossFlowState: Record<string, unknown> }).crossFlowState;
    const blocked = await harness.action("checkBackoff", { url: `${server.url}/anything` }, { crossFlowState: state });
    expect(branchOf(blocked)).toBe("Blocked");
    expect((blocked as { data: { waitMs: number } }).data.waitMs).toBeGreaterThan(3500_000);

    const earlier = await harness.action("recordBackoff", { url: server.url, waitSeconds: "10" }, { crossFlowState: state });
    expect((earlier as { data: { kept: boolean } }).data.kept).toBe(false);

    const cleared = await harness.action("clearBackoff", { url: server.url }, { crossFlowState: state });
    const clearedState = (cleared as { crossFlowState: Record<string, unknown> }).crossFlowState;
    expect((cleared as { data: { cleared: number } }).data.cleared).toBeGreaterThan(0);
    expect(branchOf(await harness.action("checkBackoff", { url: server.url }, { crossFlowState: clearedState }))).toBe("Ready");

    const recorded = await harness.action("recordBackoff", { url: server.url, waitSeconds: "600" }, { crossFlowState: clearedState });
    const recordedState = (recorded as { crossFlowState: Record<string, unknown> }).crossFlowState;
    expect(branchOf(await harness.action("checkBackoff", { url: server.url }, { crossFlowState: recordedState }))).toBe("Blocked");
    // And sendRequest honours a recorded backoff without calling.
    const calls = server.calls.length;
    const gated = await harness.action("sendRequest", inputs(`${server.url}/items`, { onLongWait: "defer" }), { crossFlowState: recordedState });
    expect(branchOf(gated)).toBe("Deferred");
    expect(server.calls).toHaveLength(calls);
  });

  it("checkBackoff on a GitHub core URL is Ready while only the search budget is spent", async () => {
    const resetEpochS = Math.ceil(Date.now() / 1000) + 3600;
    server = await startServer([
      { status: 403, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(resetEpochS), "x-ratelimit-resource": "search" }, body: { message: "API rate limit exceeded for user ID 1." } },
    ]);
    const deferred = await harness.action("sendRequest", inputs(`${server.url}/search/issues?q=x`, { onLongWait: "defer", provider: "github" }), { crossFlowState: {} });
    expect(branchOf(deferred)).toBe("Deferred");
    const state = (deferred as { crossFlowState: Record<string, unknown> }).crossFlowState;
    expect(branchOf(await harness.action("checkBackoff", { url: `${server.url}/search/code?q=y`, provider: "github" }, { crossFlowState: state }))).toBe("Ready");
    expect(branchOf(await harness.action("checkBackoff", { url: `${server.url}/search/issues?q=y`, provider: "github" }, { crossFlowState: state }))).toBe("Blocked");
    expect(branchOf(await harness.action("checkBackoff", { url: `${server.url}/repos/o/r`, provider: "github" }, { crossFlowState: state }))).toBe("Ready");
  });

  it("explainResponse gives the verdict for another step's response", async () => {
    const result = await harness.action("explainResponse", { status: "429", headers: '{"Retry-After":"30"}', body: "" });
    expect(branchOf(result)).toBe("Throttled");
    const data = (result as { data: { minWaitMs: number; notBefore: string } }).data;
    expect(data.minWaitMs).toBe(30_000);
    expect(data.notBefore).toMatch(/Z$/);
    const fine = await harness.action("explainResponse", { status: "200", headers: { "x-ratelimit-remaining": "10" } });
    expect(branchOf(fine)).toBe("Not Throttled");
    // Header lines as curl -i or a browser shows them, pasted into Headers.
    const pasted = await harness.action("explainResponse", { status: "429", headers: "Retry-After: 12\r\nX-RateLimit-Remaining: 0\r\n" });
    expect(branchOf(pasted)).toBe("Throttled");
    expect((pasted as { data: { minWaitMs: number } }).data.minWaitMs).toBe(12_000);
    await expect(harness.action("explainResponse", { status: "429", headers: "Retry-After 12" })).rejects.toThrow(/Invalid Headers: .*header lines/);
  });

  it("drops an invalid stored scope with a warning instead of trusting it", async () => {
    server = await startServer([ok]);
    const logger = recordingLogger();
    const state = { [STATE_KEY]: { v: 1, scopes: { "generic|x|anon": { v: 1, notBeforeMs: "soon" } } } };
    const result = await harness.action("sendRequest", inputs(`${server.url}/items`), { crossFlowState: state, logger: logger as never });
    expect(branchOf(result)).toBe("Success");
    expect(logger.lines.some((l) => /the state of scope generic\|x\|anon was dropped/.test(l))).toBe(true);
  });
});
