/**
 * Readers for the signals that many providers share. Each returns what it could read and records
 * what it could not (ctx.ignore) instead of guessing: a malformed value never becomes 0 or Infinity.
 */
import { parseDictionary, parseList, type Item } from "structured-headers";
import type { SignalContext } from "./context";
import { parseHttpDate } from "./http-date";
import { isoAt, saturatingWholeMs } from "./time";
import type { Budget } from "./types";

/** A wait read from the response: how long, and which signal said so. */
export interface Wait {
  waitMs: number;
  source: string;
}

const DELAY_SECONDS = /^\d+$/;
const DECIMAL_SECONDS = /^\d+\.\d+$/;
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i;
const DECIMAL = /^\d+(?:\.\d+)?$/;
/** Dates, durations and used/limit pairs are short; longer text is refused unread (no regex scans it). */
const MAX_FIELD_TEXT = 128;

/**
 * A wait rounded up to whole ms. A number too large for a safe integer saturates rather than
 * being dropped: a server that asks for 1e23 s asks for a very long wait, and dropping it would
 * fall back to a short backoff. classify's cap (maxServerWaitMs) then defers it.
 */
function wholeMs(ms: number): number {
  // Callers pass non-negative numbers; NaN would mean "unknown", and unknown is read as long.
  return saturatingWholeMs(ms) ?? Number.MAX_SAFE_INTEGER;
}

/** An absolute time on the server's clock, as a wait from now (0 when it has passed). */
export function waitUntil(ctx: SignalContext, serverEpochMs: number): number {
  return Math.max(0, serverEpochMs - ctx.serverNowMs);
}

/** Reads an ISO 8601 / RFC 3339 timestamp that carries a zone; null otherwise. */
export function parseIsoInstant(value: string): number | null {
  if (value.length > MAX_FIELD_TEXT || !ISO_WITH_ZONE.test(value)) return null;
  const epochMs = Date.parse(value);
  return Number.isFinite(epochMs) ? epochMs : null;
}

/**
 * Retry-After per RFC 9110 §10.2.3: delay-seconds or an HTTP-date (measured against the
 * response's Date header when present). Decimal seconds (Shopify "2.0"), ISO 8601 instants
 * (Zoom's daily limit) and near-miss HTTP-dates (RFC 9110 §5.6.7 asks for robust parsing) are
 * read too, each recorded as a deviation.
 */
export function readRetryAfter(ctx: SignalContext, headerName = "retry-after"): Wait | null {
  const raw = ctx.header(headerName);
  if (raw === undefined) return null;
  const value = raw.trim();
  const source = headerName;
  if (value === "") {
    ctx.ignore(headerName, raw, "empty value");
    return null;
  }
  if (DELAY_SECONDS.test(value)) return { waitMs: wholeMs(Number(value) * 1000), source };
  if (DECIMAL_SECONDS.test(value)) {
    ctx.deviate(`${headerName} in decimal seconds (${value}); RFC 9110 allows whole seconds only`);
    return { waitMs: wholeMs(Number(value) * 1000), source };
  }
  const date = parseHttpDate(value, ctx.nowMs, { tolerant: true });
  if (date) {
    if (date.form === "tolerant") ctx.deviate(`${headerName} as a non-standard HTTP-date (${date.notes?.join(", ") ?? "tolerant reading"})`);
    else if (date.form !== "imf-fixdate") ctx.deviate(`${headerName} as an obsolete ${date.form} HTTP-date`);
    return { waitMs: waitUntil(ctx, date.epochMs), source };
  }
  const iso = parseIsoInstant(value);
  if (iso !== null) {
    ctx.deviate(`${headerName} as an ISO 8601 timestamp; RFC 9110 wants delay-seconds or an HTTP-date`);
    return { waitMs: waitUntil(ctx, iso), source };
  }
  ctx.ignore(headerName, value, "neither delay-seconds nor an HTTP-date");
  return null;
}

/** A non-negative decimal count of a unit (ms in retry-after-ms, seconds in Reset-After). */
export function readDecimalHeader(ctx: SignalContext, headerName: string, unitMs: number): Wait | null {
  const raw = ctx.header(headerName);
  if (raw === undefined) return null;
  const value = raw.trim();
  if (!DECIMAL.test(value)) {
    ctx.ignore(headerName, raw, "not a non-negative number");
    return null;
  }
  return { waitMs: wholeMs(Number(value) * unitMs), source: headerName };
}

/** The longest of the waits present: a server wait is a floor, so the floor is never shortened. */
export function longestWait(...waits: (Wait | null | undefined)[]): Wait | null {
  let best: Wait | null = null;
  for (const wait of waits) {
    if (wait && (best === null || wait.waitMs > best.waitMs)) best = wait;
  }
  return best;
}

/**
 * Every header whose whole meaning is "wait this long", read once for all dialects, the longest
 * winning (a server's wait is a floor: when two say different things, the shorter would retry
 * too early by the other's word):
 * - Retry-After, RFC 9110 §10.2.3 (seconds or an HTTP-date);
 * - retry-after-ms, milliseconds: read by openai-node and the Anthropic SDK (anthropic-sdk-typescript
 *   src/client.ts, retryRequest: "retry-after-ms ... we'd like proactive support for it");
 * - x-amz-retry-after, milliseconds: AWS SDK v3 (smithy-lang/smithy-typescript,
 *   packages/middleware-retry/src/parseRetryAfterHeader.ts: `Date.now() + backoffMilliseconds`).
 */
export function readExplicitWaits(ctx: SignalContext): Wait | null {
  return longestWait(readRetryAfter(ctx), readDecimalHeader(ctx, "retry-after-ms", 1), readDecimalHeader(ctx, "x-amz-retry-after", 1));
}

const DIGITS = /^\d+$/;

/** A plain non-negative integer header (a count), or null with a recorded reason. */
export function readCount(ctx: SignalContext, headerName: string): number | null {
  const raw = ctx.header(headerName);
  if (raw === undefined) return null;
  // RateLimit-Limit of the old IETF drafts may carry a policy after the number ("10, 10;w=1").
  const comma = raw.indexOf(",");
  const value = (comma < 0 ? raw : raw.slice(0, comma)).trim();
  const count = DIGITS.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(count)) {
    ctx.ignore(headerName, raw, "not a non-negative integer");
    return null;
  }
  return count;
}

/**
 * Go-style durations as OpenAI sends them in x-ratelimit-reset-*: "1s", "6m0s", "20ms",
 * "51.189s", "1h2m3s". https://platform.openai.com/docs/guides/rate-limits
 */
export function parseGoDuration(value: string): number | null {
  const text = value.trim();
  if (text.length > MAX_FIELD_TEXT) return null;
  if (!/^(?:\d+(?:\.\d+)?(?:h|ms|m|s|us|µs|ns))+$/.test(text)) return null;
  const unitMs: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };
  let totalMs = 0;
  for (const part of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) {
    totalMs += Number(part[1]) * unitMs[part[2]!]!;
  }
  return Number.isFinite(totalMs) ? totalMs : null;
}

/** How a provider writes its reset value. */
export type ResetKind = "epoch-seconds" | "epoch-ms" | "delta-seconds" | "iso" | "duration" | "auto";

/**
 * Reads a reset header as a wait from now. The dialect says which kind it is; "auto" is a
 * heuristic for unknown hosts (about 1.8e9 is epoch seconds, about 1.8e12 epoch ms, small values
 * are deltas) and is recorded as a deviation. A documented epoch stays an epoch however small:
 * an instant already past (by the server's Date) means the window has already reset, wait 0.
 */
export function readReset(ctx: SignalContext, headerName: string, kind: ResetKind): Wait | null {
  const raw = ctx.header(headerName);
  if (raw === undefined) return null;
  const value = raw.trim();
  const source = headerName;
  const fail = (why: string): null => {
    ctx.ignore(headerName, raw, why);
    return null;
  };
  if (kind === "iso") {
    const epochMs = parseIsoInstant(value);
    return epochMs === null ? fail("not an ISO 8601 timestamp with a zone") : { waitMs: waitUntil(ctx, epochMs), source };
  }
  if (kind === "duration") {
    const ms = parseGoDuration(value);
    if (ms === null) return fail("not a duration such as 6m0s or 20ms");
    return { waitMs: wholeMs(ms), source };
  }
  if (!DECIMAL.test(value)) return fail("not a non-negative number");
  const n = Number(value);
  const resolved: Exclude<ResetKind, "auto" | "iso" | "duration"> =
    kind === "auto" ? (n >= 1e12 ? "epoch-ms" : n >= 1e9 ? "epoch-seconds" : "delta-seconds") : kind;
  if (kind === "auto") ctx.deviate(`${headerName} read as ${resolved} by magnitude (no documented unit for this host)`);
  if (resolved === "epoch-seconds" && n < 1e9) {
    // Documented as epoch seconds (e.g. GitHub): a value this small is an instant before 2001,
    // long past. Reading it as a delta would invent a wait the server never stated.
    ctx.deviate(`${headerName} ${value} is documented as epoch seconds, so it lies in the past: read as already reset (wait 0)`);
  }
  const waitMs =
    resolved === "delta-seconds"
      ? wholeMs(n * 1000)
      : wholeMs(waitUntil(ctx, resolved === "epoch-seconds" ? n * 1000 : n));
  return { waitMs, source };
}

/**
 * A reset sent without a remaining count (a 429 that says only when the window reopens): the
 * IETF drafts' RateLimit-Reset (delta seconds), else X-RateLimit-Reset or X-Rate-Limit-Reset in
 * the kind the dialect documents ("auto", by magnitude, for unknown hosts).
 */
export function readBareReset(ctx: SignalContext, resetKind: ResetKind): Wait | null {
  if (ctx.header("ratelimit-reset") !== undefined) return readReset(ctx, "ratelimit-reset", draftResetKind(ctx));
  for (const name of ["x-ratelimit-reset", "x-rate-limit-reset"]) {
    if (ctx.header(name) !== undefined) return readReset(ctx, name, resetKind);
  }
  return null;
}

/** The local-clock ISO time a wait ends at. */
export function isoAfter(ctx: SignalContext, waitMs: number): string {
  return isoAt(ctx.nowMs + waitMs);
}

/**
 * The X-RateLimit-Limit/-Remaining/-Reset family (and same-shaped variants such as X-Rate-Limit-*
 * or RateLimit-* of the IETF drafts 00-06, whose reset is delta seconds).
 */
export function readLimitFamily(
  ctx: SignalContext,
  names: { limit?: string; remaining: string; reset?: string },
  resetKind: ResetKind,
): { budget: Budget | null; reset: Wait | null } {
  const remaining = readCount(ctx, names.remaining);
  const limit = names.limit ? readCount(ctx, names.limit) : null;
  const reset = names.reset ? readReset(ctx, names.reset, resetKind) : null;
  if (remaining === null) return { budget: null, reset };
  return {
    budget: {
      remaining,
      limit,
      resetAt: reset ? isoAfter(ctx, reset.waitMs) : null,
      source: names.remaining,
    },
    reset,
  };
}

/**
 * "used/limit" forms: X-Shopify-Shop-Api-Call-Limit "32/40". Bounded digit runs keep the scan
 * linear: an unbounded (\d+) restarted at every digit of a long digit run is quadratic.
 */
export function parseUsedOfLimit(value: string): { used: number; limit: number } | null {
  if (value.length > MAX_FIELD_TEXT) return null;
  const m = /(\d{1,15})\s*\/\s*(\d{1,15})/.exec(value);
  if (!m) return null;
  const used = Number(m[1]);
  const limit = Number(m[2]);
  if (!Number.isSafeInteger(used) || !Number.isSafeInteger(limit) || limit <= 0) return null;
  return { used, limit };
}

function itemNumber(item: Item, key: string): number | null {
  const value = item[1].get(key);
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers). Current form: Structured
 * Field lists `RateLimit: "default";r=50;t=30` and `RateLimit-Policy: "burst";q=100;w=60`, where
 * t is delta seconds. Older drafts: RateLimit-Limit/-Remaining/-Reset (delta seconds). Parsed with
 * a maintained RFC 8941 parser; malformed fields are ignored, as the draft requires.
 * https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/
 */
export function readIetfRateLimit(ctx: SignalContext): { budget: Budget | null; reset: Wait | null } {
  const parsed = readRateLimitField(ctx, "ratelimit", "ratelimit-policy");
  if (parsed) return parsed;
  if (ctx.header("ratelimit-remaining") !== undefined) {
    return readLimitFamily(
      ctx,
      { limit: "ratelimit-limit", remaining: "ratelimit-remaining", reset: "ratelimit-reset" },
      draftResetKind(ctx),
    );
  }
  return { budget: null, reset: null };
}

/** A delta past this many seconds (about 31 years) is no delta: it is a timestamp. */
const EPOCH_SECONDS_FROM = 1e9;

/**
 * The older drafts' RateLimit-Reset is delta seconds, but GitLab.com and DigitalOcean send the
 * reset's UNIX time in it (GitLab's example is 1609844400,
 * https://docs.gitlab.com/administration/settings/user_and_ip_rate_limits/; DigitalOcean's
 * 1444931833, "given in Unix epoch time",
 * https://docs.digitalocean.com/reference/api/api-reference/#section/Introduction/Rate-Limit), which
 * read as a delta lies decades ahead and was ignored. A whole number that large is read as epoch
 * seconds, and said so.
 */
function draftResetKind(ctx: SignalContext): ResetKind {
  const raw = ctx.header("ratelimit-reset")?.trim();
  if (raw === undefined || !DIGITS.test(raw) || Number(raw) < EPOCH_SECONDS_FROM) return "delta-seconds";
  ctx.deviate("ratelimit-reset read as epoch seconds (a UNIX time where the drafts say delta seconds)");
  return "epoch-seconds";
}

/** One RateLimit-Policy item: its quota (q), its window (w, seconds; null when absent), and whether it counts requests in flight. */
interface PolicyQuota {
  quota: number;
  windowMs: number | null;
  concurrent: boolean;
}

/**
 * Each named policy's quota, window and whether its quota unit (qu) is "concurrent-requests": the
 * draft's units are "requests" (the default), "content-bytes" and "concurrent-requests"; w is the
 * time window in seconds over which the quota is counted.
 */
function policyQuotas(ctx: SignalContext, policyName: string): Map<string, PolicyQuota> {
  const quotas = new Map<string, PolicyQuota>();
  const raw = ctx.header(policyName);
  if (raw === undefined) return quotas;
  try {
    for (const member of parseList(raw)) {
      if (!Array.isArray(member[0])) {
        const item = member as Item;
        const quota = itemNumber(item, "q");
        const windowSeconds = itemNumber(item, "w");
        const windowMs = windowSeconds !== null && windowSeconds > 0 ? wholeMs(windowSeconds * 1000) : null;
        if (typeof item[0] === "string" && quota !== null) quotas.set(item[0], { quota, windowMs, concurrent: item[1].get("qu") === "concurrent-requests" });
      }
    }
  } catch {
    ctx.ignore(policyName, raw, "not a valid Structured Field list");
  }
  return quotas;
}

function nonNegativeNumber(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

/** The draft-03 dictionary form some servers still send: RateLimit: limit=100, remaining=0, reset=30. */
function parseDictionaryForm(ctx: SignalContext, raw: string, fieldName: string): { budget: Budget; reset: Wait | null } | null {
  try {
    const dict = parseDictionary(raw);
    const remaining = nonNegativeNumber(dict.get("remaining")?.[0]);
    if (remaining === null) return null;
    ctx.deviate(`${fieldName} in the dictionary form of early drafts (limit=, remaining=, reset=)`);
    const resetSeconds = nonNegativeNumber(dict.get("reset")?.[0]);
    const waitMs = resetSeconds === null ? null : wholeMs(resetSeconds * 1000);
    return {
      budget: {
        remaining,
        limit: nonNegativeNumber(dict.get("limit")?.[0]),
        resetAt: waitMs === null ? null : isoAfter(ctx, waitMs),
        source: fieldName,
        ...(waitMs === null ? {} : { resetCountsDown: true }),
      },
      reset: waitMs === null ? null : { waitMs, source: fieldName },
    };
  } catch {
    return null;
  }
}

/**
 * A RateLimit-shaped Structured Field list (`"name";r=..;t=..`) and its policy field, under any
 * name (Jira's beta fields use the same shape): the tightest item is the budget. Null when the
 * field is absent or malformed (recorded in ignored).
 */
export function readRateLimitField(ctx: SignalContext, fieldName: string, policyName: string): { budget: Budget; reset: Wait | null } | null {
  const raw = ctx.header(fieldName);
  if (raw === undefined) return null;
  let tightest: { name: string; remaining: number; resetSeconds: number | null } | null = null;
  try {
    for (const member of parseList(raw)) {
      if (Array.isArray(member[0])) continue;
      const item = member as Item;
      const remaining = itemNumber(item, "r");
      if (remaining === null) continue;
      const resetSeconds = itemNumber(item, "t");
      const name = typeof item[0] === "string" ? item[0] : String(item[0]);
      if (!tightest || remaining < tightest.remaining) tightest = { name, remaining, resetSeconds };
    }
  } catch {
    tightest = null;
  }
  if (!tightest) {
    const dictionary = parseDictionaryForm(ctx, raw, fieldName);
    if (!dictionary) ctx.ignore(fieldName, raw, "not a valid RateLimit field (a Structured Field list with r=)");
    return dictionary;
  }
  const waitMs = tightest.resetSeconds === null ? null : wholeMs(tightest.resetSeconds * 1000);
  const policy = policyQuotas(ctx, policyName).get(tightest.name);
  return {
    budget: {
      remaining: tightest.remaining,
      limit: policy?.quota ?? null,
      resetAt: waitMs === null ? null : isoAfter(ctx, waitMs),
      source: fieldName,
      ...(waitMs === null ? {} : { resetCountsDown: true }),
      // The policy's window is the length the quota is counted over: shown on every answer that
      // carries the policy (often only 429s), it is the window a pacer needs where successes show
      // nothing (a bucket of 60 per s behind the fields on its 429s only went at 20 per s without it).
      ...(policy?.windowMs ? { windowMs: policy.windowMs } : {}),
      ...(policy?.concurrent ? { concurrent: true } : {}),
    },
    reset: waitMs === null ? null : { waitMs, source: fieldName },
  };
}
