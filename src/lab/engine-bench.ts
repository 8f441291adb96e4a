/**
 * Micro-benchmark of the engine (a benchmark that prints figures, never a timed test):
 * classify's and plan's median time per call over every documented fixture response.
 * Run: npm run bench:engine [-- --rounds N]
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { classify, DEFAULT_POLICY, plan } from "../engine";
import type { ClassifyInput, Verdict } from "../engine";

const NOW_MS = Date.parse("2026-11-30T12:00:00Z");
const fixturesDir = join(__dirname, "..", "..", "test", "fixtures");

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Median over rounds of the mean µs per call for one round through all inputs. */
function measure<T>(inputs: readonly T[], rounds: number, call: (input: T) => unknown): number {
  const perCallUs: number[] = [];
  let sink = 0;
  for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint();
    for (const input of inputs) sink += call(input) ? 1 : 0;
    const elapsedNs = Number(process.hrtime.bigint() - start);
    perCallUs.push(elapsedNs / 1000 / inputs.length);
  }
  if (sink < 0) console.log(sink); // keeps the calls from being optimised away
  return median(perCallUs);
}

function main(): void {
  let rounds = 400;
  try {
    const { values } = parseArgs({ options: { rounds: { type: "string" }, help: { type: "boolean", short: "h" } } });
    if (values.help) {
      process.stdout.write("usage: npm run -s bench:engine [-- --rounds N]  (median time of classify per documented response and of plan per decision; N >= 10, default 400)\n");
      return;
    }
    if (values.rounds !== undefined) {
      rounds = Number(values.rounds);
      if (!Number.isInteger(rounds) || rounds < 10) throw new Error(`--rounds must be an integer of at least 10, got "${values.rounds}"`);
    }
  } catch (error) {
    process.stderr.write(`bench:engine: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
    return;
  }
  const inputs: ClassifyInput[] = readdirSync(fixturesDir)
    .filter((f) => f.endsWith(".json"))
    .flatMap((f) => JSON.parse(readFileSync(join(fixturesDir, f), "utf8")) as ClassifyInput[]);
  const verdicts: Verdict[] = inputs.map((input) => classify(input, { nowMs: NOW_MS }));
  const history = { attempts: 1, firstAttemptAtMs: NOW_MS };
  let seed = 1;
  const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);

  // Warm-up so the JIT has compiled the hot paths before measuring.
  measure(inputs, 50, (input) => classify(input, { nowMs: NOW_MS }));
  const classifyUs = measure(inputs, rounds, (input) => classify(input, { nowMs: NOW_MS }));
  measure(verdicts, 50, (verdict) => plan(verdict, history, DEFAULT_POLICY, { nowMs: NOW_MS, random }));
  const planUs = measure(verdicts, rounds, (verdict) => plan(verdict, history, DEFAULT_POLICY, { nowMs: NOW_MS, random }));

  console.log(`engine micro-benchmark: ${inputs.length} documented responses, ${rounds} rounds, node ${process.version}`);
  console.log(`classify: median ${classifyUs.toFixed(2)} µs per response (target < 20 µs)`);
  console.log(`plan:     median ${planUs.toFixed(2)} µs per decision`);
}

main();
