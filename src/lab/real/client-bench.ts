/**
 * `npm run bench:client`: the client's own overhead. p50 latency per request on loopback for bare
 * axios, spectral's createClient reused (the baseline a component would otherwise use) and ours,
 * measured side by side in one run: the three take turns, request by request, so machine noise
 * falls on all of them alike. Ours is the compiled library (lib/, what an npm user runs; the npm
 * script builds it first), measured in a plain Node child (client-bench-child.cjs), not through a
 * TypeScript loader. Two answers: a plain small JSON body, and the same with rate-limit headers
 * that leave plenty of budget (a busy API on most calls: the full reading and the governor's
 * bookkeeping). Prints the figures and the ratios of each run, then the median ratio over the runs.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";

function measure(rounds: number, withBudget: boolean): number[] {
  const child = path.join(__dirname, "client-bench-child.cjs");
  const output = execFileSync(process.execPath, [child, String(rounds), withBudget ? "budget" : "plain"], { encoding: "utf8" });
  return JSON.parse(output.trim().split("\n").pop()!) as number[];
}

/** The middle value (the lower middle of an even count). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

function main(): void {
  const { values } = parseArgs({ options: { requests: { type: "string", default: "4000" }, runs: { type: "string", default: "3" }, help: { type: "boolean", short: "h" } }, strict: true });
  if (values.help) {
    process.stdout.write("usage: npm run -s bench:client -- [--requests N] [--runs N]\n");
    return;
  }
  const rounds = Number(values.requests);
  if (!Number.isInteger(rounds) || rounds < 100) throw new Error("--requests must be a whole number of 100 or more");
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 20) throw new Error("--runs must be a whole number from 1 to 20");
  // Each run is a fresh process: which functions V8 optimises, and how, differs from process to
  // process (a few % of this ratio), so one process alone can land at either end of that spread.
  process.stdout.write(`client overhead on loopback: p50 of ${rounds} requests each, taking turns, ${runs} run(s) in fresh processes, node ${process.version}\n`);
  process.stdout.write(`${"run  answer".padEnd(45)}${"bare axios".padStart(11)}${"spectral".padStart(11)}${"ours".padStart(11)}   ours/spectral   ours/axios\n`);
  const ratios: Record<string, number[]> = {};
  for (let run = 1; run <= runs; run++) {
    for (const withBudget of [false, true]) {
      const [bare, spectral, ours] = measure(rounds, withBudget);
      const label = withBudget ? "200 with rate-limit headers (budget left)" : "plain 200 JSON";
      const ms = (v: number | undefined): string => `${(v ?? Number.NaN).toFixed(3)} ms`.padStart(11);
      (ratios[label] ??= []).push(ours! / spectral!);
      process.stdout.write(`${`${run}    ${label}`.padEnd(45)}${ms(bare)}${ms(spectral)}${ms(ours)}   ${(ours! / spectral!).toFixed(3).padStart(10)} x   ${(ours! / bare!).toFixed(3).padStart(7)} x\n`);
    }
  }
  for (const [label, list] of Object.entries(ratios)) {
    process.stdout.write(`median of ${list.length} run(s), ${label}: ours/spectral ${median(list).toFixed(3)} x (runs: ${list.map((r) => r.toFixed(3)).join(", ")})\n`);
  }
}

try {
  main();
} catch (error) {
  process.stderr.write(`bench:client: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}\n`);
  process.exitCode = 2;
}
