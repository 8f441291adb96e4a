import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, statSync } from "node:fs";
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

/**
 * The published artefact itself: webpack builds dist/index.js and dist/icon.png, Prismatic's own
 * CLI validates them offline, and the bundle (not the sources) answers through spectral's harness.
 */
describe("the built component (npm run build)", () => {
  let server: TestServer;
  beforeAll(async () => {
    await run(bin("webpack"), [], { cwd: root, maxBuffer: 32 * 1024 * 1024 });
    server = await startServer([{ status: 429, headers: { "retry-after": "1" }, body: {} }, { status: 200, body: { ok: true } }]);
  }, 180_000);
  afterAll(async () => {
    await server?.close();
  });

  it("writes dist/index.js and the icon as a PNG", () => {
    expect(statSync(join(root, "dist", "index.js")).size).toBeGreaterThan(100_000);
    expect(existsSync(join(root, "dist", "icon.png"))).toBe(true);
  });

  it("is accepted by prism components:signature, offline", async () => {
    const { stdout } = await run(bin("prism"), ["components:signature", "--skip-signature-verify"], {
      cwd: root,
      env: { ...process.env, HOME: mkdtempSync(join(tmpdir(), "prism-home-")) },
    });
    expect(stdout).toMatch(/^[0-9a-f]{40}$/m);
  }, 120_000);

  it("answers through spectral's harness from the bundle: one inline wait, then Success", async () => {
    const bundle = createRequire(__filename)(join(root, "dist", "index.js")) as { default: Parameters<typeof testing.createHarness>[0] };
    const harness = testing.createHarness(bundle.default);
    const result = await harness.action("sendRequest", { url: `${server.url}/items`, method: "GET" });
    expect(result && "branch" in result ? result.branch : undefined).toBe("Success");
    expect(server.calls).toHaveLength(2);
  }, 60_000);
});
