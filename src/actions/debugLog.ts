/**
 * Debug Request: the request and the final response as two JSON lines in the step's log, like
 * spectral's createClient({ debug }) prints them, but with no credential in them: the client's
 * redactor removes every secret of the connection (and its URL and base64 encodings), credential
 * headers show [redacted], and query parameter values are left out (an API key may travel there).
 */
import type { ActionContext } from "@prismatic-io/spectral";
import { createRedactor, type ThrottleResult } from "../client";
import type { ConnectionAuth } from "../connections";

const HIDDEN = "[redacted]";
/** Header names that carry credentials whatever the API calls them (a step's own X-Service-Token...). */
const CREDENTIAL_HEADER_NAME = /auth|key|token|secret|passw|signature|cookie|session/i;
/** Bodies larger than this are summarised by size, as spectral's debug output does. */
const LARGEST_LOGGED_BODY_BYTES = 10 * 1024;

export interface DebugRequestLine {
  method: string;
  url: string;
  baseUrl?: string;
  queryParams: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  /** Set for a multipart body: its parts, never their contents. */
  bodySummary?: string;
}

export interface DebugLog {
  request(line: DebugRequestLine): void;
  response(result: ThrottleResult): void;
  failure(error: unknown): void;
}

function bodyPreview(body: unknown): unknown {
  if (body === undefined || body === null) return body ?? null;
  if (Buffer.isBuffer(body) || body instanceof ArrayBuffer) return `<binary data (${body.byteLength} bytes)>`;
  const size = Buffer.byteLength(typeof body === "string" ? body : (JSON.stringify(body) ?? ""));
  return size > LARGEST_LOGGED_BODY_BYTES ? `<data (${size} bytes)>` : body;
}

/** The URL with query parameter names kept and their values dropped. */
function loggableUrl(url: string, baseUrl: string | undefined, queryNames: string[]): string {
  const full = /^https?:\/\//i.test(url) || !baseUrl ? url : `${baseUrl.replace(/\/+$/, "")}/${url.replace(/^\/+/, "")}`;
  let parsed: URL;
  try {
    parsed = new URL(full);
  } catch {
    return "(an unreadable URL)";
  }
  const names = [...new Set([...parsed.searchParams.keys(), ...queryNames])];
  return `${parsed.origin}${parsed.pathname}${names.length === 0 ? "" : `?${names.map((n) => `${n}=…`).join("&")}`}`;
}

/** A logger for one Send Request step; every line goes through the redactor first. */
export function createDebugLog(context: Pick<ActionContext, "logger">, auth: ConnectionAuth, stepHeaders: Record<string, string>): DebugLog {
  const probe = createRedactor([], Object.keys(auth.headers));
  const isCredentialHeader = (name: string) => probe.isSensitiveHeader(name) || CREDENTIAL_HEADER_NAME.test(name);
  const stepSecrets = Object.entries(stepHeaders)
    .filter(([name]) => isCredentialHeader(name))
    .map(([, value]) => value);
  const redactor = createRedactor([...auth.secrets, ...stepSecrets], Object.keys(auth.headers));
  const write = (line: Record<string, unknown>) => context.logger.info(redactor.text(JSON.stringify(redactor.value(line))));
  const headersShown = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, isCredentialHeader(name) ? HIDDEN : value]));

  return {
    request(line) {
      write({
        type: "request",
        method: line.method,
        url: loggableUrl(line.url, line.baseUrl, [...Object.keys(auth.params), ...Object.keys(line.queryParams)]),
        headers: headersShown({ ...auth.headers, ...line.headers }),
        body: line.bodySummary ?? bodyPreview(line.body),
      });
    },
    response(result) {
      write({
        type: "response",
        outcome: result.outcome,
        status: result.status,
        attempts: result.attempts.length,
        // The client has already dropped credential headers from the response and redacted the rest.
        headers: headersShown(result.headers),
        body: bodyPreview(result.data),
        ...(result.notBefore ? { notBefore: result.notBefore } : {}),
      });
    },
    failure(error) {
      write({ type: "response", outcome: "error", error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
    },
  };
}
