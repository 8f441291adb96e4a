/**
 * Writes random scenarios of the issue's kind (different limiters and dialects, 1 to 50 workers,
 * faults, with and without budget headers, some shared through cross-flow state), so that the
 * governor is judged on scenarios nobody tuned it for:
 *
 *   npm run -s lab:random -- --count 40 --seed 7 --out DIR
 *
 * Each file is a valid scenario (docs/lab.md) that runs every default strategy, named after what it
 * holds. The same seed writes the same files (count defaults to 20, seed to 1). Bad input: one line
 * on stderr and exit code 2.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { seededRandom } from "./clock";
import type { Coordination, DialectId, HttpMethod, LimiterKind, RetryAfterForm } from "./types";

const USAGE = "usage: npm run -s lab:random -- --count N --seed S --out DIR";

/** The dialects that answer a plain request budget (Shopify GraphQL's cost bucket needs its own limiter). */
const DIALECTS: readonly DialectId[] = ["generic", "github", "github-secondary", "shopify-rest", "stripe", "slack", "hubspot", "ietf"];
const LIMITERS: readonly LimiterKind[] = ["fixed-window", "sliding-window", "token-bucket", "concurrency"];
const LIMITS = [3, 5, 8, 10, 15, 20, 25, 40, 60, 100] as const;
const WINDOWS_MS = [1000, 2000, 3000, 5000, 10_000, 60_000] as const;
const WORKERS = [1, 2, 4, 8, 12, 20, 35, 50] as const;
const LATENCIES_MS = [20, 50, 100, 200] as const;

class UsageError extends Error {}

export interface RandomScenario {
  name: string;
  description: string;
  server: {
    limiter: LimiterKind;
    limit: number;
    windowMs: number;
    dialect: DialectId;
    budgetHeaders: boolean;
    retryAfter: RetryAfterForm;
    latencyMs: number;
    faults?: { error503Share: number; dropShare: number };
  };
  workload: { jobs: number; workers: number; method: HttpMethod; coordination: Coordination };
  seed: number;
}

/** One scenario from the draws of `random` (a seeded source: the same draws give the same scenario). */
export function randomScenario(random: () => number, index: number, seed: number): RandomScenario {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const limiter = pick(LIMITERS);
  const dialect = pick(DIALECTS);
  const limit = pick(LIMITS);
  const windowMs = limiter === "concurrency" ? 1000 : pick(WINDOWS_MS);
  const workers = pick(WORKERS);
  // A few windows' worth of jobs, so that the budget is spent and comes back more than once.
  const jobs = limiter === "concurrency" ? pick([100, 200, 300] as const) : Math.min(800, limit * pick([3, 5, 8] as const));
  const budgetHeaders = random() < 0.7;
  const retryAfter = pick(["seconds", "seconds", "http-date", "absent"] as const);
  const latencyMs = pick(LATENCIES_MS);
  const faults = random() < 0.25 ? { error503Share: 0.02, dropShare: pick([0, 0.02] as const) } : undefined;
  const method = pick(["GET", "GET", "POST"] as const);
  const coordination: Coordination = random() < 1 / 6 ? "cross-flow" : "in-process";
  const name = `random ${index}: ${limiter} ${limit} per ${windowMs} ms, ${dialect}${budgetHeaders ? "" : " without budget headers"}, Retry-After ${retryAfter}, ${workers} worker(s) ${method}${faults ? ", faults" : ""}${coordination === "cross-flow" ? ", cross-flow" : ""}`;
  return {
    name,
    description: `Written by npm run -s lab:random (seed ${seed}, scenario ${index}): a limiter, dialect and workload drawn at random, not tuned for.`,
    server: { limiter, limit, windowMs, dialect, budgetHeaders, retryAfter, latencyMs, ...(faults ? { faults } : {}) },
    workload: { jobs, workers, method, coordination },
    seed: seed * 1000 + index,
  };
}

/** A whole-number option, or its default when not given. */
function wholeNumber(text: string | undefined, name: string, min: number, max: number, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max} (got ${text}); ${USAGE}`);
  return value;
}

function main(argv: string[]): number {
  let values: { count?: string; seed?: string; out?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ args: argv, options: { count: { type: "string" }, seed: { type: "string" }, out: { type: "string" }, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message.split("\n")[0] : String(error)}; ${USAGE}`);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const count = wholeNumber(values.count, "count", 1, 1000, 20);
  const seed = wholeNumber(values.seed, "seed", 0, 2 ** 31 - 1, 1);
  if (!values.out) throw new UsageError(`--out is required (a directory to write the scenarios into); ${USAGE}`);
  mkdirSync(values.out, { recursive: true });
  const random = seededRandom(seed);
  for (let index = 0; index < count; index++) {
    const file = join(values.out, `random-${seed}-${String(index).padStart(3, "0")}.json`);
    writeFileSync(file, `${JSON.stringify(randomScenario(random, index, seed), null, 2)}\n`);
    process.stdout.write(`${file}\n`);
  }
  return 0;
}

if (require.main === module) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error) {
    const known = error instanceof UsageError;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`lab:random: ${known ? message : `could not write the scenarios: ${message}`}\n`);
    process.exitCode = 2;
  }
}
