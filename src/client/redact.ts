/**
 * Redaction: no secret in a log line, a result, an error or persisted state, in any encoding the
 * client or a server's echo can give it.
 *
 * One pass per string. Every secret becomes one "tolerant" pattern in which each character may
 * appear as itself or in any encoding met on the way: percent-encoding (encodeURIComponent,
 * axios's param encoding, application/x-www-form-urlencoded, the WHATWG URL serializer, in upper
 * or lower hex), `+` or `%20` for a space, JSON escapes (once or twice, `\"`, `\\`, `\n`,
 * `\u00e9`), HTML entities. Base64 and base64url add alternatives at each of the three byte
 * alignments, so a secret inside a longer base64 blob ("user:password" in Basic) is found without
 * knowing the rest. All patterns are joined into one case-insensitive regular expression built
 * once per redactor: the cost per string is one scan, linear in its length (see
 * src/lab/faults/redact-bench.ts for figures), instead of secrets x encodings x scans.
 *
 * Case-insensitive because the echo may change case (a dialect lower-cases Stripe's
 * Stripe-Rate-Limited-Reason header; percent-encoding may be %2f or %2F). The cost is a
 * false positive only for text that equals a secret but for case.
 *
 * A match that starts inside a JSON escape (an odd run of backslashes before it) takes that
 * backslash too, and one that ends with an escaping backslash takes the escaped character, so a
 * JSON document redacted after JSON.stringify still parses.
 */

export const REDACTED = "[redacted]";

/** A header name with no upper-case letter (as Node gives every one) needs no lower-casing. */
const LOWER_NAME = /^[^A-Z]*$/;

/**
 * An answer's headers as a plain object with lower-case names, in one pass, leaving out the names
 * `skip` says to. axios' AxiosHeaders keeps each header as an own enumerable property (its methods
 * live on the prototype), so its own toJSON copy is not needed first; like toJSON, a header set to
 * false (axios' "unset") is left out. `text` shapes each value (the redactor's, for a result).
 */
export function plainHeaders(headers: unknown, skip: (name: string) => boolean = () => false, text: (value: string) => string = String): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers || typeof headers !== "object") return out;
  const source = headers as Record<string, unknown>;
  for (const given of Object.keys(source)) {
    const value = source[given];
    if (value === undefined || value === null || value === false || typeof value === "function") continue;
    const name = LOWER_NAME.test(given) ? given : given.toLowerCase();
    if (skip(name)) continue;
    out[name] = text(Array.isArray(value) ? value.map(String).join(", ") : String(value));
  }
  return out;
}

/**
 * Shorter values are not treated as secrets: redacting "abc" or "42" would blank out ordinary
 * words, numbers and field names all over results and logs, and a 3-character secret protects
 * nothing anyway (95^3 guesses). A redactor counts what it skipped (skippedShortSecrets) so the
 * caller can warn.
 */
export const MIN_SECRET_LENGTH = 4;

/**
 * Header names that carry credentials. The rule in isSensitiveHeader covers most of them by their
 * words; they are listed so the decision does not rest on the rule alone.
 *   authorization, proxy-authorization: RFC 9110 11.6.2, 11.7.2
 *   cookie, set-cookie: RFC 6265 (session identifiers)
 *   x-api-key: Anthropic https://docs.anthropic.com/en/api/overview, AWS API Gateway
 *     https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-api-key-source.html
 *   x-auth-key, x-auth-email (account e-mail, identifies the key): Cloudflare
 *     https://developers.cloudflare.com/fundamentals/api/get-started/keys/
 *   private-token, job-token: GitLab https://docs.gitlab.com/api/rest/authentication/
 *   ocp-apim-subscription-key: Azure API Management
 *     https://learn.microsoft.com/azure/api-management/api-management-subscriptions
 *   x-goog-api-key: Google Cloud https://cloud.google.com/docs/authentication/api-keys-use
 *   x-shopify-access-token: https://shopify.dev/docs/api/usage/authentication
 *   x-postmark-server-token, x-postmark-account-token: https://postmarkapp.com/developer/api/overview
 *   x-vault-token: HashiCorp Vault https://developer.hashicorp.com/vault/api-docs
 *   x-amz-security-token: AWS SigV4 https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html
 *   dd-api-key, dd-application-key: Datadog https://docs.datadoghq.com/api/latest/authentication/
 *   x-figma-token: https://www.figma.com/developers/api#authentication
 *   x-riot-token: https://developer.riotgames.com/docs/portal
 *   api-token, x-api-token, x-auth-token, x-access-token, apikey, api-key: common vendor names
 */
const KNOWN_SENSITIVE_HEADERS: readonly string[] = [
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "api-key",
  "apikey",
  "x-apikey",
  "x-auth-key",
  "x-auth-email",
  "x-auth-token",
  "x-access-token",
  "x-api-token",
  "api-token",
  "private-token",
  "job-token",
  "ocp-apim-subscription-key",
  "x-goog-api-key",
  "x-shopify-access-token",
  "x-postmark-server-token",
  "x-postmark-account-token",
  "x-vault-token",
  "x-amz-security-token",
  "dd-api-key",
  "dd-application-key",
  "x-figma-token",
  "x-riot-token",
];

/** Words in a header name that mark a credential (the name split at `-`, `_` and `.`). */
const SENSITIVE_WORDS = new Set(["token", "secret", "key", "auth", "authorization", "password", "passwd", "pwd", "passphrase", "session", "sessionid", "signature", "credential", "credentials", "cookie", "jwt", "bearer"]);
/**
 * A word ending like this is one too ("xsrftoken", "clientsecret", "x-apikey"). Not a bare "key"
 * or "auth" suffix: "monkey" is no credential, nor GitHub's X-OAuth-Scopes (the scopes a token has,
 * https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/scopes-for-oauth-apps).
 */
const SENSITIVE_SUFFIXES = ["token", "secret", "password", "passwd", "apikey", "authkey", "accesskey", "secretkey", "privatekey", "sessionid"];

/**
 * Names the rule would catch that are not credentials; dropping them would hide what the client
 * and a support engineer need to see.
 *   idempotency-key: the write's own key (draft-ietf-httpapi-idempotency-key-header), shown so a
 *     retry can be traced
 *   sec-websocket-key: a per-handshake nonce (RFC 6455 4.1), not a credential
 *   public-key-pins*: hashes of public keys (RFC 7469)
 *   www-authenticate, proxy-authenticate, authentication-info: challenges, not credentials
 *     (RFC 9110 11.6.1, 11.7.1; RFC 7615)
 *   ratelimit-*, x-ratelimit-*, x-rate-limit-*: the signals this component exists to read
 */
const NOT_SECRET_HEADERS = new Set(["idempotency-key", "x-idempotency-key", "sec-websocket-key", "sec-websocket-accept", "public-key-pins", "public-key-pins-report-only", "www-authenticate", "proxy-authenticate", "authentication-info", "keep-alive"]);
const NOT_SECRET_PREFIXES = ["ratelimit", "x-ratelimit-", "x-rate-limit-"];

/** True when a header of this name carries a credential (case-insensitive). */
export function isSensitiveHeaderName(name: string, extraNames: ReadonlySet<string> = NO_NAMES): boolean {
  const lower = name.trim().toLowerCase();
  if (extraNames.has(lower)) return true;
  let known = byName.get(lower);
  if (known === undefined) {
    known = isSensitiveByRule(lower);
    // Every answer's headers pass through here; names repeat, so each is judged once.
    if (byName.size >= NAME_CACHE_SIZE) byName.clear();
    byName.set(lower, known);
  }
  return known;
}

function isSensitiveByRule(lower: string): boolean {
  if (KNOWN_SENSITIVE_HEADERS.includes(lower)) return true;
  if (NOT_SECRET_HEADERS.has(lower) || NOT_SECRET_PREFIXES.some((p) => lower.startsWith(p))) return false;
  return lower.split(/[-_.\s]+/).some((word) => SENSITIVE_WORDS.has(word) || SENSITIVE_SUFFIXES.some((s) => word.length > s.length && word.endsWith(s)));
}

const NO_NAMES: ReadonlySet<string> = new Set();
const NAME_CACHE_SIZE = 1024;
const byName = new Map<string, boolean>();

/**
 * Authentication schemes a secret value may start with (the IANA HTTP Authentication Scheme
 * Registry, https://www.iana.org/assignments/http-authschemes, plus vendor schemes: Discord "Bot",
 * Okta "SSWS", Zoho "Zoho-oauthtoken", DeepL "DeepL-Auth-Key", Klaviyo "Klaviyo-API-Key",
 * Opsgenie "GenieKey", Rails/Pipedrive-style "Token"). "Bearer X" as a secret also makes X one.
 */
const AUTH_SCHEMES = new Set(["basic", "bearer", "digest", "hoba", "mutual", "negotiate", "ntlm", "oauth", "privatetoken", "scram-sha-1", "scram-sha-256", "vapid", "token", "bot", "ssws", "apikey", "api-key", "key", "geniekey", "zoho-oauthtoken", "deepl-auth-key", "klaviyo-api-key", "aws4-hmac-sha256"]);

/** The user:password inside a Basic credential, when it decodes to one. */
function decodeBasic(encoded: string): string[] {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return [];
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0 || decoded.includes("\uFFFD")) return [];
  return [decoded, decoded.slice(colon + 1)];
}

/** How a header's value is read for secrets. */
export type HeaderKind = "plain" | "authorization" | "cookie";

function headerKind(lowerName: string): HeaderKind {
  if (lowerName === "authorization" || lowerName === "proxy-authorization") return "authorization";
  if (lowerName === "cookie" || lowerName === "set-cookie") return "cookie";
  return "plain";
}

/**
 * The secret values inside one credential value: the value itself, the credentials after an
 * auth scheme ("Bearer X" gives X), Basic's decoded "user:password" and password, the values of
 * auth-params (`Token token="X"`, SigV4's Signature=...), and each cookie's value. Any first word
 * counts as a scheme in an Authorization header (RFC 9110 11.4: credentials = auth-scheme
 * [ 1*SP token68 / #auth-param ]); elsewhere only the known schemes do, so a passphrase with
 * spaces is not cut into common words.
 */
export function credentialParts(value: string, kind: HeaderKind = "plain"): string[] {
  const trimmed = value.trim();
  const parts = new Set([value, trimmed]);
  const scheme = /^([A-Za-z][A-Za-z0-9._~+/-]*)\s+(\S[\s\S]*)$/.exec(trimmed);
  if (kind === "cookie") {
    // Cookie: a=b; c=d (RFC 6265 4.2.1); Set-Cookie: name=value; attributes (4.1.1).
    for (const m of trimmed.matchAll(/(?:^|;)\s*[^=;\s]+=([^;]*)/g)) parts.add(m[1]!.trim().replace(/^"|"$/g, ""));
  } else if (scheme && (kind === "authorization" || AUTH_SCHEMES.has(scheme[1]!.toLowerCase()))) {
    const credentials = scheme[2]!.trim();
    parts.add(credentials);
    if (scheme[1]!.toLowerCase() === "basic") for (const p of decodeBasic(credentials)) parts.add(p);
    for (const m of credentials.matchAll(/[A-Za-z0-9_-]+\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,;"]+))/g)) parts.add(m[1] ?? m[2] ?? "");
  }
  return [...parts].filter((p) => p.length >= MIN_SECRET_LENGTH);
}

/**
 * The secret values in a header map (a connection's headers, a step's own headers): every value
 * of a credential header, with the parts credentialParts finds. The client adds them to its
 * redactor so a bare token from "Authorization: Bearer X" is redacted wherever it is echoed.
 */
export function secretsFromHeaders(headers: Readonly<Record<string, string | undefined>> | undefined, extraHeaderNames: readonly string[] = []): string[] {
  const extra = new Set(extraHeaderNames.map((n) => n.trim().toLowerCase()));
  const out = new Set<string>();
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (typeof value !== "string" || !isSensitiveHeaderName(name, extra)) continue;
    for (const part of credentialParts(value, headerKind(name.trim().toLowerCase()))) out.add(part);
  }
  return [...out];
}

// ---------------------------------------------------------------------------------------------
// The matcher

const escapeRegExp = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
const hex2 = (n: number): string => n.toString(16).padStart(2, "0");
const hex4 = (n: number): string => n.toString(16).padStart(4, "0");
/** Left as they are by every encoder (RFC 3986 unreserved, less "~" which form encoding escapes). */
const PLAIN = /^[A-Za-z0-9_.-]$/;
/** JSON's short escapes (RFC 8259 section 7) and the solidus some serializers escape. */
const JSON_SHORT: Readonly<Record<string, string>> = { '"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" };
const HTML_ENTITIES: Readonly<Record<string, readonly string[]>> = { '"': ["&quot;", "&#34;", "&#x22;"], "&": ["&amp;", "&#38;", "&#x26;"], "<": ["&lt;", "&#60;", "&#x3c;"], ">": ["&gt;", "&#62;", "&#x3e;"], "'": ["&#39;", "&#x27;", "&apos;"] };

/** Every form one character (a code point) can take in an echo. */
function charForms(ch: string): string[] {
  if (PLAIN.test(ch)) return [ch];
  const forms = new Set<string>([ch]);
  forms.add([...Buffer.from(ch, "utf8")].map((b) => `%${hex2(b)}`).join(""));
  const unicodeEscape = [...Array(ch.length).keys()].map((i) => `\\u${hex4(ch.charCodeAt(i))}`).join("");
  const singles = [JSON_SHORT[ch], unicodeEscape].filter((s): s is string => s !== undefined);
  for (const single of singles) {
    forms.add(single);
    // Escaped again (a JSON string inside a JSON log line).
    forms.add(JSON.stringify(single).slice(1, -1));
  }
  if (ch === " ") forms.add("+");
  // The WHATWG URL parser removes every tab and newline from a URL it is given (URL Standard,
  // "basic URL parser": remove all ASCII tab or newline), so in a URL they are simply gone.
  if (ch === "\t" || ch === "\n" || ch === "\r") forms.add("");
  // A raw "+" in a query is read as a space by the server (application/x-www-form-urlencoded).
  if (ch === "+") forms.add(" ");
  for (const entity of HTML_ENTITIES[ch] ?? []) forms.add(entity);
  // Longest first: alternation takes the first that matches, and a whole escape must be consumed.
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * A run of one character is a single unit (all its copies in the same form). Otherwise a
 * backslash, whose forms `\`, `\\`, `\\\\` are prefixes of one another, would let a run of n
 * backslashes be split 3^n ways on a long run of backslashes in the text: backtracking
 * exponential in the secret. As a unit, a run's length is pinned by the character after it.
 */
function tolerantPattern(secret: string): string {
  let pattern = "";
  const chars = [...secret];
  for (let i = 0; i < chars.length; ) {
    const ch = chars[i]!;
    let run = 1;
    while (chars[i + run] === ch) run++;
    i += run;
    const forms = charForms(ch);
    if (forms.length === 1) pattern += escapeRegExp(forms[0]!.repeat(run));
    else pattern += `(?:${forms.map((f) => escapeRegExp(f.repeat(run))).join("|")})`;
  }
  return pattern;
}

/** Shortest base64 run that is still matched: shorter runs would hit ordinary base64 by chance. */
const MIN_BASE64_CORE = 6;

/** A base64 character as base64 or base64url (RFC 4648 sections 4, 5), percent-encoded or JSON-escaped. */
const BASE64_CHAR: Readonly<Record<string, string>> = { "+": "(?:%2B|[+-])", "/": "(?:%2F|\\\\/|[/_])", "=": "(?:%3D|=)" };
const base64Pattern = (text: string): string => text.replace(/[+/=]/g, (c) => BASE64_CHAR[c]!);

/**
 * Patterns for the base64 characters that depend only on the secret's bytes, at each alignment
 * of the secret in a longer byte string (RFC 4648 section 4: 3 bytes -> 4 characters). At
 * alignment 0 the rest of the whole encoding (last character, padding) is taken when present.
 */
function base64Patterns(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const patterns: string[] = [];
  for (let align = 0; align < 3; align++) {
    const encoded = Buffer.concat([Buffer.alloc(align), bytes]).toString("base64");
    const total = align + bytes.length;
    const core = encoded.slice([0, 2, 3][align]!, Math.floor(total / 3) * 4 + [0, 1, 2][total % 3]!);
    if (align === 0 && core.length >= MIN_SECRET_LENGTH) {
      const rest = encoded.slice(core.length);
      patterns.push(base64Pattern(core) + (rest ? `(?:${base64Pattern(rest)})?` : ""));
    } else if (core.length >= MIN_BASE64_CORE) patterns.push(base64Pattern(core));
  }
  return patterns;
}

interface Needle {
  pattern: string;
  weight: number;
}

/** One regular expression for every secret in every form, or null when there is nothing to find. */
function buildMatcher(secrets: readonly string[]): RegExp | null {
  const needles: Needle[] = [];
  const seen = new Set<string>();
  for (const secret of secrets) {
    const key = secret.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    needles.push({ pattern: tolerantPattern(secret), weight: secret.length * 2 + 1 });
    // Lower- and upper-casing may change a character's length ("ß" -> "SS"); give those forms too.
    for (const cased of new Set([secret.toLowerCase(), secret.toUpperCase()])) {
      if (cased.length !== secret.length) needles.push({ pattern: tolerantPattern(cased), weight: cased.length * 2 + 1 });
    }
    for (const pattern of base64Patterns(secret)) needles.push({ pattern, weight: secret.length * 2 });
  }
  if (needles.length === 0) return null;
  // Longer secrets first, so a secret that contains another is removed whole.
  const patterns = [...new Set(needles.sort((a, b) => b.weight - a.weight).map((n) => n.pattern))];
  return new RegExp(patterns.join("|"), "gi");
}

/** Replaces every match; widens a match that cuts a JSON escape in two (see the file comment). */
function replaceAll(input: string, matcher: RegExp): string {
  matcher.lastIndex = 0;
  let out = "";
  let copiedTo = 0;
  for (let m = matcher.exec(input); m !== null; m = matcher.exec(input)) {
    let start = m.index;
    let end = start + m[0].length;
    let before = 0;
    while (start - before - 1 >= copiedTo && input.charCodeAt(start - before - 1) === 92) before++;
    if (before % 2 === 1) start -= 1;
    let trailing = 0;
    while (trailing < m[0].length && m[0].charCodeAt(m[0].length - 1 - trailing) === 92) trailing++;
    if (trailing % 2 === 1 && end < input.length) end += /^u[0-9a-fA-F]{4}/.test(input.slice(end, end + 5)) ? 5 : 1;
    out += input.slice(copiedTo, start) + REDACTED;
    copiedTo = end;
    matcher.lastIndex = end;
  }
  return copiedTo === 0 ? input : out + input.slice(copiedTo);
}

export interface Redactor {
  text(value: string): string;
  /** Deep copy with every secret substring replaced (object keys too). */
  value<T>(value: T): T;
  /**
   * An answer's headers (axios' AxiosHeaders or a plain object) as plain lower-case names and text
   * in one copy, with credential headers dropped and secrets redacted in the rest.
   */
  headers(headers: unknown): Record<string, string>;
  isSensitiveHeader(name: string): boolean;
  /** Distinct secrets being redacted (after expansion of "Bearer X" and Basic credentials). */
  readonly secretCount: number;
  /** Values given as secrets but shorter than MIN_SECRET_LENGTH, so not redacted. */
  readonly skippedShortSecrets: number;
}

/**
 * Removes secrets from anything the component shows or stores: logs, results, errors, state.
 * A secret that is a credential header value ("Bearer X", "Basic B64") also redacts its parts.
 */
export function createRedactor(secrets: readonly string[], extraHeaderNames: readonly string[] = []): Redactor {
  const given = secrets.filter((s): s is string => typeof s === "string" && s.trim().length > 0);
  const expanded = [...new Set(given.flatMap((s) => (s.length >= MIN_SECRET_LENGTH ? credentialParts(s) : [])))];
  const skippedShortSecrets = given.filter((s) => s.length < MIN_SECRET_LENGTH).length;
  const matcher = buildMatcher(expanded);
  const extra = new Set(extraHeaderNames.map((n) => n.trim().toLowerCase()));
  const isSensitiveHeader = (name: string): boolean => isSensitiveHeaderName(name, extra);
  const text = (value: string): string => (matcher === null || value.length === 0 ? value : replaceAll(value, matcher));

  const deep = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return text(value);
    if (depth > 50 || value === null || typeof value !== "object") return value;
    if (Buffer.isBuffer(value)) {
      const decoded = value.toString("utf8");
      const redacted = text(decoded);
      return redacted === decoded ? value : Buffer.from(redacted);
    }
    if (Array.isArray(value)) return value.map((v) => deep(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[text(k)] = deep(v, depth + 1);
    return out;
  };

  return {
    text,
    value: <T>(value: T): T => (matcher === null ? value : (deep(value, 0) as T)),
    headers: (headers) => plainHeaders(headers, isSensitiveHeader, text),
    isSensitiveHeader,
    secretCount: expanded.length,
    skippedShortSecrets,
  };
}
