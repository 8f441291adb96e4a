/**
 * createThrottleClient: spectral's createClient (axios + axios-retry) with every retry choice
 * delegated to the engine:
 *   - axios-retry's validateResponse asks classify(): a 200 or 403 that is really a throttle
 *     (Shopify THROTTLED, GitHub remaining 0) is routed to the retry path like a 429;
 *   - retryCondition asks plan() (plus the write-safety rules and the ledger);
 *   - retryDelay returns plan()'s wait, never a constant, so Retry-After is a floor.
 * A request interceptor checks the shared not_before ledger before every call (the first and
 * each retry) and sleeps, or defers without sending, while a not_before lies ahead.
 */
import { randomUUID } from "node:crypto";
import { createClient } from "@prismatic-io/spectral/dist/clients/http";
import { AxiosError, isAxiosError, isCancel, type AxiosResponse } from "axios";
import { budgetNotBefore, classify, DEFAULT_POLICY, pickDialect, plan, requestScopeFor, type Decision, type RetryPolicy, type Verdict } from "../engine";
import { createMemoryLedger } from "../ledger";
import { abortError, cappedSleep, MAX_TIMER_MS, realClock } from "./clock";
import { ThrottleDeferredError, ThrottleInputError, WriteOutcomeUnknownError } from "./errors";
import { createRedactor } from "./redact";
import { belongsElsewhere, fingerprint, scopeFor, scopeWithParts } from "./scope";
import type { AttemptRecord, ThrottleClient, ThrottleClientOptions, ThrottleRequest, ThrottleResult } from "./types";

const METHODS = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "POST", "PATCH"]);
/** Methods whose repetition has no extra effect (RFC 9110 9.2.2); POST and PATCH are not. */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);
/** Providers that document an idempotency header for writes; a key is generated and reused across attempts. */
const PROVIDER_IDEMPOTENCY_HEADER: Readonly<Record<string, string>> = { stripe: "Idempotency-Key" };
const DEFAULT_BREAKER_THRESHOLD = 3;

/** Thrown inside the interceptor when the ledger says "not before T" and T is too far to sleep. */
class LedgerBlocked extends Error {
  constructor(
    readonly notBeforeMs: number,
    readonly blockReason: string,
  ) {
    super("blocked by the ledger");
  }
}

type FinalState =
  | { kind: "long_wait"; notBeforeMs: number; reason: string }
  | { kind: "gave_up"; notBefore: string | null; reason: string }
  | { kind: "write_unknown"; code: string };

function checkPolicy(policy: RetryPolicy): void {
  const whole = (name: keyof RetryPolicy, min: number) => {
    const value = policy[name];
    if (typeof value !== "number" || !Number.isFinite(value) || value < min) {
      throw new ThrottleInputError(`Invalid policy.${name}: ${String(value)} is not a number >= ${min}. Give a finite number (milliseconds for *Ms fields).`);
    }
  };
  whole("maxAttempts", 1);
  whole("maxTotalMs", 0);
  whole("maxInlineWaitMs", 0);
  whole("backoffBaseMs", 0);
  whole("backoffCapMs", 0);
  if (!["full", "equal", "decorrelated", "none"].includes(policy.jitter)) {
    throw new ThrottleInputError(`Invalid policy.jitter: "${String(policy.jitter)}". Use full, equal, decorrelated or none.`);
  }
}

function resolveUrl(baseUrl: string | undefined, url: string): URL {
  const trimmed = url.trim();
  let text = trimmed;
  if (!/^https?:\/\//i.test(trimmed)) {
    if (!baseUrl) {
      throw new ThrottleInputError(`Invalid url "${trimmed.slice(0, 200)}": it is not an absolute http(s) URL and no base URL is set. Give a full URL such as https://api.example.com/items, or set the connection's base URL.`);
    }
    text = `${baseUrl.replace(/\/+$/, "")}/${trimmed.replace(/^\/+/, "")}`;
  }
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new ThrottleInputError(`Invalid url "${text.slice(0, 200)}": it cannot be parsed as a URL. Give a full URL such as https://api.example.com/items.`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ThrottleInputError(`Invalid url "${text.slice(0, 200)}": only http and https are supported.`);
  }
  return parsed;
}

/** The path for logs: query parameter names kept, their values dropped (they may carry keys or personal data). */
function loggablePath(url: URL, params: Record<string, string> | undefined): string {
  const names = [...new Set([...url.searchParams.keys(), ...Object.keys(params ?? {})])];
  return names.length === 0 ? url.pathname : `${url.pathname}?${names.map((n) => `${n}=…`).join("&")}`;
}

function plainHeaders(headers: unknown): Record<string, string> {
  const source = headers && typeof (headers as { toJSON?: unknown }).toJSON === "function" ? (headers as { toJSON(): unknown }).toJSON() : headers;
  const out: Record<string, string> = {};
  if (!source || typeof source !== "object") return out;
  for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
    if (value === undefined || value === null) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.map(String).join(", ") : String(value);
  }
  return out;
}

/** The verdict for a call that got no response: transient for reads, unknown outcome for writes. */
function noResponseVerdict(provider: string, code: string): Verdict {
  return {
    provider,
    status: 0,
    throttled: false,
    retryable: true,
    limitType: "server",
    minWaitMs: null,
    waitSource: null,
    retryAllowed: null,
    writeNotProcessed: false,
    scope: {},
    budget: null,
    ignored: [],
    deviations: [],
    reason: `No response (${code}): a timeout or dropped connection; retry with backoff if the request is safe to repeat.`,
  };
}

/**
 * A GraphQL operation with no mutation is a read (GraphQL spec: a query is a read-only fetch),
 * even when it travels as a POST, so repeating it is safe.
 */
export function isGraphqlReadOnly(data: unknown): boolean {
  let body: unknown = data;
  if (typeof data === "string") {
    try {
      body = JSON.parse(data) as unknown;
    } catch {
      return false;
    }
  }
  const query = body !== null && typeof body === "object" ? (body as { query?: unknown }).query : undefined;
  if (typeof query !== "string") return false;
  const code = query.replace(/#[^\n]*/g, " ");
  return !/\b(mutation|subscription)\b/.test(code);
}

function sensitiveHeaderValues(headers: Record<string, string> | undefined, isSensitive: (name: string) => boolean): string[] {
  return Object.entries(headers ?? {})
    .filter(([name]) => isSensitive(name))
    .map(([, value]) => value);
}

export function createThrottleClient(options: ThrottleClientOptions = {}): ThrottleClient {
  const clock = options.clock ?? realClock;
  const random = options.random ?? Math.random;
  const logger = options.logger;
  const policy: RetryPolicy = { ...DEFAULT_POLICY, ...options.policy };
  checkPolicy(policy);
  const breakerThreshold = options.breakerThreshold ?? DEFAULT_BREAKER_THRESHOLD;
  if (!Number.isInteger(breakerThreshold) || breakerThreshold < 1) {
    throw new ThrottleInputError(`Invalid breakerThreshold: ${String(breakerThreshold)}. Use a whole number of consecutive throttles, 1 or more.`);
  }
  const budgetThreshold = options.budgetThreshold ?? 0;
  if (!Number.isFinite(budgetThreshold) || budgetThreshold < 0) {
    throw new ThrottleInputError(`Invalid budgetThreshold: ${String(budgetThreshold)}. Use a number of remaining requests, 0 or more.`);
  }
  if (options.baseUrl) resolveUrl(options.baseUrl, "/");
  const onLongWait = options.onLongWait ?? "fail";

  // Secrets: what the caller named, plus whatever sits in credential headers, so plain Node users
  // who only pass an Authorization header are covered too.
  const probeRedactor = createRedactor([]);
  const credentialMaterial = [
    ...(typeof options.credential === "string" ? [options.credential] : (options.credential ?? [])),
    ...sensitiveHeaderValues(options.headers, probeRedactor.isSensitiveHeader),
  ];
  const secretList = [...credentialMaterial, ...(options.secrets ?? [])];
  const clientRedactor = createRedactor(secretList);
  const credentialFingerprint = fingerprint(credentialMaterial);
  const ledger = options.ledger ?? createMemoryLedger({ warn: (m) => logger?.warn(clientRedactor.text(m)) });

  const providerOf = (url: URL) => pickDialect({ provider: options.provider, request: { url: url.toString() } }).dialect.id;
  const baseScopeOf = (url: URL) => options.scopeKey ?? scopeFor({ provider: providerOf(url), host: url.host, fingerprint: credentialFingerprint });

  async function request(req: ThrottleRequest): Promise<ThrottleResult> {
    // Credential headers given on this request only (a token passed as a step header) are secrets too.
    const requestSecrets = sensitiveHeaderValues(req.headers, probeRedactor.isSensitiveHeader);
    const redactor = requestSecrets.length === 0 ? clientRedactor : createRedactor([...secretList, ...requestSecrets]);
    const log = (fields: Record<string, unknown>): void => {
      logger?.info(redactor.text(JSON.stringify({ event: "throttle_decision", ...fields })));
    };
    const method = String(req.method ?? "").trim().toUpperCase();
    if (!METHODS.has(method)) {
      throw new ThrottleInputError(`Invalid method "${redactor.text(String(req.method)).slice(0, 40)}". Use one of ${[...METHODS].join(", ")}.`);
    }
    if (typeof req.url !== "string" || req.url.trim() === "") throw new ThrottleInputError("Invalid url: it is empty. Give a full URL, or a path together with a base URL.");
    let url: URL;
    try {
      url = resolveUrl(options.baseUrl, req.url);
    } catch (error) {
      throw new ThrottleInputError(redactor.text((error as Error).message));
    }
    const timeoutMs = req.timeoutMs ?? options.timeoutMs;
    if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs < 0 || timeoutMs > MAX_TIMER_MS)) {
      throw new ThrottleInputError(`Invalid timeout: ${String(timeoutMs)}. Use a number of milliseconds from 0 to ${MAX_TIMER_MS}.`);
    }

    const provider = providerOf(url);
    const baseScope = baseScopeOf(url);
    const path = loggablePath(url, { ...options.params, ...req.params });
    const isWrite = !IDEMPOTENT.has(method);
    const signal = [options.signal, req.signal].filter((s): s is AbortSignal => s !== undefined).reduce<AbortSignal | undefined>((acc, s) => (acc ? AbortSignal.any([acc, s]) : s), undefined);

    // Idempotency: the caller's key, a key already in the headers, or one generated for providers
    // that document it. The same key goes out on every attempt, which is what makes a retry safe.
    const headers: Record<string, string> = { ...options.headers, ...req.headers };
    const existingKeyHeader = Object.keys(headers).find((n) => n.toLowerCase() === "idempotency-key");
    let idempotencyKey = req.idempotencyKey?.trim() || (existingKeyHeader ? headers[existingKeyHeader] : undefined);
    const providerKeyHeader = PROVIDER_IDEMPOTENCY_HEADER[provider];
    if (!idempotencyKey && isWrite && providerKeyHeader) idempotencyKey = randomUUID();
    if (idempotencyKey && !existingKeyHeader) headers[providerKeyHeader ?? "Idempotency-Key"] = idempotencyKey;
    const writeSafe = !isWrite || Boolean(idempotencyKey) || (method === "POST" && isGraphqlReadOnly(req.data));

    const startedAtMs = clock.nowMs();
    const deadlineMs = Math.min(startedAtMs + policy.maxTotalMs, policy.deadlineMs ?? Number.POSITIVE_INFINITY);
    const attempts: AttemptRecord[] = [];
    const verdicts = new WeakMap<object, Verdict>();
    let lastVerdict: Verdict | null = null;
    let ownNotBeforeMs = 0;
    let pendingWaitMs = 0;
    let previousWaitMs: number | null = null;
    let ledgerWaitMs = 0;
    // Set inside axios-retry's callbacks; the cast stops TypeScript narrowing it to null here.
    let final = null as FinalState | null;

    // The parts this request will count against, known before it is sent (GitHub's resource,
    // Slack's method): entries of other parts of the same API do not hold it back.
    const requestParts = requestScopeFor({ provider: options.provider, request: { method, url: url.toString() } });
    /**
     * Where a throttle is recorded: under the scope the answer named, and under the base too unless
     * the dialect can place requests in their part before sending them (requestParts). Without
     * that, a request could not tell whether a sub-scope's not_before is its own, so the base
     * holds everyone back: waiting too long costs time, coming back early costs a throttle.
     */
    const scopesFor = (verdict: Verdict | null) => {
      const full = verdict ? scopeWithParts(baseScope, verdict.scope) : baseScope;
      if (full === baseScope) return [baseScope];
      return Object.keys(requestParts).length > 0 ? [full] : [baseScope, full];
    };

    /** The ledger keys that apply to this request: the base scope and its dialect sub-scopes, less other parts'. */
    const scopesUnderBase = (): string[] =>
      Object.keys(ledger.entries()).filter((k) => (k === baseScope || k.startsWith(`${baseScope}|`)) && !belongsElsewhere(k, baseScope, requestParts));

    /** The gate: every scope key under this base (the base and any dialect sub-scopes) must be free. */
    async function gate(): Promise<void> {
      for (;;) {
        const nowMs = clock.nowMs();
        let blockedUntilMs = ownNotBeforeMs;
        let blockReason = "this request's own retry wait";
        for (const key of scopesUnderBase()) {
          const g = ledger.gate(key, nowMs);
          if (g.blockedUntilMs > blockedUntilMs) {
            blockedUntilMs = g.blockedUntilMs;
            blockReason = g.reason ?? "a not_before in the ledger";
          }
        }
        if (blockedUntilMs <= nowMs) return;
        const waitMs = blockedUntilMs - nowMs;
        const fromLedger = blockedUntilMs > ownNotBeforeMs;
        if (fromLedger && (waitMs > policy.maxInlineWaitMs || blockedUntilMs > deadlineMs)) {
          log({ provider, method, path, scope: baseScope, attempt: attempts.length + 1, status: null, waitMs, waitSource: "ledger", decision: "defer_before_call", remaining: null, reason: blockReason });
          throw new LedgerBlocked(blockedUntilMs, blockReason);
        }
        if (fromLedger) {
          log({ provider, method, path, scope: baseScope, attempt: attempts.length + 1, status: null, waitMs, waitSource: "ledger", decision: "wait_before_call", remaining: null, reason: blockReason });
          ledgerWaitMs += waitMs;
        }
        await cappedSleep(clock, Math.min(waitMs, MAX_TIMER_MS), signal);
      }
    }

    /** validateResponse: the engine reads the response; only a throttle or a retryable failure goes to retryCondition. */
    function validateResponse(response: AxiosResponse): boolean {
      const nowMs = clock.nowMs();
      const verdict = classify(
        { request: { method, url: url.toString() }, response: { status: response.status, headers: plainHeaders(response.headers), body: response.data as unknown }, provider: options.provider },
        { nowMs },
      );
      verdicts.set(response, verdict);
      lastVerdict = verdict;
      if (verdict.throttled || verdict.retryable) return false;
      // A final answer: the scope is not throttling. Close every breaker the gate consults (the
      // base and its dialect sub-scopes): a throttle may have been recorded under a sub-scope this
      // answer does not name (HubSpot's policy, GitHub's resource), and a breaker left half-open
      // there would hold every other request back for the whole probe lease.
      for (const scope of scopesUnderBase()) ledger.recordSuccess(scope, nowMs);
      const paceAt = budgetNotBefore(verdict, budgetThreshold, nowMs);
      if (paceAt !== null) {
        ledger.setIfLater(
          scopesFor(verdict).at(-1) ?? baseScope,
          { notBefore: paceAt, provider, limitType: "burst", reason: `Budget at ${verdict.budget?.remaining ?? "?"} (threshold ${budgetThreshold}); the next request waits until it refills.` },
          nowMs,
        );
      }
      attempts.push({ status: response.status, waitMs: 0, waitSource: null });
      log({ provider, method, path, scope: baseScope, attempt: attempts.length, status: response.status, waitMs: 0, waitSource: null, decision: "done", remaining: verdict.budget?.remaining ?? null, paceUntil: paceAt, reason: verdict.reason });
      return true;
    }

    /** retryCondition: the engine plans the next step; writes without a key are never repeated. */
    function retryCondition(error: AxiosError): boolean {
      const nowMs = clock.nowMs();
      if (isCancel(error) || signal?.aborted) return false;
      const response = error.response;
      const status = response?.status ?? null;
      if (!response) {
        const code = error.code ?? "ERR_NETWORK";
        if (!writeSafe) {
          final = { kind: "write_unknown", code };
          attempts.push({ status: null, waitMs: 0, waitSource: null });
          log({ provider, method, path, scope: baseScope, attempt: attempts.length, status: null, waitMs: 0, waitSource: null, decision: "fail_write_unknown", remaining: null, reason: code });
          return false;
        }
      }
      const verdict = response ? (verdicts.get(response) ?? noResponseVerdict(provider, "unclassified")) : noResponseVerdict(provider, error.code ?? "ERR_NETWORK");
      lastVerdict = verdict;
      let decision: Decision = plan(verdict, { attempts: attempts.length + 1, firstAttemptAtMs: startedAtMs, previousWaitMs }, { ...policy, deadlineMs: Number.isFinite(deadlineMs) ? deadlineMs : null }, { nowMs, random });

      // A throttle answer is a refusal: the server did not carry the request out, so repeating a
      // write is safe (RFC 6585 section 4, https://www.rfc-editor.org/rfc/rfc6585#section-4). A 5xx
      // may have been partly processed, and no response at all says nothing: both stay unsafe.
      const refusedByThrottle = options.retryWritesAfterThrottle !== false && verdict.throttled && response !== undefined && response.status < 500;
      let unsafeWrite = false;
      if (decision.decision === "retry" && !writeSafe && !verdict.writeNotProcessed && !refusedByThrottle) {
        unsafeWrite = true;
        decision = {
          decision: "fail",
          notBefore: decision.notBefore,
          reason: `${method} is not retried without an idempotency key (the dialect does not document that a throttled write is not processed); set idempotencyKey to make it safe. ${verdict.reason}`,
        };
      }

      // Throttles go to the ledger at the server's floor so that every client of the scope waits.
      if (verdict.throttled) {
        const floorMs = verdict.minWaitMs ?? (decision.decision === "retry" || decision.decision === "defer" ? decision.waitMs : 0);
        const write = { notBefore: new Date(nowMs + floorMs).toISOString(), provider, limitType: verdict.limitType, reason: verdict.reason };
        for (const scope of scopesFor(verdict)) ledger.recordThrottle(scope, write, nowMs, breakerThreshold);
      }

      const waitMs = decision.decision === "retry" || decision.decision === "defer" ? decision.waitMs : 0;
      attempts.push({ status, waitMs: decision.decision === "retry" ? waitMs : 0, waitSource: decision.decision === "retry" ? decision.waitSource : null });
      log({
        provider,
        method,
        path,
        scope: baseScope,
        attempt: attempts.length,
        status,
        waitMs,
        waitSource: decision.decision === "retry" ? decision.waitSource : verdict.waitSource,
        decision: decision.decision,
        remaining: verdict.budget?.remaining ?? null,
        reason: decision.reason,
      });

      if (decision.decision === "retry") {
        pendingWaitMs = decision.waitMs;
        previousWaitMs = decision.waitMs;
        ownNotBeforeMs = nowMs + decision.waitMs;
        return true;
      }
      if (decision.decision === "defer") final = { kind: "long_wait", notBeforeMs: nowMs + decision.waitMs, reason: decision.reason };
      else if (decision.decision === "fail" && decision.notBefore !== null && verdict.throttled && !unsafeWrite) final = { kind: "long_wait", notBeforeMs: Date.parse(decision.notBefore), reason: decision.reason };
      else final = { kind: "gave_up", notBefore: decision.decision === "fail" ? decision.notBefore : null, reason: decision.reason };
      return false;
    }

    const http = createClient({
      timeout: timeoutMs,
      responseType: req.responseType ?? options.responseType ?? "json",
      retryConfig: {
        // plan() enforces maxAttempts; axios-retry must never stop first, or retryCondition would
        // not be asked about the last response.
        retries: policy.maxAttempts,
        shouldResetTimeout: true,
        validateResponse,
        retryCondition,
        // With the real clock axios-retry takes the engine's wait itself; with an injected clock the
        // gate takes it through clock.sleep (virtual time), so axios-retry must not sleep too.
        retryDelay: () => (options.clock ? 0 : Math.min(pendingWaitMs, MAX_TIMER_MS)),
      },
    });
    const adapter = options.adapter;
    if (adapter) {
      // axios leaves validateStatus to the adapter; an in-process adapter may not apply it, and
      // axios-retry relies on it to send every response through validateResponse.
      http.defaults.adapter = async (config) => {
        const response = await adapter(config);
        if (!config.validateStatus || config.validateStatus(response.status)) return response;
        const code = response.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST;
        throw new AxiosError(`Request failed with status code ${response.status}`, code, config, response.request, response);
      };
    }
    http.interceptors.request.use(async (config) => {
      await gate();
      return config;
    });

    const resultBase = () => ({ attempts, ledgerWaitMs, scope: baseScope, provider, verdict: lastVerdict });
    const longWait = (notBeforeMs: number, reason: string, response: AxiosResponse | undefined): ThrottleResult => {
      const waitMs = Math.max(0, notBeforeMs - clock.nowMs());
      const notBefore = new Date(notBeforeMs).toISOString();
      if (onLongWait === "fail") {
        throw new ThrottleDeferredError({ notBefore, waitMs, provider, scope: baseScope, reason: redactor.text(reason), verdict: redactor.value(lastVerdict), attempts: attempts.length });
      }
      return {
        outcome: "deferred",
        status: response?.status ?? null,
        headers: response ? redactor.headers(plainHeaders(response.headers)) : {},
        data: response ? redactor.value(response.data as unknown) : null,
        notBefore,
        waitMs,
        reason: redactor.text(reason),
        ...resultBase(),
        verdict: redactor.value(lastVerdict),
      };
    };

    try {
      const response = await http.request({ url: url.toString(), method, data: req.data, headers, params: { ...options.params, ...req.params }, signal });
      const verdict = verdicts.get(response) ?? lastVerdict;
      return {
        outcome: response.status < 400 ? "success" : "http_error",
        status: response.status,
        headers: redactor.headers(plainHeaders(response.headers)),
        data: redactor.value(response.data as unknown),
        reason: redactor.text(verdict?.reason ?? `HTTP ${response.status}`),
        ...resultBase(),
        verdict: redactor.value(verdict),
      };
    } catch (error) {
      if (error instanceof LedgerBlocked) return longWait(error.notBeforeMs, error.blockReason, undefined);
      if (error instanceof Error && error.name === "AbortError") throw error;
      if (signal?.aborted) throw abortError(signal);
      const settled = final;
      if (settled?.kind === "write_unknown") throw new WriteOutcomeUnknownError({ method, path, code: settled.code });
      const response = isAxiosError(error) ? error.response : undefined;
      if (settled?.kind === "long_wait") return longWait(settled.notBeforeMs, settled.reason, response);
      if (isAxiosError(error) || settled?.kind === "gave_up") {
        return {
          outcome: "gave_up",
          status: response?.status ?? null,
          headers: response ? redactor.headers(plainHeaders(response.headers)) : {},
          data: response ? redactor.value(response.data as unknown) : null,
          ...(settled?.kind === "gave_up" && settled.notBefore ? { notBefore: settled.notBefore } : {}),
          reason: redactor.text(settled?.kind === "gave_up" ? settled.reason : `${method} ${path} failed: ${(error as Error).message}`),
          ...resultBase(),
          verdict: redactor.value(lastVerdict),
        };
      }
      // Anything else (a bug, a thrown adapter error): never let it carry request config or secrets out.
      const wrapped = new Error(redactor.text(`${method} ${path} failed: ${error instanceof Error ? error.message : String(error)}`));
      wrapped.name = error instanceof Error ? error.name : "Error";
      throw wrapped;
    }
  }

  return {
    request,
    ledger,
    scopeOf: (url) => baseScopeOf(resolveUrl(options.baseUrl, url)),
    requestPartsOf: (url, method = "GET") => requestScopeFor({ provider: options.provider, request: { method, url: resolveUrl(options.baseUrl, url).toString() } }),
  };
}
