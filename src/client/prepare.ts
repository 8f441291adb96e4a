/**
 * Step 1 of a request: check what the caller asked for and shape it: the URL, the method, the
 * headers with the idempotency key, whether a repeat is safe, the scopes it counts against, the
 * redactor that knows this request's secrets, and its time limits.
 */
import { randomUUID } from "node:crypto";
import type { ResponseType } from "axios";
import { normaliseHost, pickDialect, requestScopeFor, type ScopeParts } from "../engine";
import { MAX_TIMER_MS } from "./clock";
import { ThrottleInputError } from "./errors";
import type { ClientContext, HostFacts } from "./options";
import { createRedactor, isSensitiveHeaderName, secretsFromHeaders, type Redactor } from "./redact";
import { fingerprint, scopeFor, scopeWithParts } from "./scope";
import type { ThrottleRequest } from "./types";

const METHODS = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "POST", "PATCH"]);
/** Methods whose repetition has no extra effect (RFC 9110 §9.2.2); POST and PATCH are not. */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);
/** A request that adds no headers of its own brings no secrets. */
const NO_SECRETS: readonly string[] = Object.freeze([]);
/** A request with no query parameters of its own or the client's (read, never written). */
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
/**
 * Providers that document an idempotency header for writes; a key is generated and reused across
 * attempts. Stripe's Idempotency-Key (https://docs.stripe.com/api/idempotent_requests); PayPal's
 * PayPal-Request-Id, which PayPal asks to be sent again unchanged when a write is retried after a
 * 5xx or a timeout (https://developer.paypal.com/api/rest/reference/idempotency/).
 */
const PROVIDER_IDEMPOTENCY_HEADER: Readonly<Record<string, string>> = { stripe: "Idempotency-Key", paypal: "PayPal-Request-Id" };

/** The parts of a request's resolved URL the client reads (a URL, or the same parts made without one). */
export interface RequestUrl {
  href: string;
  host: string;
  hostname: string;
  pathname: string;
  search: string;
}

export interface PreparedRequest {
  method: string;
  url: RequestUrl;
  headers: Record<string, string>;
  params: Record<string, string>;
  data: unknown;
  responseType: ResponseType;
  provider: string;
  /** What the client has found about the request's host (shared by every request to it). */
  hostFacts: HostFacts;
  isWrite: boolean;
  /** The key that goes out with every attempt (blank is none), or null. */
  idempotencyKey: string | null;
  baseScope: string;
  governorScope: string;
  requestParts: ScopeParts;
  /** The URL's host as dialects compare it and its path, parsed once for classify. */
  urlParts: { host: string; path: string };
  redactor: Redactor;
  /** Header names to strip when a redirect leaves the origin (they carry credentials). */
  sensitiveHeaderNames: string[];
  attemptTimeoutMs: number;
  startedAtMs: number;
  deadlineMs: number;
  /** No attempt starts after this (the request's latestStartMs, never later than its own timeout before the deadline). */
  latestStartMs: number;
}

export function resolveUrl(baseUrl: string | undefined, url: string): URL {
  const trimmed = url.trim();
  let text = trimmed;
  if (!/^https?:\/\//i.test(trimmed)) {
    if (!baseUrl) {
      throw new ThrottleInputError(`Invalid url "${trimmed.slice(0, 200)}": it is not an absolute http(s) URL and no base URL is set. Give a full URL such as https://api.example.com/items, or set the connection's base URL.`);
    }
    // The regular expressions only where there is a slash to drop (the usual base and path have one each at most).
    const base = baseUrl.endsWith("/") ? baseUrl.replace(/\/+$/, "") : baseUrl;
    text = `${base}/${trimmed.startsWith("/") ? trimmed.replace(/^\/+/, "") : trimmed}`;
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

/**
 * A base URL's parts, parsed once per client, for paths appended to it without parsing the whole
 * again: null where the base has a query, fragment or credentials (every URL is parsed then).
 */
export interface UrlBase {
  /** The href with no trailing slash: a path is appended after "/". */
  prefix: string;
  host: string;
  hostname: string;
  /** The pathname with no trailing slash ("" for the root). */
  pathname: string;
}

export function parseUrlBase(baseUrl: string): UrlBase | null {
  const parsed = resolveUrl(undefined, baseUrl);
  // The text rather than search and hash: a bare "?" or "#" leaves both empty, yet a path appended after it is not a path.
  if (baseUrl.includes("?") || baseUrl.includes("#") || parsed.username !== "" || parsed.password !== "") return null;
  const pathname = parsed.pathname.replace(/\/+$/, "");
  return { prefix: `${parsed.origin}${pathname}`, host: parsed.host, hostname: parsed.hostname, pathname };
}

/**
 * A path of unreserved characters and slashes (RFC 3986 §2.3) with no dot segment: WHATWG URL
 * parsing leaves it exactly as written (nothing to percent-encode, nothing to resolve).
 */
const PLAIN_PATH = /^[A-Za-z0-9\-._~/]*$/;
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/**
 * The request's URL. A plain path under the client's base is appended to the base parsed once,
 * without a URL parse per request (one was about 7 us of a loopback request: npm run bench:client);
 * test/client/prepare.test.ts checks both ways give the same parts. Anything else is parsed.
 */
export function resolveRequestUrl(ctx: ClientContext, url: string): RequestUrl {
  const base = ctx.urlBase;
  if (base && !url.includes("://")) {
    const path = url.trim().replace(/^\/+/, "");
    if (PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path)) {
      return { href: `${base.prefix}/${path}`, host: base.host, hostname: base.hostname, pathname: `${base.pathname}/${path}`, search: "" };
    }
  }
  const parsed = resolveUrl(ctx.options.baseUrl, url);
  return { href: parsed.href, host: parsed.host, hostname: parsed.hostname, pathname: parsed.pathname, search: parsed.search };
}

/** The path for logs and errors: query parameter names kept, their values dropped. */
export function logPath(req: Pick<PreparedRequest, "url" | "params">): string {
  const names = [...new Set([...new URLSearchParams(req.url.search).keys(), ...Object.keys(req.params)])];
  return names.length === 0 ? req.url.pathname : `${req.url.pathname}?${names.map((n) => `${n}=…`).join("&")}`;
}

/** The credential's fingerprint, keyed with the store's salt: computed once per client. */
function credentialFingerprint(ctx: ClientContext): Promise<string> {
  ctx.fingerprint ??= ctx.store.salt().then((salt) => fingerprint(ctx.credentialMaterial, salt));
  return ctx.fingerprint;
}

/** What scopes and dialects read of a URL. */
type UrlHost = Pick<URL, "host" | "hostname">;

/** The API's base scope for a host: made once per host (the credential's fingerprint needs the store's salt the first time). */
export async function baseScope(ctx: ClientContext, url: UrlHost): Promise<string> {
  const facts = hostFacts(ctx, url);
  if (facts.baseScope !== undefined) return facts.baseScope;
  const scope = scopeFor({ provider: facts.provider, host: url.host, fingerprint: await credentialFingerprint(ctx) });
  facts.baseScope = scope;
  return scope;
}

/** No scope parts: the dialect does not split a host's requests. */
const NO_PARTS: ScopeParts = Object.freeze({}) as ScopeParts;

/**
 * What the request's host decides (its dialect, its hostname as dialects compare it, whether the
 * dialect splits requests into scopes, the base scope once known), found once per host: the same
 * for every request to it from this client. Found afresh per request, it cost 4 to 7 points of
 * npm run bench:client's ratio to spectral.
 */
function hostFacts(ctx: ClientContext, url: UrlHost): HostFacts {
  const known = ctx.hosts.get(url.host);
  if (known) return known;
  const { dialect, unknownProvider } = pickDialect({ provider: ctx.options.provider }, url.hostname);
  const facts: HostFacts = { provider: dialect.id, classifyProvider: unknownProvider === null ? dialect.id : ctx.options.provider, hostname: normaliseHost(url.hostname), scopesRequests: dialect.requestScope !== undefined, baseScope: ctx.options.scopeKey || undefined, budgetOnSuccess: false };
  // A client talks to few hosts; bounded so a crawler of many hosts cannot grow it.
  if (ctx.hosts.size >= 256) ctx.hosts.clear();
  ctx.hosts.set(url.host, facts);
  return facts;
}

function checkMethod(req: ThrottleRequest, redactor: Redactor): string {
  // Most callers give the method as the standard writes it.
  if (typeof req.method === "string" && METHODS.has(req.method)) return req.method;
  const method = String(req.method ?? "").trim().toUpperCase();
  if (!METHODS.has(method)) throw new ThrottleInputError(`Invalid method "${redactor.text(String(req.method)).slice(0, 40)}". Use one of ${[...METHODS].join(", ")}.`);
  return method;
}

function checkTimeout(value: number | undefined): void {
  if (value !== undefined && (!Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS)) {
    throw new ThrottleInputError(`Invalid timeout: ${String(value)}. Use a number of milliseconds from 1 to ${MAX_TIMER_MS}.`);
  }
}

/**
 * The latest an attempt may start: its whole timeout before the deadline, so that no attempt is cut
 * short by the time the request has left. A start granted at the deadline itself (a scope whose
 * slots ran out the request's time: a sliding 8 per minute, 50 writers) went out with a timeout of a few
 * ms, timed out, and the request gave up where it should have been deferred with its not_before.
 * The first attempt may always start.
 */
function latestStartBefore(deadlineMs: number, startedAtMs: number, attemptTimeoutMs: number): number {
  return Math.max(startedAtMs, deadlineMs - attemptTimeoutMs);
}

function checkLatestStart(value: number | undefined): void {
  if (value !== undefined && !Number.isFinite(value)) throw new ThrottleInputError(`Invalid latestStartMs: ${String(value)}. Use an epoch-ms time, or leave it out.`);
}

/**
 * The caller's key, a key already in the headers, or one generated for providers that document it;
 * blank is no key. The header is the provider's own where it documents one (a PayPal write keyed
 * only by an Idempotency-Key header, which PayPal does not read, would be repeated unprotected).
 */
function withIdempotencyKey(headers: Record<string, string>, req: ThrottleRequest, isWrite: boolean, provider: string): string | null {
  const providerHeader = PROVIDER_IDEMPOTENCY_HEADER[provider];
  const headerName = providerHeader ?? "Idempotency-Key";
  const existingName = Object.keys(headers).find((n) => n.toLowerCase() === headerName.toLowerCase());
  if (existingName && headers[existingName]!.trim() === "") delete headers[existingName];
  const present = existingName && headers[existingName] !== undefined ? headers[existingName]!.trim() : "";
  let key = req.idempotencyKey?.trim() || present;
  if (!key && isWrite && providerHeader) key = randomUUID();
  if (key && !present) headers[headerName] = key;
  return key || null;
}

/**
 * Checks and shapes a request; a promise only the first time a provider and host are seen (the
 * base scope needs the store's salt), the request itself otherwise. A bad request throws one
 * ThrottleInputError line.
 */
export function prepareRequest(ctx: ClientContext, req: ThrottleRequest): PreparedRequest | Promise<PreparedRequest> {
  // Most requests add no headers of their own: no secrets to look for then.
  const requestSecrets = req.headers === undefined ? NO_SECRETS : secretsFromHeaders(req.headers);
  const redactor = requestSecrets.length === 0 ? ctx.redactor : createRedactor([...ctx.secrets, ...requestSecrets]);
  const method = checkMethod(req, redactor);
  if (typeof req.url !== "string" || req.url.trim() === "") throw new ThrottleInputError("Invalid url: it is empty. Give a full URL, or a path together with a base URL.");
  let url: RequestUrl;
  try {
    url = resolveRequestUrl(ctx, req.url);
  } catch (error) {
    throw new ThrottleInputError(redactor.text((error as Error).message));
  }
  checkTimeout(req.timeoutMs);
  checkLatestStart(req.latestStartMs);
  const facts = hostFacts(ctx, url);
  const provider = facts.provider;
  const params = ctx.options.params === undefined && req.params === undefined ? NO_PARAMS : { ...ctx.options.params, ...req.params };
  const headers: Record<string, string> = { ...ctx.options.headers, ...req.headers };
  const isWrite = !IDEMPOTENT.has(method);
  const idempotencyKey = withIdempotencyKey(headers, req, isWrite, provider);
  const urlParts = { host: facts.hostname, path: url.pathname };
  const requestParts = facts.scopesRequests ? requestScopeFor({ provider: ctx.options.provider, request: { method } }, urlParts) : NO_PARTS;
  const startedAtMs = ctx.clock.nowMs();
  const deadlineMs = Math.min(startedAtMs + ctx.policy.maxTotalMs, ctx.policy.deadlineMs ?? Number.POSITIVE_INFINITY);
  const attemptTimeoutMs = req.timeoutMs ?? ctx.policy.attemptTimeoutMs;
  // A plain literal with no getter: V8 builds a literal with an accessor in its slow (dictionary)
  // mode, and every later read of a field is then a slow lookup (about 2 % of a loopback request in
  // npm run bench:client). The log path is made when needed (logPath).
  const prepared: PreparedRequest = {
    method,
    url,
    headers,
    params,
    data: req.data,
    responseType: req.responseType ?? ctx.options.responseType ?? "json",
    provider,
    hostFacts: facts,
    isWrite,
    idempotencyKey,
    // Set by withBaseScope below (present from the start, so the object keeps one shape).
    baseScope: "",
    governorScope: "",
    requestParts,
    urlParts,
    redactor,
    sensitiveHeaderNames: Object.keys(headers).filter((name) => isSensitiveHeaderName(name) || redactor.text(headers[name]!) !== headers[name]),
    attemptTimeoutMs,
    startedAtMs,
    deadlineMs,
    latestStartMs: Math.min(latestStartBefore(deadlineMs, startedAtMs, attemptTimeoutMs), req.latestStartMs ?? Number.POSITIVE_INFINITY),
  };
  const known = facts.baseScope;
  return known !== undefined ? withBaseScope(prepared, known) : baseScope(ctx, url).then((base) => withBaseScope(prepared, base));
}

function withBaseScope(prepared: PreparedRequest, base: string): PreparedRequest {
  prepared.baseScope = base;
  prepared.governorScope = prepared.requestParts === NO_PARTS ? base : scopeWithParts(base, prepared.requestParts);
  return prepared;
}
