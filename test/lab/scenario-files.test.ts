/**
 * Every scenario committed under src/lab/scenarios (the suite's files and the probes) loads under
 * the schema docs/lab.md documents, each probe under a name of its own, and docs/lab.md counts the
 * probes there are. A malformed file otherwise shows only as one line of error in a sweep, two
 * probes of one name read as one row in BENCHMARKS.md, and a count the docs keep by hand drifts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadScenario } from "../../src/lab/scenario";
import { DEFAULT_STRATEGY_NAMES, STRATEGY_NAMES } from "../../src/lab/strategies";

const root = join(__dirname, "..", "..");
const scenariosDir = join(root, "src", "lab", "scenarios");
const probesDir = join(scenariosDir, "probes");

function jsonFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort();
}

describe("the committed scenario files", () => {
  it.each(jsonFiles(scenariosDir))("the suite's %s loads", (name) => {
    expect(() => loadScenario(join(scenariosDir, name), STRATEGY_NAMES, DEFAULT_STRATEGY_NAMES)).not.toThrow();
  });

  it("every probe loads, each under a name no other probe has", () => {
    const names = new Map<string, string>();
    for (const file of jsonFiles(probesDir)) {
      const scenario = loadScenario(join(probesDir, file), STRATEGY_NAMES, DEFAULT_STRATEGY_NAMES);
      expect(names.get(scenario.name), `${file} is named as ${names.get(scenario.name)} is`).toBeUndefined();
      names.set(scenario.name, file);
    }
    expect(names.size).toBeGreaterThan(0);
  });

  it("docs/lab.md counts the probes there are", () => {
    const docs = readFileSync(join(root, "docs", "lab.md"), "utf8");
    const counted = /`scenarios\/probes\/\*\.json`: (\d+) scenarios/.exec(docs);
    expect(counted, "docs/lab.md no longer says how many probes there are").not.toBeNull();
    expect(Number(counted![1])).toBe(jsonFiles(probesDir).length);
  });
});
