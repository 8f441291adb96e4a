/**
 * `npm run bench:client`: the client's own overhead. p50 latency per request on loopback for bare
 * axios, spectral's createClient reused (the baseline a component would otherwise use) and ours,
 * measured side by side in one run: the three take turns, request by request, so machine noise
 * falls on all of them alike. Ours is the compiled library (lib/, what an npm user runs; the npm
 * script builds it first), measured in a plain Node child (client-bench-child.cjs), not through a
 * TypeScript loader. Two answers: a plain small JSON body, and the same with rate-limit headers
 * that leave plenty of budget (a busy API on most calls: the full reading and the governor's
 * bookkeeping). Prints the figures and the ratios.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";

function measure(rounds: number, withBudget: boolean): number[] {
  const child = path.join(__dirname, "client-bench-child.cjs");
  const output = execFileSync(process.execPath, [child, String(rounds), withBudget ? "budget" : "plain"], { encoding: "utf8" });
  return JSON.parse(output.trim().split("\n").pop()!) as number[];
}

function main(): void {
  const { values } = parseArgs({ options: { requests: { type: "string", default: "4000" }, help: { type: "boolean", short: "h" } }, strict: true });
  if (values.help) {
    process.stdout.write("usage: npm run -s bench:client -- [--requests N]\n");
    return;
  }
  const rounds = Number(values.requests);
  if (!Number.isInteger(rounds) || rounds < 100) throw new Error("--requests must be a whole number of 100 or more");
  process.stdout.write(`client overhead on loopback: p50 of ${rounds} requests each, taking turns, node ${process.version}\n`);
  process.stdout.write(`${"answer".padEnd(40)}${"bare axios".padStart(11)}${"spectral".padStart(11)}${"ours".padStart(11)}   ours/spectral   ours/axios\n`);
  for (const withBudget of [false, true]) {
    const [bare, spectral, ours] = measure(rounds, withBudget);
    const label = withBudget ? "200 with rate-limit headers (budget left)" : "plain 200 JSON";
    const ms = (v: number | undefined): string => `${(v ?? Number.NaN).toFixed(3)} ms`.padStart(11);
    process.stdout.write(`${label.padEnd(40)}${ms(bare)}${ms(spectral)}${ms(ours)}   ${(ours! / spectral!).toFixed(3).padStart(10)} x   ${(ours! / bare!).toFixed(3).padStart(7)} x\n`);
  }
}

try {
  main();
} catch (error) {
  process.stderr.write(`bench:client: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}\n`);
  process.exitCode = 2;
}
