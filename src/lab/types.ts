/**
 * The lab's vocabulary: scenarios (what the JSON files say), the requests the throttled API
 * records, and the per-strategy results the bench prints.
 */

export type LimiterKind = "fixed-window" | "sliding-window" | "token-bucket" | "cost-bucket" | "concurrency" | "daily-quota";
export const LIMITER_KINDS: readonly LimiterKind[] = ["fixed-window", "sliding-window", "token-bucket", "cost-bucket", "concurrency", "daily-quota"];

export type DialectId = "generic" | "github" | "github-secondary" | "shopify-rest" | "shopify-graphql" | "stripe" | "slack" | "hubspot" | "ietf" | "marketo";
export const DIALECT_IDS: readonly DialectId[] = ["generic", "github", "github-secondary", "shopify-rest", "shopify-graphql", "stripe", "slack", "hubspot", "ietf", "marketo"];

/** How a generic-dialect 429 gives its wait. */
export type RetryAfterForm = "seconds" | "http-date" | "absent";
export const RETRY_AFTER_FORMS: readonly RetryAfterForm[] = ["seconds", "http-date", "absent"];

export type Coordination = "none" | "in-process" | "cross-flow" | "redis";
export const COORDINATIONS: readonly Coordination[] = ["none", "in-process", "cross-flow", "redis"];

export type ClockKind = "virtual" | "real";
export type HttpMethod = "GET" | "POST";

export interface FaultSpec {
  /** Share (0..1) of admitted requests answered 503 without being executed. */
  error503Share: number;
  /** Share (0..1) of admitted requests whose connection drops after the work was done. */
  dropShare: number;
  /** Share (0..1) of answers delayed by slowMs. */
  slowShare: number;
  slowMs: number;
}

export interface ServerSpec {
  limiter: LimiterKind;
  /** Requests (or points, for cost-bucket) allowed per window / bucket capacity / in flight. */
  limit: number;
  /** Window length in ms; for buckets, the time to refill `limit` from empty. */
  windowMs: number;
  dialect: DialectId;
  /** Generic and IETF dialects: how the 429 carries its wait. */
  retryAfter: RetryAfterForm;
  /** Whether successes carry the dialect's budget headers (remaining / reset). */
  budgetHeaders: boolean;
  /** Generic and IETF dialects: the 429's body text (generic) or problem detail (IETF) a provider writes, in place of the dialect's. */
  throttleBody?: string;
  /** Time the server takes to answer an admitted request, ms. */
  latencyMs: number;
  /** GraphQL cost per request, points (cost-bucket only). */
  costPerRequest: number;
  /** POSTs carrying an Idempotency-Key are executed once and replayed after. */
  honoursIdempotencyKey: boolean;
  faults: FaultSpec;
}

export interface WorkloadSpec {
  jobs: number;
  /** Concurrent workers, each standing for one concurrent Prismatic execution. */
  workers: number;
  method: HttpMethod;
  coordination: Coordination;
  /** A job still running after this long is killed, as a Prismatic execution is (15 min). */
  executionLimitMs: number;
  /** Client-side timeout per attempt, ms; 0 for none. */
  requestTimeoutMs: number;
  /** The workers are split over this many child processes (each with its own clients), sharing only the API and Redis. */
  processes: number;
  /** Redis made unreachable from atMs after the run's start, for forMs (coordination "redis"); null for none. */
  storeOutage: { atMs: number; forMs: number } | null;
}

export interface Scenario {
  name: string;
  description: string;
  server: ServerSpec;
  workload: WorkloadSpec;
  strategies: string[];
  clock: ClockKind;
  seed: number;
  /** Hard bound on one strategy's run, lab-clock ms. */
  maxRunMs: number;
}

/** One request as the server saw it. */
export interface RequestRecord {
  /** Arrival time, ms since the run started (lab clock). */
  atMs: number;
  jobId: string;
  method: HttpMethod;
  status: number;
  throttled: boolean;
  /** The work was executed (a POST created its record) on this call. */
  executed: boolean;
  fault: "none" | "503" | "drop" | "slow";
}

export type JobOutcome = "ok" | "failed" | "deferred";

export interface StrategyResult {
  strategy: string;
  ok: number;
  failed: number;
  deferred: number;
  calls: number;
  throttled: number;
  makespanMs: number;
  idealMs: number;
  duplicates: number;
  herdPeak: number;
}

export interface StrategyRun {
  result: StrategyResult;
  requests: RequestRecord[];
  /** When each job finished, ms since start, with its outcome. */
  jobs: { jobId: string; endMs: number; outcome: JobOutcome }[];
  /** Wall-clock time the run took, ms (for the progress line, not the benchmark). */
  wallMs: number;
  error: string | null;
}
