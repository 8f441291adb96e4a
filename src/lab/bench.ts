/**
 * Runs scenario files beside every strategy they name:
 *
 *   npm run -s bench -- --scenario FILE|DIR [--scenario FILE|DIR ...] [--json | --markdown]
 *
 * A directory stands for the .json files in it (sorted by name). Every file is read and checked
 * before any runs, so that a typo in the fortieth file does not cost the thirty-nine runs before it.
 * Without --json: a progress line on stderr and a table per scenario on stdout (Markdown with
 * --markdown), each followed by ours's verdict against the goals; with more than one scenario, a
 * sweep table (one row per scenario: ours's figures and verdict, the peers that met every goal)
 * and the count of scenarios where ours met every goal. With --json: for one scenario a JSON array,
 * one object per strategy (strategy, ok, failed, deferred, calls, throttled, makespanMs, idealMs,
 * duplicates, herdPeak); for several, an array of { file, name, results } with that array as
 * results. Bad input (a missing file, bad JSON, an unknown limiter, key or option): one line on
 * stderr and exit code 2.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createProgress } from "./progress";
import { markdownTable, sweepTable, textTable, verdictOnOurs, type ScenarioReport } from "./report";
import { runScenario } from "./run";
import { loadScenario, ScenarioError } from "./scenario";
import { DEFAULT_STRATEGY_NAMES, strategyByName, STRATEGY_NAMES } from "./strategies";
import type { Strategy } from "./strategies/common";
import type { Scenario } from "./types";

const USAGE = "usage: npm run -s bench -- --scenario FILE|DIR [--scenario FILE|DIR ...] [--json | --markdown]";

class UsageError extends Error {}

function resolveStrategy(name: string): Strategy {
  const strategy = strategyByName(name);
  if (!strategy) throw new ScenarioError(`unknown strategy ${name}`);
  return strategy;
}

/** The scenario files an argument names: the file itself, or a directory's .json files by name. */
function filesOf(argument: string): string[] {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(argument).isDirectory();
  } catch {
    return [argument]; // loadScenario says it cannot be read, in one line
  }
  if (!isDirectory) return [argument];
  const files = readdirSync(argument).filter((name) => name.endsWith(".json")).sort().map((name) => join(argument, name));
  if (files.length === 0) throw new ScenarioError(`directory ${argument} holds no .json scenario files`);
  return files;
}

interface Options {
  files: string[];
  json: boolean;
  markdown: boolean;
}

function parseOptions(argv: string[]): Options | null {
  let values: { scenario?: string[]; json?: boolean; markdown?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { scenario: { type: "string", multiple: true }, json: { type: "boolean" }, markdown: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message.split("\n")[0] : String(error)}; ${USAGE}`);
  }
  if (values.help) return null;
  if (!values.scenario || values.scenario.length === 0) throw new UsageError(`--scenario is required; ${USAGE}`);
  if (values.json && values.markdown) throw new UsageError(`--json and --markdown exclude each other; ${USAGE}`);
  return { files: values.scenario.flatMap(filesOf), json: values.json === true, markdown: values.markdown === true };
}

async function runAll(loaded: { file: string; scenario: Scenario }[], options: Options): Promise<ScenarioReport[]> {
  const progress = createProgress();
  const reports: ScenarioReport[] = [];
  for (const [i, { scenario }] of loaded.entries()) {
    const prefix = loaded.length > 1 ? `[${i + 1}/${loaded.length}] ` : "";
    const runs = await runScenario(scenario, resolveStrategy, (name, j, total) => progress.update(`${prefix}${scenario.name}: ${name} (${j + 1}/${total})`));
    progress.done();
    const report: ScenarioReport = { scenario, runs };
    reports.push(report);
    if (!options.json) {
      const table = options.markdown ? markdownTable : textTable;
      const heading = options.markdown ? `### ${scenario.name}` : scenario.name;
      const verdict = verdictOnOurs(report);
      process.stdout.write(`${heading}\n${options.markdown ? "\n" : ""}${table(runs.map((r) => r.result), scenario)}\n${verdict ? `${verdict}\n` : ""}${loaded.length > 1 ? "\n" : ""}`);
    }
    for (const run of runs) if (run.error) process.stderr.write(`note: ${run.result.strategy}: ${run.error}\n`);
  }
  return reports;
}

async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (!options) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // Every file is checked before the first run.
  const loaded = options.files.map((file) => ({ file, scenario: loadScenario(file, STRATEGY_NAMES, DEFAULT_STRATEGY_NAMES) }));
  const reports = await runAll(loaded, options);
  if (options.json) {
    const results = reports.map((report) => report.runs.map((r) => r.result));
    const output = loaded.length === 1 ? results[0] : loaded.map(({ file, scenario }, i) => ({ file, name: scenario.name, results: results[i] }));
    process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
  } else if (loaded.length > 1) {
    process.stdout.write(`${sweepTable(reports, options.markdown)}\n`);
  }
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
