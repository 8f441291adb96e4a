/**
 * `npm run -s bench:batch [-- --runs N] [-- --source]`: Send Batch against a Loop of Send Request
 * steps, through spectral's harness on the BUILT bundle (webpack into a scratch directory), against
 * the lab's throttled API on 127.0.0.1 with real sockets and the real clock. Prints one row per run
 * and way, the loop/batch ratio, and the goals for the batch. --source runs the sources
 * instead of the bundle (no build). Figures vary by some ms from run to run; see src/lab/batch.ts
 * for how the API's minimum (ideal) is defined.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { batchApiSpec, buildBundle, labRequests, runnerFor, startAlignedApi, timeBatch, timeLoop, type ActionRunner, type BatchFigures } from "./batch";
import type { HttpMethod, ServerSpec } from "./types";

const USAGE = "usage: npm run -s bench:batch [-- --runs N] [-- --source]";

interface Setup {
  name: string;
  spec: ServerSpec;
  items: number;
  method: HttpMethod;
  concurrency: number;
  /** The goals apply (60 GETs, 10/s, concurrency 8). */
  goals: boolean;
}

const SETUPS: readonly Setup[] = [
  { name: "60 GETs, 10 per 1 s window, 20 ms answers (the issue's)", spec: batchApiSpec(), items: 60, method: "GET", concurrency: 8, goals: true },
  { name: "60 GETs, 10 per 1 s window, 250 ms answers (a slow API)", spec: batchApiSpec({ latencyMs: 250 }), items: 60, method: "GET", concurrency: 8, goals: false },
  {
    name: "300 POSTs with idempotency keys, 100 per 1 s window, 2% of connections dropped after the work",
    spec: batchApiSpec({ limit: 100, faults: { error503Share: 0, dropShare: 0.02, slowShare: 0, slowMs: 0 } }),
    items: 300,
    method: "POST",
    concurrency: 8,
    goals: false,
  },
];

const pad = (text: string | number, width: number): string => String(text).padStart(width);

function row(f: BatchFigures): string {
  const ratio = (f.makespanMs / f.idealMs).toFixed(2);
  return `  ${f.way.padEnd(26)}${pad(f.items, 6)}${pad(f.ok, 5)}${pad(f.failed, 7)}${pad(f.deferred, 9)}${pad(f.calls, 7)}${pad(f.throttled, 10)}${pad(f.duplicates, 11)}${pad(f.makespanMs, 9)}${pad(f.idealMs, 9)}${pad(ratio, 8)}`;
}

const HEADER = `  ${"way".padEnd(26)}${pad("items", 6)}${pad("ok", 5)}${pad("failed", 7)}${pad("deferred", 9)}${pad("calls", 7)}${pad("throttled", 10)}${pad("duplicates", 11)}${pad("ms", 9)}${pad("ideal ms", 9)}${pad("x ideal", 8)}`;

/** The goals for the batch: every item done, at most one throttled answer, within 1.10 x the API's minimum. */
function goalLine(f: BatchFigures): string {
  const misses = [
    ...(f.ok === f.items ? [] : [`${f.items - f.ok} not done`]),
    ...(f.throttled <= 1 ? [] : [`${f.throttled} throttled (goal: at most 1)`]),
    ...(f.makespanMs <= 1.1 * f.idealMs ? [] : [`${(f.makespanMs / f.idealMs).toFixed(2)} x ideal (goal: at most 1.10)`]),
  ];
  return misses.length === 0 ? "  goals (all done, at most 1 throttled, at most 1.10 x ideal): met" : `  goals: MISSED: ${misses.join("; ")}`;
}

async function runSetup(run: ActionRunner, setup: Setup, seed: number): Promise<{ batch: BatchFigures; loop: BatchFigures }> {
  const batchLab = await startAlignedApi(setup.spec, seed);
  let batch: BatchFigures;
  try {
    batch = (await timeBatch(run, batchLab, labRequests(batchLab.url, setup.items, setup.method), setup.concurrency)).figures;
  } finally {
    await batchLab.close();
  }
  const loopLab = await startAlignedApi(setup.spec, seed);
  try {
    return { batch, loop: await timeLoop(run, loopLab, labRequests(loopLab.url, setup.items, setup.method)) };
  } finally {
    await loopLab.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { runs: { type: "string" }, source: { type: "boolean" }, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const runs = values.runs === undefined ? 1 : Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 20) throw new Error(`--runs must be a whole number from 1 to 20, got ${values.runs}; ${USAGE}`);
  const root = join(__dirname, "..", "..");
  let run: ActionRunner;
  let cleanup = (): void => undefined;
  if (values.source) {
    run = runnerFor((await import("../index")).default, { quiet: true });
    process.stdout.write("component: the sources (src/index.ts)\n");
  } else {
    process.stderr.write("building the bundle (webpack)...\n");
    const built = await buildBundle(root);
    run = runnerFor(built.component, { quiet: true });
    cleanup = built.cleanup;
    process.stdout.write(`component: the built bundle (${join(built.dir, "index.js")})\n`);
  }
  try {
    for (const setup of SETUPS) {
      process.stdout.write(`\n${setup.name}\n${HEADER}\n`);
      for (let i = 0; i < runs; i++) {
        const { batch, loop } = await runSetup(run, setup, i + 1);
        process.stdout.write(`${row(batch)}\n${row(loop)}\n  loop / batch time: ${(loop.makespanMs / batch.makespanMs).toFixed(2)}\n`);
        if (setup.goals) process.stdout.write(`${goalLine(batch)}\n`);
      }
    }
  } finally {
    cleanup();
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench:batch: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}\n`);
    process.exitCode = 2;
  },
);
