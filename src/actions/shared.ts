/** Prismatic glue shared by the actions: context -> store, logger, deadline, client, scope. */
import type { ActionContext, Connection } from "@prismatic-io/spectral";
import { belongsElsewhere, createRedactor, createThrottleClient, type ClientLogger, type ThrottleClient } from "../client";
import { earliestStart, type GovernorState, type ScopeParts } from "../engine";
import { authFromConnection, sharedStoreFromConnection, type ConnectionAuth } from "../connections";
import { checkUrl, type StepPolicy } from "../inputs";
import { createCrossFlowStore } from "../store";
import { createStepStore, type StepStore } from "../store/fallback";
import { createRedisStore } from "../store/redis/store";

/** Prismatic stops an execution after 15 minutes; keep a margin for the steps after this one. */
export const EXECUTION_LIMIT_MS = 15 * 60_000;
export const DEADLINE_MARGIN_MS = 60_000;
/**
 * A synchronous invocation is answered within 30 s
 * (https://prismatic.io/docs/integrations/integration-runner-environment-limits): On Long Wait =
 * Respond (for synchronous callers) waits no later than this after the execution's start, so that
 * the 429 and its Retry-After reach the caller. Before it, a paced turn or a 40 s Retry-After was
 * slept past the caller's answer.
 */
export const SYNCHRONOUS_LIMIT_MS = 30_000;
export const SYNCHRONOUS_MARGIN_MS = 5_000;

export function loggerOf(context: Pick<ActionContext, "logger">): ClientLogger {
  return {
    info: (message) => context.logger.info(message),
    warn: (message) => context.logger.warn(message),
  };
}

/**
 * The governors (and park queues) of a step: cross-flow state as this execution loaded it
 * (Prismatic loads state when an execution starts) and, when the step's Shared Store input names a
 * Redis connection, Redis in front of it (src/store/fallback.ts). Every action gets its store here.
 * The caller closes it when the step ends (a finally), so that no socket or timer outlives the step.
 */
export function openStore(context: Pick<ActionContext, "logger" | "crossFlowState">, params: Record<string, unknown> = {}): StepStore {
  const warn = (message: string) => context.logger.warn(message);
  const crossFlow = createCrossFlowStore(context.crossFlowState, { warn });
  const settings = sharedStoreFromConnection(params.sharedStore as Connection | undefined);
  if (!settings) return createStepStore(crossFlow, { warn });
  const { secrets, ...redis } = settings;
  // Redis adopts this instance's salt when it has none yet, so that its scope names carry over.
  const shared = createRedisStore({ ...redis, saltCandidate: crossFlow.saltValue });
  return createStepStore(crossFlow, { shared, warn, redact: createRedactor(secrets).text });
}

/** The latest moment a wait may end inside this execution (a synchronous one: before its caller is answered), from context.startedAt. */
export function executionDeadlineMs(startedAt: string | undefined, nowMs: number, synchronous = false): number | null {
  const startedAtMs = startedAt ? Date.parse(startedAt) : Number.NaN;
  const base = Number.isFinite(startedAtMs) && startedAtMs <= nowMs ? startedAtMs : nowMs;
  return base + (synchronous ? SYNCHRONOUS_LIMIT_MS - SYNCHRONOUS_MARGIN_MS : EXECUTION_LIMIT_MS - DEADLINE_MARGIN_MS);
}

/**
 * The client for a step: the connection's auth plus the step's policy. Every action that sends
 * requests builds it here, so the policy inputs mean the same thing in each of them.
 */
export function throttleClientFor(input: {
  context: Pick<ActionContext, "logger" | "startedAt">;
  auth: ConnectionAuth;
  policy: StepPolicy;
  store: StepStore;
  nowMs: number;
  /** An earlier end than the execution's (Send Batch: its Max Total from its start). */
  deadlineMs?: number;
}): ThrottleClient {
  const { context, auth, policy, store, nowMs } = input;
  const executionEndMs = executionDeadlineMs(context.startedAt, nowMs, policy.onLongWait === "respond");
  return createThrottleClient({
    baseUrl: auth.baseUrl,
    headers: auth.headers,
    params: auth.params,
    credential: auth.credential,
    secrets: auth.secrets,
    provider: policy.provider,
    scopeKey: policy.scopeKey,
    store,
    logger: loggerOf(context),
    budgetThreshold: policy.budgetThreshold,
    breakerThreshold: policy.breakerThreshold,
    onLongWait: policy.onLongWait === "fail" ? "fail" : "defer",
    retryWritesAfterThrottle: policy.retryWritesAfterThrottle,
    timeoutMs: policy.timeoutMs,
    policy: {
      maxAttempts: policy.maxAttempts,
      maxInlineWaitMs: policy.maxInlineWaitMs,
      maxTotalMs: policy.maxTotalMs,
      deadlineMs: input.deadlineMs === undefined ? executionEndMs : Math.min(input.deadlineMs, executionEndMs ?? input.deadlineMs),
      jitter: policy.jitter,
      backoffBaseMs: policy.backoffBaseMs,
      backoffCapMs: policy.backoffCapMs,
    },
  });
}

interface ScopeInput {
  connection?: Connection | null;
  url?: string;
  provider: string;
  scopeKey?: string;
}

function clientFor(input: ScopeInput, store: StepStore) {
  const auth = authFromConnection(input.connection);
  if (input.url) checkUrl(input.url, auth);
  return createThrottleClient({ baseUrl: auth.baseUrl, headers: auth.headers, credential: auth.credential, secrets: auth.secrets, provider: input.provider, store });
}

/** The base scope for a connection + URL + provider, computed exactly as sendRequest computes it. */
export async function baseScopeOf(input: ScopeInput, store: StepStore): Promise<string> {
  if (input.scopeKey) return input.scopeKey;
  return clientFor(input, store).baseScopeOf(input.url ?? "/");
}

/** The scope parts a request to the URL counts against (GitHub's resource...), as sendRequest's governor sees them. */
export function requestPartsOf(input: ScopeInput, store: StepStore): ScopeParts {
  return input.url ? clientFor(input, store).requestPartsOf(input.url) : {};
}

/**
 * Every recorded scope under a base scope (the base itself and its parts, such as GitHub's
 * resources), less those of other parts of the API than the request's (a spent search budget, for a core call).
 */
export async function scopesUnder(store: StepStore, base: string, requestParts: ScopeParts = {}): Promise<Array<[string, GovernorState]>> {
  return (await store.scopesUnder(base)).filter(([key]) => !belongsElsewhere(key, base, requestParts));
}

/** What is recorded for a scope, in the words the designer uses. */
export interface ScopeView {
  /** No request before this time (the API's wait), or null when none is ahead. */
  notBefore: string | null;
  /** The earliest start the scope's budget allows now (its governor's next slot), or null when now. */
  nextStart: string | null;
  reason: string;
  limitType: string;
  breaker: "closed" | "open" | "half_open";
  throttlesInARow: number;
  budget: { limit: number | null; windowSeconds: number | null; remaining: number | null; resetAt: string | null; learnedFrom: "shown" | "inferred" | "assumed" | null };
  updatedAt: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The earliest start the scope allows now, as a read-only look (nothing is claimed). */
export function nextStartMs(state: GovernorState, nowMs: number): number {
  const fromMs = Math.max(nowMs, state.notBeforeMs);
  const earliest = earliestStart(state, fromMs, state.unitsPerRequest);
  return Math.max(fromMs, earliest.atMs);
}

export function viewOf(state: GovernorState, nowMs: number): ScopeView {
  const nextMs = nextStartMs(state, nowMs);
  const anchor = state.anchor;
  return {
    notBefore: state.notBeforeMs > nowMs ? iso(state.notBeforeMs) : null,
    nextStart: nextMs > nowMs ? iso(nextMs) : null,
    reason: state.notBeforeMs > nowMs ? state.notBeforeReason : nextMs > nowMs ? "The budget the API showed is spent until then." : "Nothing holds this scope back.",
    limitType: state.notBeforeType,
    breaker: state.breakerOpen ? (state.probe ? "half_open" : "open") : "closed",
    throttlesInARow: state.throttleStreak,
    budget: {
      limit: state.limit,
      windowSeconds: state.windowMs === null ? null : state.windowMs / 1000,
      remaining: anchor ? anchor.remaining : null,
      resetAt: anchor && anchor.resetAtMs > 0 ? iso(anchor.resetAtMs) : null,
      learnedFrom: state.windowSource === "outlasted" ? "assumed" : state.windowSource,
    },
    updatedAt: iso(state.updatedAtMs),
  };
}

/** The directions of Check, Record and Clear Backoff: they only see the waits of the scope they are given. */
export const SAME_SCOPE_DIRECTIONS =
  "Use the same Connection (or the same Scope Key) and a URL of the same API as the Send Request steps this step works with. The rate-limit scope, the bucket waits are recorded under, includes a hash of the connection's credential: with no connection or another one, this step acts on a different scope than those steps, and its result says so in its warning.";

/** A recorded scope of the same host under some credential: what a backoff step without a connection cannot see. */
export interface CredentialScope {
  scope: string;
  notBefore: string;
  breaker: string;
}

/**
 * Ledger entries for the same host recorded under a credential, when this step names no
 * credential and no Scope Key. A scope key reads provider|host|credential-hash (src/client/scope.ts
 * scopeFor), and a step without a connection computes the "anon" hash, so Send Request steps that
 * used a connection recorded their waits under scopes this step does not look at.
 */
export async function credentialScopesForHost(store: StepStore, input: ScopeInput, baseScope: string, nowMs: number): Promise<CredentialScope[]> {
  if (input.scopeKey || input.connection || !input.url) return [];
  const [, host] = baseScope.split("|");
  if (!host) return [];
  return (await store.scopesForHost(host))
    .filter(([key]) => {
      const [, keyHost, keyCredential] = key.split("|");
      return keyHost === host && keyCredential !== undefined && keyCredential !== "anon";
    })
    .map(([scope, state]) => {
      const view = viewOf(state, nowMs);
      return { scope, notBefore: view.notBefore ?? view.nextStart ?? iso(nowMs), breaker: view.breaker };
    });
}

/** The warning a backoff step gives when it found waits recorded for its host under a credential it was not given. */
export function credentialScopesWarning(found: CredentialScope[], nowMs: number, actsOn: string): string | null {
  if (found.length === 0) return null;
  const ahead = found.filter((f) => Date.parse(f.notBefore) > nowMs);
  const latest = ahead.reduce<string | null>((best, f) => (best === null || Date.parse(f.notBefore) > Date.parse(best) ? f.notBefore : best), null);
  const waits = latest ? `, ${ahead.length} of them with a not_before ahead (the latest ${latest})` : ", none with a not_before ahead";
  return (
    `No connection was given, so this step ${actsOn} the no-credential scope, but ${found.length} scope(s) for this host were recorded under a credential${waits}. ` +
    "Send Request steps that use a connection record their waits there. Pick the same connection as those steps (or use the same Scope Key)."
  );
}
