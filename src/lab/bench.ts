/**
 * Runs one scenario file: `npm run -s bench -- --scenario FILE [--json]`.
 * Without --json: a progress line on stderr and a table on stdout. With --json: a JSON array on
 * stdout, one object per strategy (strategy, ok, failed, deferred, calls, throttled, makespanMs,
 * idealMs, duplicates, herdPeak). Bad input (missing file, bad JSON, unknown limiter, key or option):
 * one line on stderr and exit code 2.
 */
import { parseArgs } from "node:util";
import { createProgress } from "./progress";
import { textTable, verdictOnOurs } from "./report";
import { runScenario } from "./run";
import { loadScenario, ScenarioError } from "./scenario";
import { DEFAULT_STRATEGY_NAMES, strategyByName, STRATEGY_NAMES } from "./strategies";
import type { Strategy } from "./strategies/common";

const USAGE = "usage: npm run -s bench -- --scenario FILE [--json]";

class UsageError extends Error {}

function resolveStrategy(name: string): Strategy {
  const strategy = strategyByName(name);
  if (!strategy) throw new ScenarioError(`unknown strategy ${name}`);
  return strategy;
}

async function main(argv: string[]): Promise<number> {
  let values: { scenario?: string; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: { scenario: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message.split("\n")[0] : String(error)}; ${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!values.scenario) throw new UsageError(`--scenario is required; ${USAGE}`);
  const scenario = loadScenario(values.scenario, STRATEGY_NAMES, DEFAULT_STRATEGY_NAMES);
  const progress = createProgress();
  const runs = await runScenario(scenario, resolveStrategy, (name, i, total) => progress.update(`${scenario.name}: ${name} (${i + 1}/${total})`));
  progress.done();
  const results = runs.map((r) => r.result);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  } else {
    process.stdout.write(`${scenario.name}\n${textTable(results, scenario)}\n`);
    const verdict = verdictOnOurs({ scenario, runs });
    if (verdict) process.stdout.write(`${verdict}\n`);
  }
  for (const run of runs) if (run.error) process.stderr.write(`note: ${run.result.strategy}: ${run.error}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const known = error instanceof ScenarioError || error instanceof UsageError;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`bench: ${known ? message : `unexpected error: ${message}`}\n`);
    process.exitCode = 2;
  },
);
