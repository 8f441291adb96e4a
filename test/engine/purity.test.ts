import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/** The eslint rule that keeps src/engine pure must fire on platform imports and globals. */
describe("engine purity rule", () => {
  const eslint = new ESLint({ cwd: process.cwd() });

  it.each([
    ['import { request } from "node:http";', "no-restricted-imports"],
    ['import axios from "axios";', "no-restricted-imports"],
    ['import { createClient } from "@prismatic-io/spectral";', "no-restricted-imports"],
    ["export const nowMs = Date.now();", "no-restricted-properties"],
    ["export const draw = Math.random();", "no-restricted-properties"],
    ["setTimeout(() => undefined, 1);", "no-restricted-globals"],
  ])("rejects %s in src/engine", async (code, ruleId) => {
    const [result] = await eslint.lintText(code, { filePath: "src/engine/probe.ts" });
    expect(result!.messages.map((m) => m.ruleId)).toContain(ruleId);
  });

  it("allows the same import outside the engine", async () => {
    const [result] = await eslint.lintText('import { request } from "node:http";\nexport { request };\n', { filePath: "src/client/probe.ts" });
    expect(result!.messages.filter((m) => m.ruleId === "no-restricted-imports")).toEqual([]);
  });

  it("finds the engine itself clean", async () => {
    const results = await eslint.lintFiles(["src/engine/**/*.ts"]);
    const problems = results.flatMap((r) => r.messages.map((m) => `${r.filePath}:${m.line} ${m.ruleId}: ${m.message}`));
    expect(problems).toEqual([]);
  });
});
