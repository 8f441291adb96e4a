/**
 * Issue 10 item 2: Check, Record and Clear Backoff act on a scope that includes a hash of the
 * credential. Without the connection they act on another scope; they must say so, not answer a
 * bare Ready as if nothing were recorded.
 */
import { createConnection, createHarness } from "@prismatic-io/spectral/dist/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerToken } from "../../src/connections";
import component from "../../src/index";
import { recordingLogger, startServer, type TestServer } from "../helpers/server";

const TOKEN = "tok-9f8e7d6c5b4a";
const harness = createHarness(component);
const connection = createConnection(bearerToken, { token: TOKEN });
let server: TestServer;
let deferredState: Record<string, unknown>;
let credentialScope: string;

interface BackoffData {
  scope: string;
  warning: string | null;
  credentialScopes: Array<{ scope: string; notBefore: string }>;
  reason?: string;
  ready?: boolean;
}
const dataOf = (result: unknown) => (result as { data: BackoffData }).data;
const branchOf = (result: unknown) => (result && typeof result === "object" && "branch" in result ? String((result as { branch: unknown }).branch) : undefined);

beforeAll(async () => {
  server = await startServer([{ status: 429, headers: { "retry-after": "3600" }, body: { error: "hourly limit" } }]);
  const deferred = await harness.action("sendRequest", { connection, url: `${server.url}/items`, method: "GET", onLongWait: "defer" }, { crossFlowState: {} });
  expect(branchOf(deferred)).toBe("Deferred");
  deferredState = (deferred as { crossFlowState: Record<string, unknown> }).crossFlowState;
  credentialScope = (deferred as { data: { scope: string } }).data.scope;
});
afterAll(async () => {
  await server.close();
});

describe("backoff steps and the credential in the scope", () => {
  it("the deferral was recorded under a credential scope that holds a hash, never the token", () => {
    expect(credentialScope).toMatch(/^generic\|127\.0\.0\.1:\d+\|[0-9a-f]{16}$/);
    expect(JSON.stringify(deferredState)).not.toContain(TOKEN);
  });

  it("Check Backoff WITH the connection is Blocked on that scope, with no warning", async () => {
    const result = await harness.action("checkBackoff", { connection, url: `${server.url}/other` }, { crossFlowState: deferredState });
    expect(branchOf(result)).toBe("Blocked");
    expect(dataOf(result).scope).toBe(credentialScope);
    expect(dataOf(result).warning).toBeNull();
  });

  it("Check Backoff WITHOUT the connection says the host has waits recorded under a credential (not a bare Ready)", async () => {
    const logger = recordingLogger();
    const result = await harness.action("checkBackoff", { url: `${server.url}/other` }, { crossFlowState: deferredState, logger: logger as never });
    const data = dataOf(result);
    expect(branchOf(result)).toBe("Ready");
    expect(data.scope).toMatch(/\|anon$/);
    expect(data.warning).toMatch(/No connection was given, so this step checked the no-credential scope, but 1 scope\(s\) for this host were recorded under a credential, 1 of them with a not_before ahead/);
    expect(data.reason).toMatch(/^Ready for this scope only/);
    expect(data.credentialScopes).toEqual([{ scope: credentialScope, notBefore: expect.stringMatching(/Z$/), breaker: "closed" }]);
    expect(logger.lines.some((l) => l.includes("recorded under a credential"))).toBe(true);
  });

  it("Check Backoff without the connection on another host has nothing to warn about", async () => {
    const result = await harness.action("checkBackoff", { url: "https://api.elsewhere.test/x" }, { crossFlowState: deferredState });
    expect(branchOf(result)).toBe("Ready");
    expect(dataOf(result).warning).toBeNull();
    expect(dataOf(result).reason).toBe("No not_before ahead for this scope, and its budget allows a request now.");
  });

  it("Record Backoff without the connection records into the no-credential scope and warns", async () => {
    const result = await harness.action("recordBackoff", { url: server.url, waitSeconds: "60" }, { crossFlowState: deferredState });
    expect(dataOf(result).scope).toMatch(/\|anon$/);
    expect(dataOf(result).warning).toMatch(/this step recorded into the no-credential scope/);
  });

  it("Clear Backoff without the connection leaves the credential scope in place and says so; with it, clears it", async () => {
    const without = await harness.action("clearBackoff", { url: server.url }, { crossFlowState: deferredState });
    expect((without as { data: { cleared: number } }).data.cleared).toBe(0);
    expect(dataOf(without).warning).toMatch(/this step cleared the no-credential scope/);
    const stillBlocked = await harness.action("checkBackoff", { connection, url: server.url }, { crossFlowState: (without as { crossFlowState: Record<string, unknown> }).crossFlowState });
    expect(branchOf(stillBlocked)).toBe("Blocked");

    const withIt = await harness.action("clearBackoff", { connection, url: server.url }, { crossFlowState: deferredState });
    expect((withIt as { data: { clearedScopes: string[] } }).data.clearedScopes).toEqual([credentialScope]);
    expect(dataOf(withIt).warning).toBeNull();
  });

  it("a Scope Key needs no connection and gets no warning", async () => {
    const result = await harness.action("checkBackoff", { scopeKey: credentialScope }, { crossFlowState: deferredState });
    expect(branchOf(result)).toBe("Blocked");
    expect(dataOf(result).warning).toBeNull();
  });
});
