import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { testing } from "@prismatic-io/spectral";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "./helpers/server";

const run = promisify(execFile);
const root = join(__dirname, "..");
const bin = (name: string) => join(root, "node_modules", ".bin", name);
// The build goes to a scratch project, never to the checkout's dist/: running the tests must not
// replace a bundle someone built to publish. prism looks for the nearest package.json and its
// dist/ folder, so the scratch project has both.
const project = mkdtempSync(join(tmpdir(), "component-build-"));
const dist = join(project, "dist");

/**
 * The published artefact itself: webpack builds dist/index.js and dist/icon.png, Prismatic's own
 * CLI validates them offline, and the bundle (not the sources) answers through spectral's harness.
 */
describe("the built component (npm run build)", () => {
  let server: TestServer;
  beforeAll(async () => {
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "component-build-check", private: true }));
    await run(bin("webpack"), ["--output-path", dist], { cwd: root, maxBuffer: 32 * 1024 * 1024 });
    server = await startServer([{ status: 429, headers: { "retry-after": "1" }, body: {} }, { status: 200, body: { ok: true } }]);
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    rmSync(project, { recursive: true, force: true });
  });

  it("writes dist/index.js and the icon as a PNG", () => {
    expect(statSync(join(dist, "index.js")).size).toBeGreaterThan(100_000);
    expect(readFileSync(join(dist, "icon.png")).subarray(1, 4).toString("latin1")).toBe("PNG");
  });

  it("holds one copy of axios: spectral's require and our import resolve to the same file", () => {
    // webpack names each bundled module by its path in a comment; two axios builds would show
    // both node_modules/axios/lib/axios.js (ESM) and node_modules/axios/dist/node/axios.cjs.
    const bundle = readFileSync(join(dist, "index.js"), "utf8");
    const axiosFiles = new Set(bundle.match(/node_modules\/axios\/[\w./-]+/g) ?? []);
    expect([...axiosFiles]).toEqual(["node_modules/axios/dist/node/axios.cjs"]);
  });

  it("is accepted by prism components:signature, offline", async () => {
    const { stdout } = await run(bin("prism"), ["components:signature", "--skip-signature-verify"], {
      cwd: project,
      env: { ...process.env, HOME: mkdtempSync(join(tmpdir(), "prism-home-")) },
    });
    expect(stdout).toMatch(/^[0-9a-f]{40}$/m);
  }, 120_000);

  it("carries what the designer shows: examplePayload and performSafety on every action, outputSchema on every branching one, a comment on every Send Request input, an example or placeholder on its text inputs, labelled picklists", () => {
    type BundleInput = { key: string; type: string; comments?: string; example?: string; placeholder?: string; model?: Array<{ label: string; value: string }> };
    type BundleAction = { examplePayload?: unknown; performSafety?: string; outputSchema?: unknown; allowsBranching?: boolean; inputs: BundleInput[] };
    const bundle = createRequire(__filename)(join(dist, "index.js")) as { default: { actions: Record<string, BundleAction> } };
    const actions = Object.entries(bundle.default.actions);
    expect(actions.length).toBeGreaterThanOrEqual(7);
    for (const [key, action] of actions) {
      expect(action.examplePayload, key).toBeDefined();
      expect(["SAFE", "NOT_ALLOWED"], key).toContain(action.performSafety);
      if (action.allowsBranching) expect(action.outputSchema, key).toBeDefined();
    }
    for (const input of bundle.default.actions.sendRequest!.inputs) {
      expect(input.comments, input.key).toBeTruthy();
      if (input.type === "string" && !input.model) expect(input.example ?? input.placeholder, input.key).toBeTruthy();
      for (const option of input.model ?? []) expect(option.label, `${input.key}: ${option.value}`).not.toBe("");
    }
    const provider = bundle.default.actions.sendRequest!.inputs.find((input) => input.key === "provider")!;
    expect(provider.model!.find((option) => option.value === "github")?.label).toBe("GitHub REST and GraphQL");
  });

  it("answers through spectral's harness from the bundle: one inline wait, then Success", async () => {
    const bundle = createRequire(__filename)(join(dist, "index.js")) as { default: Parameters<typeof testing.createHarness>[0] };
    const harness = testing.createHarness(bundle.default);
    const result = await harness.action("sendRequest", { url: `${server.url}/items`, method: "GET" });
    expect(result && "branch" in result ? result.branch : undefined).toBe("Success");
    expect(server.calls).toHaveLength(2);
  }, 60_000);
});
