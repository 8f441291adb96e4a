import { parseHttpDate } from "./http-date";
import type { ClassifyInput, HeaderInput, IgnoredSignal } from "./types";

/**
 * Everything a dialect reads, normalised once: lower-case headers, the parsed body, the host,
 * and two clocks. `nowMs` is the local clock; `serverNowMs` is the response's own `Date` when it
 * has a valid one, so that absolute times (HTTP-dates, epoch resets) are measured clock-skew safe.
 */
export interface SignalContext {
  method: string;
  host: string;
  path: string;
  status: number;
  nowMs: number;
  serverNowMs: number;
  body: unknown;
  bodyText: string;
  header(name: string): string | undefined;
  /** Records a signal that is present but unusable. */
  ignore(signal: string, value: string, why: string): void;
  /** Records a deviation from the standard that was read anyway. */
  deviate(note: string): void;
  readonly ignored: IgnoredSignal[];
  readonly deviations: string[];
}

function headerText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.map(String).join(", ");
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** A name with no upper-case letter needs no lower-casing. */
const LOWER = /^[^A-Z]*$/;

export function normaliseHeaders(headers: HeaderInput | undefined): Map<string, string> {
  const map = new Map<string, string>();
  if (!headers || typeof headers !== "object") return map;
  // Object.keys rather than Object.entries: no [name, value] array per header on a per-answer path.
  const source = headers as Record<string, unknown>;
  for (const name of Object.keys(source)) {
    const text = headerText(source[name]);
    if (text === undefined) continue;
    const key = LOWER.test(name) ? name : name.toLowerCase();
    const previous = map.get(key);
    map.set(key, previous === undefined ? text.trim() : `${previous}, ${text.trim()}`);
  }
  return map;
}

/**
 * Bodies arrive as objects (axios json), strings (text, fixtures) or buffers; JSON text is parsed.
 * The text of an object body is only made when a dialect asks for it (most never do).
 */
function readBody(body: unknown): { body: unknown; bodyText: () => string } {
  if (body === undefined || body === null) return { body: null, bodyText: () => "" };
  if (typeof body === "string") {
    const trimmed = body.trim();
    if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
      try {
        return { body: JSON.parse(trimmed) as unknown, bodyText: () => body };
      } catch {
        return { body, bodyText: () => body };
      }
    }
    return { body, bodyText: () => body };
  }
  if (typeof body === "object") {
    if (body instanceof Uint8Array) {
      return readBody(new TextDecoder().decode(body));
    }
    return {
      body,
      bodyText: () => {
        try {
          return JSON.stringify(body) ?? "";
        } catch {
          // Circular or BigInt-bearing objects: the structure is still readable, the text is not.
          return "";
        }
      },
    };
  }
  return { body, bodyText: () => String(body) };
}

/**
 * A host name as dialects and scopes compare it: lower case, without the trailing dot of a fully
 * qualified name. "api.github.com." is the same host as "api.github.com" (RFC 1034 §3.1: the
 * trailing dot only marks the name as absolute), so it keeps its dialect and its scope.
 */
export function normaliseHost(host: string): string {
  let end = host.length;
  while (end > 0 && host.charCodeAt(end - 1) === 46) end--;
  return host.slice(0, end).toLowerCase();
}

export function readUrl(url: string | undefined): { host: string; path: string } {
  if (!url) return { host: "", path: "" };
  try {
    const parsed = new URL(url, "http://unknown.invalid");
    const host = parsed.hostname === "unknown.invalid" ? "" : normaliseHost(parsed.hostname);
    return { host, path: parsed.pathname };
  } catch {
    return { host: "", path: "" };
  }
}

/**
 * A class rather than an object of closures: contexts are made once per response on a hot path,
 * and methods on a prototype cost nothing to create.
 */
const SECOND_MS = 1000;


class ResponseContext implements SignalContext {
  readonly method: string;
  readonly host: string;
  readonly path: string;
  readonly status: number;
  readonly nowMs: number;
  readonly body: unknown;
  readonly ignored: IgnoredSignal[] = [];
  readonly deviations: string[] = [];
  private readonly headers: Map<string, string>;
  private readonly makeBodyText: () => string;
  private bodyTextCache: string | undefined;
  private serverNowCache: number | undefined;

  constructor(
    input: ClassifyInput,
    nowMs: number,
    private readonly serverClockOffsetMs?: number,
    urlParts?: { host: string; path: string },
  ) {
    this.headers = normaliseHeaders(input.response.headers);
    const { body, bodyText } = readBody(input.response.body);
    this.body = body;
    this.makeBodyText = bodyText;
    const { host, path } = urlParts ?? readUrl(input.request?.url);
    this.host = host;
    this.path = path;
    this.method = (input.request?.method ?? "GET").toUpperCase();
    this.status = input.response.status;
    this.nowMs = nowMs;
  }

  /** The response's own Date, read only when a wait is measured against it (most answers carry none). */
  get serverNowMs(): number {
    if (this.serverNowCache !== undefined) return this.serverNowCache;
    let serverNowMs = this.nowMs;
    const dateHeader = this.headers.get("date");
    if (dateHeader !== undefined) {
      const parsed = parseHttpDate(dateHeader, this.nowMs, { tolerant: true });
      if (parsed) serverNowMs = this.learnedServerNow(parsed.epochMs);
      else this.ignore("date", dateHeader, "not an HTTP-date; waits are measured on the local clock");
      if (parsed?.form === "tolerant") this.deviate(`date as a non-standard HTTP-date (${parsed.notes?.join(", ") ?? "tolerant reading"})`);
    }
    this.serverNowCache = serverNowMs;
    return serverNowMs;
  }

  /**
   * The server's now from the offset learned over earlier answers, when this answer's Date agrees
   * with it (a truncated Date is up to a second behind the server's clock; the learned offset is
   * not); else this Date.
   */
  private learnedServerNow(dateMs: number): number {
    if (this.serverClockOffsetMs === undefined) return dateMs;
    const learnedMs = this.nowMs + this.serverClockOffsetMs;
    return learnedMs >= dateMs - SECOND_MS && learnedMs < dateMs + 2 * SECOND_MS ? Math.max(dateMs, learnedMs) : dateMs;
  }

  get bodyText(): string {
    this.bodyTextCache ??= this.makeBodyText();
    return this.bodyTextCache;
  }

  header(name: string): string | undefined {
    // The engine asks by lower-case name (dozens of times per answer); others may not.
    return this.headers.get(name) ?? (LOWER.test(name) ? undefined : this.headers.get(name.toLowerCase()));
  }

  ignore(signal: string, value: string, why: string): void {
    // A header read twice (by a dialect and by classify's shared wait reader) is reported once.
    if (this.ignored.some((i) => i.signal === signal && i.value === value && i.why === why)) return;
    this.ignored.push({ signal, value, why });
  }

  deviate(note: string): void {
    if (!this.deviations.includes(note)) this.deviations.push(note);
  }
}

export function createContext(input: ClassifyInput, nowMs: number, serverClockOffsetMs?: number, urlParts?: { host: string; path: string }): SignalContext {
  return new ResponseContext(input, nowMs, serverClockOffsetMs, urlParts);
}

/** Safe property access into a parsed JSON body. */
export function field(value: unknown, ...path: (string | number)[]): unknown {
  let current: unknown = value;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function asNumber(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}
