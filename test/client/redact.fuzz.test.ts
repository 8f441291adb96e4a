/**
 * Runs the redactor fuzz target (src/lab/fuzz/targets/redactor.ts) for a few seeds, and once
 * against a weaker redactor to show the target can fail.
 */
import { describe, expect, it } from "vitest";
import { run } from "../../src/lab/fuzz/targets/redactor";

/** The redaction this repository had before (exact, encodeURIComponent and base64 forms, case-sensitive). */
function naiveRedactor(secrets: readonly string[]) {
  const needles = secrets.flatMap((s) => [s, encodeURIComponent(s), Buffer.from(s).toString("base64")]);
  return { text: (value: string) => needles.reduce((out, n) => out.split(n).join("[redacted]"), value) };
}

describe("redactor fuzz target", () => {
  for (const seed of [1, 2]) {
    it(`seed ${seed}: no encoding of any secret survives, nothing throws, JSON still parses`, () => {
      const report = run(seed, 400);
      expect(report.examples).toEqual([]);
      expect(report).toMatchObject({ inputs: 400, throws: 0, violations: 0 });
    });
  }

  it("finds violations in a redactor that only knows three exact forms", () => {
    const report = run(1, 200, naiveRedactor);
    expect(report.violations).toBeGreaterThan(100);
    expect(report.examples.length).toBeGreaterThan(0);
  });
});
