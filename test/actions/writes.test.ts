/**
 * Issue 10 item 1: a write the API refused with a throttle is repeated after the wait; a write
 * whose outcome is unknown (timeout, 5xx) is not, unless it carries an Idempotency Key.
 */
import { createHarness } from "@prismatic-io/spectral/dist/testing";
import { afterEach, describe, expect, it } from "vitest";
import { WriteOutcomeUnknownError } from "../../src/client";
import component from "../../src/index";
import { startServer, type TestServer } from "../helpers/server";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const harness = createHarness(component);
const created = { status: 201, body: { id: "order_1" } };
const post = (url: string, extra: Record<string, unknown> = {}) => ({ url, method: "POST", data: '{"sku":"W-1"}', ...extra });
const branchOf = (result: unknown) => (result && typeof result === "object" && "branch" in result ? String((result as { branch: unknown }).branch) : undefined);

describe("Send Request: writes after a throttle", () => {
  it("a POST answered 429 Retry-After: 1, then 201, succeeds in 2 calls, after at least 1 s", async () => {
    server = await startServer([{ status: 429, headers: { "retry-after": "1" }, body: { error: "slow down" } }, created]);
    const result = await harness.action("sendRequest", post(`${server.url}/orders`), { crossFlowState: {} });
    expect(branchOf(result)).toBe("Success");
    expect(server.calls).toHaveLength(2);
    expect(server.calls.map((c) => c.body)).toEqual(['{"sku":"W-1"}', '{"sku":"W-1"}']);
    const attempts = (result as { data: { attempts: Array<{ status: number; waitMs: number }> } }).data.attempts;
    expect(attempts.map((a) => a.status)).toEqual([429, 201]);
    expect(attempts[0]!.waitMs).toBeGreaterThanOrEqual(1000);
  });

  it("with Retry Writes After a Throttle off, the same POST is not repeated (1 call) and the step fails", async () => {
    server = await startServer([{ status: 429, headers: { "retry-after": "1" } }, created]);
    const error = await harness.action("sendRequest", post(`${server.url}/orders`, { retryWritesAfterThrottle: "false" }), { crossFlowState: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/retrying writes after a throttle is turned off/);
    expect((error as Error).message).toMatch(/fill in Idempotency Key/);
    expect((error as Error).message).not.toMatch(/idempotencyKey/);
    expect(server.calls).toHaveLength(1);
  });

  it("a POST that times out without a key is not repeated (1 call); the error names the Idempotency Key input", async () => {
    server = await startServer([{ ...created, delayMs: 3000 }]);
    const error = await harness.action("sendRequest", post(`${server.url}/orders`, { timeoutSeconds: "0.3" }), { crossFlowState: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WriteOutcomeUnknownError);
    expect((error as Error).message).toMatch(/may or may not have happened/);
    expect((error as Error).message).toMatch(/fill in Idempotency Key/);
    expect(server.calls).toHaveLength(1);
  });

  it("a POST answered 503 with Retry-After is not repeated without a key: a 5xx may have been processed", async () => {
    server = await startServer([{ status: 503, headers: { "retry-after": "1" } }, created]);
    const error = await harness.action("sendRequest", post(`${server.url}/orders`), { crossFlowState: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(server.calls).toHaveLength(1);
  });

  it("the same 503 is repeated when the POST has an Idempotency Key, with the same key on both calls", async () => {
    server = await startServer([{ status: 503, headers: { "retry-after": "1" } }, created]);
    const result = await harness.action("sendRequest", post(`${server.url}/orders`, { idempotencyKey: "order-1042" }), { crossFlowState: {} });
    expect(branchOf(result)).toBe("Success");
    expect(server.calls.map((c) => c.headers["idempotency-key"])).toEqual(["order-1042", "order-1042"]);
  });
});
