/**
 * `npm start`: the built-in suite. Runs each scenario in src/lab/scenarios (virtual clock, plus
 * one on real sockets), shows a progress line, prints a table per scenario and writes
 * report/index.html with timelines and tables.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { createProgress } from "./progress";
import { markdownTable, renderHtml, summaryText, textTable, verdictOnOurs, type ScenarioReport } from "./report";
import { RedisUnavailableError, runScenario } from "./run";
import { loadScenario } from "./scenario";
import { DEFAULT_STRATEGY_NAMES, strategyByName, STRATEGY_NAMES } from "./strategies";
import type { Strategy } from "./strategies/common";

export const SUITE = [
  "seed-retry-after", "seed-no-retry-after", "seed-budget-headers", "registration-day", "fan-out-50", "graphql-cost", "hubspot-writes", "shopify-rest-bucket", "daily-quota", "seed-real-clock", "fan-out-real-clock",
  // Written for the governor (issue 7): other limiters, dialects, 1 to 50 workers, faults, with and without budget headers.
  "sliding-http-date-20-workers", "fixed-window-no-budget-headers", "sliding-faults-posts", "token-bucket-4-workers", "stripe-bucket-no-wait", "slack-tier-2",
  "concurrency-limit-50-workers", "github-primary-fixed-window", "ietf-ratelimit-50-workers", "github-secondary-posts", "one-worker-nothing-shown", "hubspot-cross-flow-100-per-10s",
  "token-bucket-no-budget-headers", "sliding-nothing-shown-10s", "ietf-concurrency-20-workers", "sliding-1s-whole-second-resets", "token-bucket-time-to-full-3-workers", "fixed-1s-50-workers-fast-answers",
  // Shared through Redis (issue 8): five processes, and a Redis outage mid-run.
  "fan-out-50-redis-5-processes", "fan-out-50-redis-outage",
];

const SCENARIO_DIR = path.join(__dirname, "scenarios");
const REPORT_DIR = path.resolve(process.cwd(), "report");

function resolveStrategy(name: string): Strategy {
  const strategy = strategyByName(name);
  if (!strategy) throw new Error(`unknown strategy ${name}`);
  return strategy;
}

const USAGE = "usage: npm start [-- --markdown]  (runs the built-in suite, prints a table per scenario, writes report/index.html; --markdown prints the tables as Markdown)";

class UsageError extends Error {}

async function main(argv: string[]): Promise<void> {
  // --markdown: the tables as Markdown (for BENCHMARKS.md) instead of padded text.
  let values: { markdown?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: { markdown: { type: "boolean" }, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message.split("\n")[0] : String(error)}; ${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const table = values.markdown ? markdownTable : textTable;
  const started = performance.now();
  const progress = createProgress();
  const reports: ScenarioReport[] = [];
  for (const [i, id] of SUITE.entries()) {
    const scenario = loadScenario(path.join(SCENARIO_DIR, `${id}.json`), STRATEGY_NAMES, DEFAULT_STRATEGY_NAMES);
    let runs;
    try {
      runs = await runScenario(scenario, resolveStrategy, (name, j, total) =>
        progress.update(`[${i + 1}/${SUITE.length}] ${scenario.name} - ${name} (${j + 1}/${total}), ${((performance.now() - started) / 1000).toFixed(0)} s`),
      );
    } catch (error) {
      if (!(error instanceof RedisUnavailableError)) throw error;
      // No Redis here: the scenario is skipped, in one line, and the suite goes on.
      progress.done();
      process.stdout.write(`\nskipped: ${error.message}\n`);
      continue;
    }
    progress.done();
    const report: ScenarioReport = { scenario, runs };
    reports.push(report);
    const heading = values.markdown ? `\n### ${scenario.name} (${scenario.clock} clock)\n\n` : `\n${scenario.name} (${scenario.clock} clock)\n`;
    process.stdout.write(`${heading}${table(runs.map((r) => r.result), scenario)}\n`);
    const verdict = verdictOnOurs(report);
    if (verdict) process.stdout.write(`${values.markdown ? "\n" : ""}${verdict}\n`);
    for (const run of runs) if (run.error) process.stdout.write(`note: ${run.result.strategy}: ${run.error}\n`);
  }
  process.stdout.write(`\n${summaryText(reports)}\n`);
  mkdirSync(REPORT_DIR, { recursive: true });
  const file = path.join(REPORT_DIR, "index.html");
  writeFileSync(file, renderHtml(reports, { command: "npm start", generatedAt: new Date().toISOString() }));
  process.stdout.write(`\nReport: ${path.relative(process.cwd(), file)} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`lab: ${error instanceof Error ? error.message : String(error)}\n`);
  // 2 for a bad command line (as bench), 1 for a failed run.
  process.exitCode = error instanceof UsageError ? 2 : 1;
});
