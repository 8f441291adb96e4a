import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { classify } from "../../src/engine";
import type { ClassifyInput } from "../../src/engine";

/** Every fixture row is a documented provider response with the verdict it must produce. */
export const FIXTURE_NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const dir = join(__dirname, "..", "fixtures");

interface FixtureRow extends ClassifyInput {
  name: string;
  doc: string;
  expect: Record<string, unknown>;
}

const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
const rows = files.flatMap((file) =>
  (JSON.parse(readFileSync(join(dir, file), "utf8")) as FixtureRow[]).map((row) => ({ file, row })),
);

describe("documented provider responses", () => {
  it("has at least 40 documented responses, each citing its doc URL", () => {
    expect(rows.length).toBeGreaterThanOrEqual(40);
    for (const { file, row } of rows) {
      expect(row.doc, `${file}: ${row.name}`).toMatch(/^https:\/\//);
      expect(row.expect, `${file}: ${row.name}`).toBeTypeOf("object");
    }
  });

  it.each(rows.map(({ file, row }) => [`${file}: ${row.name}`, row] as const))("%s", (_label, row) => {
    const verdict = classify(row, { nowMs: FIXTURE_NOW_MS });
    expect(verdict).toMatchObject(row.expect);
  });
});
