/**
 * A client's settings, checked once: bad values get one line saying what to enter. Everything a
 * request needs from its client is in ClientContext.
 */
import { DEFAULT_POLICY, type RetryPolicy, type ServerClock } from "../engine";
import { createMemoryStore, type GovernorStore } from "../store";
import { MAX_TIMER_MS, realClock } from "./clock";
import { ThrottleInputError } from "./errors";
import type { UrlBase } from "./prepare";
import { createRedactor, secretsFromHeaders, type Redactor } from "./redact";
import type { ClientLimits, ClientLogger, Clock, LongWaitMode, ThrottleClientOptions } from "./types";

export const DEFAULT_LIMITS: Readonly<ClientLimits> = Object.freeze({ attemptTimeoutMs: 30_000, maxResponseBytes: 32 * 1024 * 1024 });
const DEFAULT_BREAKER_THRESHOLD = 3;

export interface ClientContext {
  options: ThrottleClientOptions;
  policy: RetryPolicy & ClientLimits;
  store: GovernorStore;
  clock: Clock;
  random: () => number;
  logger: ClientLogger | undefined;
  onLongWait: LongWaitMode;
  budgetThreshold: number;
  retryWritesAfterThrottle: boolean;
  /** Secrets the client was given (credential, secrets, values of credential headers). */
  secrets: string[];
  /** Material fingerprinted into the scope. */
  credentialMaterial: string[];
  redactor: Redactor;
  /** The credential's keyed fingerprint, once the store's salt is known. */
  fingerprint?: Promise<string>;
  /** Per host, the server's clock as its Date headers showed it (engine/server-clock.ts). */
  serverClocks: Map<string, ServerClock>;
  /** The last Date header parsed for a server clock, and its instant: answers within a second share one. */
  lastServerDate: { text: string; epochMs: number } | null;
  /** The base URL parsed once (prepare.ts parseUrlBase), or null. */
  urlBase: UrlBase | null;
  /** What a request's host (with its port) decides, found once per host (prepare.ts hostFacts). */
  hosts: Map<string, HostFacts>;
}

/** What prepareRequest reads of a host, the same for every request to it from one client. */
export interface HostFacts {
  /** The dialect's id (the client's provider, or the one the hostname names). */
  provider: string;
  /**
   * The provider classify is given for this host's answers: the dialect's id, so that it need not
   * match the host against every dialect again on each answer (about 0.5 % of a loopback request
   * with rate-limit headers, npm run bench:client); the client's own name where no dialect has it,
   * so that each verdict still says it was not used.
   */
  classifyProvider: string | undefined;
  /** The hostname as dialects compare it (lower case, no trailing dot). */
  hostname: string;
  /** Whether the dialect splits the host's requests into scopes of their own (Dialect.requestScope). */
  scopesRequests: boolean;
  /** The API's base scope for this host, once made (the fingerprint and salt are fixed per client). */
  baseScope: string | undefined;
  /** A success from this host has shown a budget: its counts come on every answer, not only on throttles. */
  budgetOnSuccess: boolean;
}

function checkNumber(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw new ThrottleInputError(`Invalid policy.${name}: ${String(value)} is not a number from ${min} to ${max}. Give a finite number (milliseconds for *Ms fields).`);
  }
}

function checkPolicy(policy: RetryPolicy & ClientLimits): void {
  checkNumber("maxAttempts", policy.maxAttempts, 1, 100);
  checkNumber("maxTotalMs", policy.maxTotalMs, 0);
  checkNumber("maxInlineWaitMs", policy.maxInlineWaitMs, 0);
  checkNumber("backoffBaseMs", policy.backoffBaseMs, 0);
  checkNumber("backoffCapMs", policy.backoffCapMs, 0);
  checkNumber("attemptTimeoutMs", policy.attemptTimeoutMs, 1, MAX_TIMER_MS);
  checkNumber("maxResponseBytes", policy.maxResponseBytes, 1);
  if (!["full", "equal", "decorrelated", "none"].includes(policy.jitter)) {
    throw new ThrottleInputError(`Invalid policy.jitter: "${String(policy.jitter)}". Use full, equal, decorrelated or none.`);
  }
}

export function createContext(options: ThrottleClientOptions): ClientContext {
  const clock = options.clock ?? realClock;
  const policy: RetryPolicy & ClientLimits = { ...DEFAULT_POLICY, ...DEFAULT_LIMITS, ...options.policy };
  if (options.timeoutMs !== undefined) policy.attemptTimeoutMs = options.timeoutMs;
  checkPolicy(policy);
  const breakerThreshold = options.breakerThreshold ?? DEFAULT_BREAKER_THRESHOLD;
  if (!Number.isInteger(breakerThreshold) || breakerThreshold < 1) {
    throw new ThrottleInputError(`Invalid breakerThreshold: ${String(breakerThreshold)}. Use a whole number of consecutive throttles, 1 or more.`);
  }
  const budgetThreshold = options.budgetThreshold ?? 0;
  if (!Number.isFinite(budgetThreshold) || budgetThreshold < 0) {
    throw new ThrottleInputError(`Invalid budgetThreshold: ${String(budgetThreshold)}. Use a number of remaining requests, 0 or more.`);
  }
  const credentialMaterial = [...(typeof options.credential === "string" ? [options.credential] : (options.credential ?? [])), ...secretsFromHeaders(options.headers)];
  const secrets = [...credentialMaterial, ...(options.secrets ?? [])];
  const redactor = createRedactor(secrets);
  const logger = options.logger;
  return {
    options,
    policy,
    store: options.store ?? createMemoryStore({ clock, governor: { breakerThreshold } }),
    clock,
    random: options.random ?? Math.random,
    logger,
    onLongWait: options.onLongWait ?? "fail",
    budgetThreshold,
    retryWritesAfterThrottle: options.retryWritesAfterThrottle ?? true,
    secrets,
    credentialMaterial,
    redactor,
    serverClocks: new Map(),
    lastServerDate: null,
    urlBase: null,
    hosts: new Map(),
  };
}
