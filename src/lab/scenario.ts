/**
 * Scenario files: parsing, defaults and validation. The schema is documented in docs/lab.md.
 * Every problem is a ScenarioError with one line a person can act on.
 */
import { readFileSync } from "node:fs";
import { DAY_MS } from "./limiters";
import { COORDINATIONS, DIALECT_IDS, LIMITER_KINDS, RETRY_AFTER_FORMS, type Scenario } from "./types";

export class ScenarioError extends Error {}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * The keys each level of a scenario may hold, by its path in the file. A key not listed is an
 * error (a misspelt `workerz` would otherwise run silently with the default). To add a key: list
 * it here and read it in parseScenario; a new nested object gets its own row and a
 * rejectUnknownKeys call.
 */
export const KNOWN_KEYS: Readonly<Record<string, readonly string[]>> = {
  scenario: ["name", "description", "server", "workload", "strategies", "clock", "seed", "maxRunMs"],
  server: ["limiter", "limit", "windowMs", "dialect", "retryAfter", "budgetHeaders", "throttleBody", "latencyMs", "costPerRequest", "honoursIdempotencyKey", "faults"],
  "server.faults": ["error503Share", "dropShare", "slowShare", "slowMs"],
  workload: ["jobs", "workers", "method", "coordination", "executionLimitMs", "requestTimeoutMs", "processes", "storeOutage"],
  "workload.storeOutage": ["atMs", "forMs"],
};

/** Edit distance (insertions, deletions, substitutions), case-insensitive. */
function editDistance(a: string, b: string): number {
  const left = a.toLowerCase();
  const right = b.toLowerCase();
  let previous = Array.from({ length: right.length + 1 }, (_, j) => j);
  for (let i = 1; i <= left.length; i++) {
    const current = [i];
    for (let j = 1; j <= right.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (left[i - 1] === right[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[right.length]!;
}

/** Throws a one-line ScenarioError naming the first key of `obj` that `path` does not know. */
function rejectUnknownKeys(obj: Json, path: string): void {
  const known = KNOWN_KEYS[path] ?? [];
  const unknown = Object.keys(obj).find((key) => !known.includes(key));
  if (unknown === undefined) return;
  const where = path === "scenario" ? "" : `${path}.`;
  const nearest = [...known].sort((a, b) => editDistance(unknown, a) - editDistance(unknown, b))[0];
  // A suggestion only when it is plausibly a typo: at most a third of the key's letters differ.
  const hint = nearest !== undefined && editDistance(unknown, nearest) <= Math.max(1, Math.floor(unknown.length / 3)) ? `did you mean ${where}${nearest}?` : `known keys ${path === "scenario" ? "at the top level" : `in ${path}`}: ${known.join(", ")}`;
  throw new ScenarioError(`unknown key ${where}${unknown}: ${hint}`);
}

function objectAt(parent: Json, key: string, where: string): Json {
  const value = parent[key];
  if (value === undefined) return {};
  if (!isObject(value)) throw new ScenarioError(`${where}.${key} must be an object`);
  return value;
}

function num(obj: Json, key: string, where: string, fallback: number | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = obj[key];
  if (value === undefined) {
    if (fallback === undefined) throw new ScenarioError(`${where}.${key} is required`);
    return fallback;
  }
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw new ScenarioError(`${where}.${key} must be a number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

function oneOf<T extends string>(obj: Json, key: string, where: string, allowed: readonly T[], fallback: T | undefined): T {
  const value = obj[key];
  if (value === undefined) {
    if (fallback === undefined) throw new ScenarioError(`${where}.${key} is required (one of ${allowed.join(", ")})`);
    return fallback;
  }
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw new ScenarioError(`${where}.${key}: unknown value ${JSON.stringify(value)} (one of ${allowed.join(", ")})`);
  }
  return value as T;
}

function bool(obj: Json, key: string, where: string, fallback: boolean): boolean {
  const value = obj[key];
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw new ScenarioError(`${where}.${key} must be true or false`);
  return value;
}

/**
 * Validates a parsed scenario and fills in defaults. `knownStrategies` guards the strategy list;
 * `defaultStrategies` run when the scenario names none (strategies that need the real clock are
 * known but not run by default).
 */
export function parseScenario(raw: unknown, knownStrategies: readonly string[], defaultStrategies: readonly string[] = knownStrategies): Scenario {
  if (!isObject(raw)) throw new ScenarioError("a scenario must be a JSON object");
  const name = raw.name;
  if (typeof name !== "string" || name.trim() === "") throw new ScenarioError("name is required (a non-empty string)");
  const server = objectAt(raw, "server", "scenario");
  const workload = objectAt(raw, "workload", "scenario");
  const faults = objectAt(server, "faults", "server");
  const outage = workload.storeOutage === undefined ? null : objectAt(workload, "storeOutage", "workload");
  rejectUnknownKeys(raw, "scenario");
  rejectUnknownKeys(server, "server");
  rejectUnknownKeys(faults, "server.faults");
  rejectUnknownKeys(workload, "workload");
  if (outage) rejectUnknownKeys(outage, "workload.storeOutage");

  const limiter = oneOf(server, "limiter", "server", LIMITER_KINDS, undefined);
  const dialect = oneOf(server, "dialect", "server", DIALECT_IDS, "generic");
  const strategiesRaw = raw.strategies ?? defaultStrategies;
  if (!Array.isArray(strategiesRaw) || strategiesRaw.length === 0 || !strategiesRaw.every((s) => typeof s === "string")) {
    throw new ScenarioError("strategies must be a non-empty array of strategy names");
  }
  const strategies = strategiesRaw as string[];
  const unknown = strategies.filter((s) => !knownStrategies.includes(s));
  if (unknown.length > 0) throw new ScenarioError(`unknown strateg${unknown.length === 1 ? "y" : "ies"} ${unknown.join(", ")} (known: ${knownStrategies.join(", ")})`);

  const clock = oneOf(raw, "clock", "scenario", ["virtual", "real"] as const, "virtual");
  const scenario: Scenario = {
    name: name.trim(),
    description: typeof raw.description === "string" ? raw.description : "",
    server: {
      limiter,
      limit: num(server, "limit", "server", undefined, 1, 1e9),
      windowMs: num(server, "windowMs", "server", limiter === "daily-quota" ? DAY_MS : limiter === "concurrency" ? 1000 : undefined, 1),
      dialect,
      retryAfter: oneOf(server, "retryAfter", "server", RETRY_AFTER_FORMS, "seconds"),
      budgetHeaders: bool(server, "budgetHeaders", "server", true),
      latencyMs: num(server, "latencyMs", "server", 50, 0, 600_000),
      costPerRequest: num(server, "costPerRequest", "server", 1, 1, 1e9),
      honoursIdempotencyKey: bool(server, "honoursIdempotencyKey", "server", true),
      faults: {
        error503Share: num(faults, "error503Share", "server.faults", 0, 0, 1),
        dropShare: num(faults, "dropShare", "server.faults", 0, 0, 1),
        slowShare: num(faults, "slowShare", "server.faults", 0, 0, 1),
        slowMs: num(faults, "slowMs", "server.faults", 0, 0, 600_000),
      },
    },
    workload: {
      jobs: num(workload, "jobs", "workload", undefined, 1, 1_000_000),
      workers: num(workload, "workers", "workload", 1, 1, 10_000),
      method: oneOf(workload, "method", "workload", ["GET", "POST"] as const, "GET"),
      coordination: oneOf(workload, "coordination", "workload", COORDINATIONS, "in-process"),
      executionLimitMs: num(workload, "executionLimitMs", "workload", 15 * 60_000, 1),
      requestTimeoutMs: num(workload, "requestTimeoutMs", "workload", 0, 0),
      processes: num(workload, "processes", "workload", 1, 1, 32),
      storeOutage: outage ? { atMs: num(outage, "atMs", "workload.storeOutage", undefined, 0), forMs: num(outage, "forMs", "workload.storeOutage", undefined, 1) } : null,
    },
    strategies,
    clock,
    seed: num(raw, "seed", "scenario", 1, 0, 2 ** 32 - 1),
    maxRunMs: num(raw, "maxRunMs", "scenario", clock === "real" ? 60_000 : 2 * DAY_MS, 1),
  };
  const throttleBody = throttleBodyOf(server, dialect);
  if (throttleBody !== undefined) scenario.server.throttleBody = throttleBody;
  if (scenario.server.limiter === "cost-bucket" && scenario.server.costPerRequest > scenario.server.limit) {
    throw new ScenarioError("server.costPerRequest is larger than server.limit: no request could ever be admitted");
  }
  if (!Number.isInteger(scenario.workload.jobs) || !Number.isInteger(scenario.workload.workers)) throw new ScenarioError("workload.jobs and workload.workers must be whole numbers");
  checkRedisWorkload(scenario);
  return scenario;
}

/** The longest throttleBody taken: a provider's error body, not a document. */
const THROTTLE_BODY_MAX_CHARS = 2000;

/** server.throttleBody: what a provider writes in its 429, spoken by the dialects whose body is not the provider's own. */
function throttleBodyOf(server: Json, dialect: string): string | undefined {
  const value = server.throttleBody;
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0 || value.length > THROTTLE_BODY_MAX_CHARS) {
    throw new ScenarioError(`server.throttleBody must be a string of 1 to ${THROTTLE_BODY_MAX_CHARS} characters (the body text of the 429)`);
  }
  if (dialect !== "generic" && dialect !== "ietf") throw new ScenarioError(`server.throttleBody is spoken by the generic and ietf dialects only (this scenario's is ${dialect}): remove it or set server.dialect`);
  return value;
}

/** Redis runs on real time (its TIME), and only Redis is shared across processes or has an outage to survive. */
function checkRedisWorkload(scenario: Scenario): void {
  const { coordination, processes, storeOutage } = scenario.workload;
  if (coordination === "redis" && scenario.clock !== "real") throw new ScenarioError('workload.coordination "redis" runs on the real clock (Redis decides on its own TIME): set "clock": "real"');
  if (!Number.isInteger(processes)) throw new ScenarioError("workload.processes must be a whole number");
  if (processes > 1 && coordination !== "redis") throw new ScenarioError(`workload.processes ${processes} needs workload.coordination "redis": processes share nothing else`);
  if (processes > scenario.workload.workers) throw new ScenarioError(`workload.processes (${processes}) is more than workload.workers (${scenario.workload.workers}): each process runs at least one worker`);
  if (storeOutage && coordination !== "redis") throw new ScenarioError('workload.storeOutage needs workload.coordination "redis"');
}

/** Whether a scenario needs a Redis server (its runner starts one, or uses REDIS_URL). */
export function needsRedis(scenario: Scenario): boolean {
  return scenario.workload.coordination === "redis";
}

/** Reads and validates a scenario file. */
export function loadScenario(file: string, knownStrategies: readonly string[], defaultStrategies: readonly string[] = knownStrategies): Scenario {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ScenarioError(`cannot read scenario file ${file}${code ? ` (${code})` : ""}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ScenarioError(`scenario file ${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseScenario(raw, knownStrategies, defaultStrategies);
}
