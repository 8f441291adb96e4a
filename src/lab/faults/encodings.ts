/**
 * Every form a secret can take on its way out: what the client itself produces (raw, axios's
 * query encoding, encodeURIComponent, application/x-www-form-urlencoded, the WHATWG URL
 * serializer, base64 and Basic's base64 of "user:password", JSON escapes) and what an echo may
 * do to it (change its case, escape it twice, HTML-escape it). The fuzz target, the fault suite
 * and the secret search all look for these, so "0 hits" means the same thing everywhere.
 */

export interface SecretForm {
  encoding: string;
  text: string;
  /** Base64 is case-sensitive; every other form is searched case-insensitively. */
  caseSensitive: boolean;
}

/** axios 1.x buildURL's encode (lib/helpers/buildURL.js): encodeURIComponent, then :, $, "," and space (+) put back. */
export function axiosParamEncode(value: string): string {
  return encodeURIComponent(value).replace(/%3A/gi, ":").replace(/%24/g, "$").replace(/%2C/gi, ",").replace(/%20/g, "+");
}

/** Older axios (0.x) also put back [ and ]. */
function axiosLegacyParamEncode(value: string): string {
  return axiosParamEncode(value).replace(/%5B/gi, "[").replace(/%5D/gi, "]");
}

/** JSON string escaping with every non-ASCII code unit as \uXXXX (Python's ensure_ascii, some loggers). */
function jsonAsciiEscape(value: string): string {
  return JSON.stringify(value)
    .slice(1, -1)
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function htmlEscape(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/'/g, "&#39;");
}

/** The base64 characters of `bytes` that do not depend on what precedes them at `align` (RFC 4648 4). */
export function base64Core(bytes: Buffer, align: number): string {
  const encoded = Buffer.concat([Buffer.alloc(align), bytes]).toString("base64").replace(/=+$/, "");
  const total = align + bytes.length;
  return encoded.slice([0, 2, 3][align % 3]!, Math.floor(total / 3) * 4 + [0, 1, 2][total % 3]!);
}

/** Base64 forms shorter than this are not searched (the redactor does not claim them either). */
const MIN_BASE64_SEARCH = 6;

export function secretForms(secret: string, basicUser = "user"): SecretForm[] {
  const forms: SecretForm[] = [];
  const add = (encoding: string, text: string, caseSensitive = false) => {
    const same = (f: SecretForm) => f.caseSensitive === caseSensitive && (caseSensitive ? f.text === text : f.text.toLowerCase() === text.toLowerCase());
    if (text.length > 0 && !forms.some(same)) forms.push({ encoding, text, caseSensitive });
  };
  add("raw", secret);
  add("lower-cased", secret.toLowerCase());
  add("upper-cased", secret.toUpperCase());
  add("encodeURIComponent", encodeURIComponent(secret));
  add("axios params", axiosParamEncode(secret));
  add("axios params (0.x)", axiosLegacyParamEncode(secret));
  add("form-urlencoded", new URLSearchParams({ k: secret }).toString().slice(2));
  // Mid-URL ("x" after it): at the very end the parser would also strip trailing spaces, and a
  // "#" would start the fragment.
  if (!secret.includes("#")) add("WHATWG URL query", new URL(`http://h/?${secret}x`).search.slice(1, -1));
  add("JSON-escaped", JSON.stringify(secret).slice(1, -1));
  add("JSON-escaped twice", JSON.stringify(JSON.stringify(secret).slice(1, -1)).slice(1, -1));
  add("JSON-escaped ASCII", jsonAsciiEscape(secret));
  add("HTML-escaped", htmlEscape(secret));
  const bytes = Buffer.from(secret, "utf8");
  add("base64", bytes.toString("base64"), true);
  add("base64url", bytes.toString("base64url"), true);
  const basicCore = base64Core(bytes, Buffer.byteLength(`${basicUser}:`) % 3);
  if (basicCore.length >= MIN_BASE64_SEARCH) add("base64 in Basic user:password", basicCore, true);
  return forms;
}

/** Where `haystack` holds any form of any secret; "[redacted]" markers are cut out first so they never join two halves. */
export function findSecretForms(haystack: string, secrets: readonly string[], marker = "[redacted]"): Array<{ secret: string; encoding: string; at: number }> {
  const cut = haystack.split(marker).join("\u0000");
  const lower = cut.toLowerCase();
  const hits: Array<{ secret: string; encoding: string; at: number }> = [];
  for (const secret of secrets) {
    for (const form of secretForms(secret)) {
      const at = form.caseSensitive ? cut.indexOf(form.text) : lower.indexOf(form.text.toLowerCase());
      if (at >= 0) hits.push({ secret, encoding: form.encoding, at });
    }
  }
  return hits;
}

/** How many of the secrets appear in `haystack` in any form. */
export function countSecretsIn(haystack: string, secrets: readonly string[]): number {
  return new Set(findSecretForms(haystack, secrets).map((h) => h.secret)).size;
}
