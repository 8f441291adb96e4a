/**
 * `npm run fuzz`: at least a million seeded inputs across the engine's targets, and a table of
 * what each one found. Exit code 0 when every target is clean, 1 when any threw or broke a
 * property, 2 on a bad argument.
 *
 *   npm run fuzz                         # 1,000,000 inputs, seed 1
 *   npm run fuzz -- --count 50000 --seed 7 --target plan
 */
import { parseArgs } from "node:util";
import { fuzzTargets, inputsPerTarget, isClean, runTarget, type TargetRun } from "./index";

const USAGE = "usage: npm run fuzz -- [--count N (total inputs, default 1000000)] [--seed S (default 1)] [--target NAME]";

interface Options {
  count: number;
  seed: number;
  target: string | undefined;
}

function readOptions(args: string[]): Options | "help" {
  const { values } = parseArgs({ args, options: { count: { type: "string" }, seed: { type: "string" }, target: { type: "string" }, help: { type: "boolean", short: "h" } }, strict: true });
  if (values.help) return "help";
  const count = values.count === undefined ? 1_000_000 : Number(values.count);
  if (!Number.isSafeInteger(count) || count < 1) throw new Error(`--count "${values.count}" is not a whole number of inputs, 1 or more`);
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (!Number.isSafeInteger(seed)) throw new Error(`--seed "${values.seed}" is not a whole number`);
  const names = fuzzTargets.map((t) => t.target.name);
  if (values.target !== undefined && !names.includes(values.target)) throw new Error(`--target "${values.target}" is not one of: ${names.join(", ")}`);
  return { count, seed, target: values.target };
}

const COLUMNS = ["target", "inputs", "throws", "waits below a valid server wait", "violations", "time"];

function row(cells: string[]): string {
  const widths = [20, 11, 7, 32, 11, 9];
  return cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
}

function cells(run: Pick<TargetRun, "name" | "inputs" | "throws" | "violations" | "elapsedMs" | "waitsBelowServerWait">): string[] {
  const n = (value: number) => value.toLocaleString("en-US");
  return [run.name, n(run.inputs), n(run.throws), run.waitsBelowServerWait === undefined ? "-" : n(run.waitsBelowServerWait), n(run.violations), `${(run.elapsedMs / 1000).toFixed(1)} s`];
}

function main(args: string[]): number {
  let options: Options | "help";
  try {
    options = readOptions(args);
  } catch (error) {
    process.stderr.write(`fuzz: ${error instanceof Error ? error.message : String(error)}; ${USAGE}\n`);
    return 2;
  }
  if (options === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const selected = fuzzTargets.filter((t) => options.target === undefined || t.target.name === options.target);
  const counts = inputsPerTarget(options.count, selected);
  process.stdout.write(`fuzz: ${options.count.toLocaleString("en-US")} inputs, seed ${options.seed}\n\n${row(COLUMNS)}\n`);
  const runs: TargetRun[] = [];
  selected.forEach(({ target }, index) => {
    const run = runTarget(target, options.seed * 1000 + index, counts[index]!, () => performance.now());
    runs.push(run);
    process.stdout.write(`${row(cells(run))}\n`);
  });
  const sum = (pick: (run: TargetRun) => number) => runs.reduce((total, run) => total + pick(run), 0);
  process.stdout.write(`${row(cells({ name: "total", inputs: sum((r) => r.inputs), throws: sum((r) => r.throws), violations: sum((r) => r.violations), waitsBelowServerWait: sum((r) => r.waitsBelowServerWait ?? 0), elapsedMs: sum((r) => r.elapsedMs) }))}\n`);
  const failing = runs.filter((run) => !isClean(run));
  for (const run of failing) process.stdout.write(`\n${run.name}:\n${run.examples.map((e) => `  ${e}`).join("\n")}\n`);
  return failing.length === 0 ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
