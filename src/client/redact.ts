/** Header names whose values are credentials, whatever the API. */
const SENSITIVE_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "api-key",
  "apikey",
  "x-auth-token",
  "x-access-token",
  "x-shopify-access-token",
]);

export const REDACTED = "[redacted]";

export interface Redactor {
  text(value: string): string;
  /** Deep copy with every secret substring replaced. */
  value<T>(value: T): T;
  /** Drops credential headers and redacts secrets in the rest. */
  headers(headers: Record<string, string>): Record<string, string>;
  isSensitiveHeader(name: string): boolean;
  readonly secretCount: number;
}

function variants(secret: string): string[] {
  const out = new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString("base64")]);
  return [...out];
}

/**
 * Removes secrets from anything the component shows: logs, results and error messages. Values
 * shorter than 4 characters are not treated as secrets (they would blank out ordinary text).
 */
export function createRedactor(secrets: readonly string[], extraHeaderNames: readonly string[] = []): Redactor {
  const needles = [...new Set(secrets.filter((s) => typeof s === "string" && s.length >= 4).flatMap(variants))].sort((a, b) => b.length - a.length);
  const headerNames = new Set([...SENSITIVE_HEADERS, ...extraHeaderNames.map((n) => n.toLowerCase())]);

  const text = (value: string): string => {
    let out = value;
    for (const needle of needles) if (out.includes(needle)) out = out.split(needle).join(REDACTED);
    return out;
  };

  const deep = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return text(value);
    if (depth > 50 || value === null || typeof value !== "object") return value;
    if (Buffer.isBuffer(value)) return needles.some((n) => value.includes(n)) ? Buffer.from(text(value.toString("utf8"))) : value;
    if (Array.isArray(value)) return value.map((v) => deep(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[text(k)] = deep(v, depth + 1);
    return out;
  };

  return {
    text,
    value: <T>(value: T): T => (needles.length === 0 ? value : (deep(value, 0) as T)),
    headers(headers) {
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) {
        if (headerNames.has(name.toLowerCase())) continue;
        out[name] = text(value);
      }
      return out;
    },
    isSensitiveHeader: (name) => headerNames.has(name.toLowerCase()),
    secretCount: needles.length,
  };
}
