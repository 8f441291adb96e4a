/**
 * What Prismatic's designer reads from the component (src/index.ts default export, as spectral
 * converted it for publishing): example payloads, output schemas, perform safety, input help,
 * the Provider picklist and error wording. Output schemas are checked with ajv against the
 * examples AND against what the actions really return from a loopback server.
 */
import { createConnection, createHarness } from "@prismatic-io/spectral/dist/testing";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearerToken } from "../src/connections";
import { dialects } from "../src/engine";
import component from "../src/index";
import { parsePolicy } from "../src/inputs";
import { startServer, type TestServer } from "./helpers/server";

const actions = component.actions;
const harness = createHarness(component);
const ajv = new Ajv({ strict: true, allErrors: true });
addFormats(ajv);

/** Why each action is safe or not to run inline (see the comment on each action). */
const EXPECTED_SAFETY: Record<string, string> = { sendRequest: "NOT_ALLOWED", sendBatch: "NOT_ALLOWED", takeParked: "NOT_ALLOWED", recordBackoff: "NOT_ALLOWED", clearBackoff: "NOT_ALLOWED", explainResponse: "SAFE", checkBackoff: "SAFE" };

function schemaFor(actionKey: string, branch: string | undefined): object {
  const output = actions[actionKey]!.outputSchema;
  if (!output) throw new Error(`${actionKey} has no outputSchema`);
  if (output.type === "actionOutput") return JSON.parse(output.schema) as object;
  const found = output.branchSchemas.find((b) => b.name === branch);
  if (!found) throw new Error(`${actionKey} has no schema for branch ${String(branch)}`);
  return JSON.parse(found.schema) as object;
}

function expectValid(actionKey: string, branch: string | undefined, data: unknown) {
  const validate = ajv.compile(schemaFor(actionKey, branch));
  const ok = validate(data);
  expect(ok, `${actionKey}/${branch ?? "-"}: ${ajv.errorsText(validate.errors)}`).toBe(true);
}

describe("every action, as the designer sees it", () => {
  it("has every action, each with a performSafety chosen on purpose", () => {
    expect(Object.keys(actions).sort()).toEqual(Object.keys(EXPECTED_SAFETY).sort());
    for (const [key, action] of Object.entries(actions)) expect(action.performSafety, key).toBe(EXPECTED_SAFETY[key]);
  });

  it("has an examplePayload whose data matches its output schema", () => {
    for (const [key, action] of Object.entries(actions)) {
      const example = action.examplePayload as { branch?: string; data?: unknown } | undefined;
      expect(example?.data, `${key} examplePayload`).toBeDefined();
      if (action.allowsBranching) expect(action.staticBranchNames).toContain(example!.branch);
      expectValid(key, example!.branch, example!.data);
    }
  });

  it("has a branching output schema for every static branch of a branching action, an action output schema otherwise", () => {
    for (const [key, action] of Object.entries(actions)) {
      const output = action.outputSchema!;
      if (action.allowsBranching) {
        expect(output.type, key).toBe("branchingOutput");
        if (output.type === "branchingOutput") expect(output.branchSchemas.map((b) => b.name).sort()).toEqual([...action.staticBranchNames!].sort());
      } else {
        expect(output.type, key).toBe("actionOutput");
      }
    }
  });

  it("schemas are strict enough to reject a wrong shape (so the checks above can fail)", () => {
    const deferred = (actions.sendRequest!.outputSchema as { branchSchemas: Array<{ name: string; schema: string }> }).branchSchemas.find((b) => b.name === "Deferred")!;
    const example = JSON.parse(deferred.schema) as { examples: Array<Record<string, unknown>> };
    expect(ajv.validate(schemaFor("sendRequest", "Success"), example.examples[0])).toBe(false);
    expect(ajv.validate(schemaFor("checkBackoff", "Ready"), { ready: true })).toBe(false);
    expect(ajv.validate(schemaFor("recordBackoff", undefined), { ...(actions.recordBackoff!.examplePayload as { data: object }).data, requested: "tomorrow" })).toBe(false);
  });

  it("gives every branch schema a valid example (the examples the designer can show per branch)", () => {
    for (const [key, action] of Object.entries(actions)) {
      const branches = action.allowsBranching ? action.staticBranchNames! : [undefined];
      for (const branch of branches) {
        const schema = schemaFor(key, branch) as { examples?: unknown[] };
        expect(schema.examples?.length, `${key}/${branch ?? "-"} examples`).toBeGreaterThan(0);
        for (const example of schema.examples!) expectValid(key, branch, example);
      }
    }
  });

  it("explains the backoff steps' scope in their directions and connection comments", () => {
    for (const key of ["checkBackoff", "recordBackoff", "clearBackoff"]) {
      expect(actions[key]!.display.directions, key).toMatch(/same Connection \(or the same Scope Key\)/);
      const connectionInput = actions[key]!.inputs.find((i) => i.key === "connection")!;
      expect(connectionInput.comments).toMatch(/same connection as the Send Request steps/);
      expect(connectionInput.comments).toMatch(/hash of the connection's credential/);
    }
  });
});

describe("inputs", () => {
  const textTypes = new Set(["string", "code", "data", "text", "password"]);

  it("every input of every action has a comment; every text input an example or a placeholder", () => {
    for (const [key, action] of Object.entries(actions)) {
      for (const input of action.inputs) {
        expect(input.comments?.length ?? 0, `${key}.${input.key} comments`).toBeGreaterThan(20);
        if (textTypes.has(input.type) && !input.model) expect(Boolean(input.example || input.placeholder), `${key}.${input.key} example/placeholder`).toBe(true);
      }
    }
  });

  it("every connection field has a comment", () => {
    for (const connection of component.connections ?? []) {
      for (const input of connection.inputs) expect(input.comments?.length ?? 0, `${connection.key}.${input.key}`).toBeGreaterThan(10);
    }
  });

  it("Send Request has Raw Request's Form Data, File Data, File Data File Names and Debug Request, and Retry Writes After a Throttle on by default", () => {
    const byKey = new Map(actions.sendRequest!.inputs.map((i) => [i.key, i]));
    for (const key of ["formData", "fileData", "fileDataFileNames"]) expect(byKey.get(key)?.collection, key).toBe("keyvaluelist");
    expect(byKey.get("debugRequest")).toMatchObject({ label: "Debug Request", type: "boolean", default: "false" });
    expect(byKey.get("retryWritesAfterThrottle")).toMatchObject({ label: "Retry Writes After a Throttle", type: "boolean", default: "true" });
    expect(byKey.get("retryWritesAfterThrottle")!.comments).toMatch(/refused the request without doing it/);
    expect(byKey.get("retryWritesAfterThrottle")!.comments).toMatch(/Timeouts, dropped connections and 5xx errors stay unsafe/);
  });

  it("times are in seconds everywhere, and Timeout defaults to 30 s per attempt", () => {
    for (const [key, action] of Object.entries(actions)) {
      for (const input of action.inputs) {
        expect(`${input.label} ${input.comments ?? ""}`, `${key}.${input.key}`).not.toMatch(/\(ms\)|milliseconds/);
        if (/timeout|wait|total|backoff/i.test(input.key) && input.key !== "onLongWait") expect(input.label, `${key}.${input.key}`).toMatch(/\(seconds\)$/);
      }
    }
    const timeout = actions.sendRequest!.inputs.find((i) => i.key === "timeoutSeconds")!;
    expect(timeout).toMatchObject({ label: "Timeout (seconds)", default: "30" });
    expect(timeout.comments).toMatch(/per attempt/);
    expect(parsePolicy({}).timeoutMs).toBe(30_000);
    expect(parsePolicy({ backoffBaseSeconds: "0.5", timeoutSeconds: "2.5" })).toMatchObject({ backoffBaseMs: 500, timeoutMs: 2500 });
  });

  it("the Provider picklist shows each dialect's label, with its id as the value", () => {
    const provider = actions.sendRequest!.inputs.find((i) => i.key === "provider")!;
    const model = provider.model!;
    expect(model[0]).toEqual({ label: "Automatic (by the URL's host)", value: "auto" });
    expect(model).toHaveLength(dialects.length + 1);
    for (const dialect of dialects) expect(model).toContainEqual({ label: dialect.label, value: dialect.id });
    for (const choice of model) expect(choice.label).not.toBe(choice.value);
  });

  it("explains not_before, scope, breaker and probe where they appear", () => {
    const comments = new Map(actions.sendRequest!.inputs.map((i) => [i.key, i.comments ?? ""]));
    expect(comments.get("onLongWait")).toMatch(/A not_before is the time before which no request/);
    expect(comments.get("scopeKey")).toMatch(/The scope is the bucket a wait is recorded under/);
    expect(comments.get("breakerThreshold")).toMatch(/breaker is open, no request goes out .* a single probe \(one trial request\)/);
  });

  it("bad input: the error names the input's LABEL and what to enter, never its key", async () => {
    const badValues: Record<string, unknown> = {
      method: "FETCH",
      data: "{oops",
      formData: "not a list",
      queryParams: 42,
      headers: 42,
      responseType: "xml",
      provider: "githubb",
      timeoutSeconds: "-5",
      maxAttempts: "abc",
      maxInlineWaitSeconds: "1e3",
      maxTotalSeconds: "0",
      onLongWait: "later",
      retryWritesAfterThrottle: "maybe",
      jitter: "lots",
      backoffBaseSeconds: "fast",
      backoffCapSeconds: "99999",
      budgetThreshold: "-1",
      breakerThreshold: "0",
      debugRequest: "sometimes",
    };
    const labels = new Map(actions.sendRequest!.inputs.map((i) => [i.key, i.label]));
    for (const [key, bad] of Object.entries(badValues)) {
      const error = await harness.action("sendRequest", { url: "https://api.example.test/x", method: "GET", [key]: bad }).catch((e: unknown) => e);
      const message = String((error as Error).message);
      expect(message, key).toMatch(new RegExp(`^Invalid ${labels.get(key)!.replace(/[()]/g, "\\$&")}: `));
      expect(message, key).not.toContain("\n");
      if (/[A-Z]/.test(key)) expect(message, key).not.toContain(key);
    }
  });
});

describe("real outputs match the output schemas", () => {
  let server: TestServer;
  const connection = createConnection(bearerToken, { token: "tok-metadata-1234" });
  beforeAll(async () => {
    server = await startServer([]);
  });
  afterAll(async () => {
    await server.close();
  });
  const run = async (key: string, params: Record<string, unknown>, crossFlowState: Record<string, unknown> = {}) => {
    const result = (await harness.action(key, params, { crossFlowState })) as { branch?: string; data: unknown; crossFlowState?: Record<string, unknown> };
    expectValid(key, result.branch, result.data);
    return result;
  };

  it("Send Request Success and Deferred, Check Backoff Blocked and Ready (with its warning), Record and Clear Backoff", async () => {
    server.script([{ status: 429, headers: { "retry-after": "0" } }, { status: 200, headers: { "x-ratelimit-remaining": "5", "x-ratelimit-limit": "10" }, body: { id: 1 } }]);
    expect((await run("sendRequest", { connection, url: `${server.url}/a`, method: "GET" })).branch).toBe("Success");
    server.script([{ status: 429, headers: { "retry-after": "3600" } }]);
    const deferred = await run("sendRequest", { connection, url: `${server.url}/a`, method: "GET", onLongWait: "defer" });
    expect(deferred.branch).toBe("Deferred");
    const state = deferred.crossFlowState!;
    expect((await run("checkBackoff", { connection, url: server.url }, state)).branch).toBe("Blocked");
    const ready = await run("checkBackoff", { url: server.url }, state);
    expect(ready.branch).toBe("Ready");
    expect((ready.data as { warning: string | null }).warning).not.toBeNull();
    await run("recordBackoff", { connection, url: server.url, waitSeconds: "1.5" }, state);
    await run("clearBackoff", { connection, url: server.url }, state);
  });

  it("Explain Throttle Response, both branches", async () => {
    expect((await run("explainResponse", { status: "429", headers: '{"Retry-After":"30"}' })).branch).toBe("Throttled");
    expect((await run("explainResponse", { status: "200", headers: { "x-ratelimit-remaining": "10", "x-ratelimit-limit": "100" } })).branch).toBe("Not Throttled");
  });
});
