/**
 * `npm start`: the built-in suite. Runs each scenario in src/lab/scenarios (virtual clock, plus
 * one on real sockets), shows a progress line, prints a table per scenario and writes
 * report/index.html with timelines and tables.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { createProgress } from "./progress";
import { markdownTable, renderHtml, textTable, verdictOnOurs, type ScenarioReport } from "./report";
import { runScenario } from "./run";
import { loadScenario } from "./scenario";
import { strategyByName, STRATEGY_NAMES } from "./strategies";
import type { Strategy } from "./strategies/common";

export const SUITE = ["seed-retry-after", "seed-no-retry-after", "seed-budget-headers", "registration-day", "fan-out-50", "graphql-cost", "hubspot-writes", "shopify-rest-bucket", "daily-quota", "seed-real-clock", "fan-out-real-clock"];

const SCENARIO_DIR = path.join(__dirname, "scenarios");
const REPORT_DIR = path.resolve(process.cwd(), "report");

function resolveStrategy(name: string): Strategy {
  const strategy = strategyByName(name);
  if (!strategy) throw new Error(`unknown strategy ${name}`);
  return strategy;
}

async function main(): Promise<void> {
  // --markdown: the tables as Markdown (for BENCHMARKS.md) instead of padded text.
  const { values } = parseArgs({ options: { markdown: { type: "boolean" } }, strict: true });
  const table = values.markdown ? markdownTable : textTable;
  const started = performance.now();
  const progress = createProgress();
  const reports: ScenarioReport[] = [];
  for (const [i, id] of SUITE.entries()) {
    const scenario = loadScenario(path.join(SCENARIO_DIR, `${id}.json`), STRATEGY_NAMES);
    const runs = await runScenario(scenario, resolveStrategy, (name, j, total) =>
      progress.update(`[${i + 1}/${SUITE.length}] ${scenario.name} - ${name} (${j + 1}/${total}), ${((performance.now() - started) / 1000).toFixed(0)} s`),
    );
    progress.done();
    const report: ScenarioReport = { scenario, runs };
    reports.push(report);
    const heading = values.markdown ? `\n### ${scenario.name} (${scenario.clock} clock)\n\n` : `\n${scenario.name} (${scenario.clock} clock)\n`;
    process.stdout.write(`${heading}${table(runs.map((r) => r.result), scenario.workload.jobs)}\n`);
    const verdict = verdictOnOurs(report);
    if (verdict) process.stdout.write(`${values.markdown ? "\n" : ""}${verdict}\n`);
    for (const run of runs) if (run.error) process.stdout.write(`note: ${run.result.strategy}: ${run.error}\n`);
  }
  mkdirSync(REPORT_DIR, { recursive: true });
  const file = path.join(REPORT_DIR, "index.html");
  writeFileSync(file, renderHtml(reports, { command: "npm start", generatedAt: new Date().toISOString() }));
  process.stdout.write(`\nReport: ${path.relative(process.cwd(), file)} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`lab: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
