/**
 * Time arithmetic that cannot throw. A JavaScript Date holds ±8.64e15 ms around 1970
 * (ECMA-262 §21.4.1.1, "Time Values and Time Range"); `new Date(x).toISOString()` throws a
 * RangeError outside it. Every instant the engine turns into text goes through isoAt, and every
 * wait it adds to a clock goes through clampEpochMs, so a server's absurd number can make an
 * absurd (but valid) date, never an exception.
 * https://tc39.es/ecma262/#sec-time-values-and-time-range
 */

/** The largest magnitude a Date can hold, in epoch milliseconds. */
export const MAX_EPOCH_MS = 8.64e15;

/** The default cap on a server-given wait: 31 days. A longer one is deferred, never slept. */
export const DEFAULT_MAX_SERVER_WAIT_MS = 31 * 24 * 3_600_000;

/** An epoch-ms value moved into the range a Date can hold (NaN becomes 0, the epoch). */
export function clampEpochMs(epochMs: number): number {
  if (Number.isNaN(epochMs)) return 0;
  return Math.min(MAX_EPOCH_MS, Math.max(-MAX_EPOCH_MS, epochMs));
}

/**
 * The last instant isoAt wrote, so that reading it back (a budget's resetAt, read by classify's cap
 * and by the governor for every answer that shows a budget) costs no second parse. A memo of one
 * pair: the same text always means the same instant, so it changes no result.
 */
let lastIso = { epochMs: 0, textEpochMs: 0, text: "1970-01-01T00:00:00.000Z" };

/** ISO 8601 text for an instant, clamped to the Date range: always valid, never throws. */
export function isoAt(epochMs: number): string {
  const clamped = clampEpochMs(epochMs);
  if (clamped === lastIso.epochMs) return lastIso.text;
  const date = new Date(clamped);
  const text = date.toISOString();
  // The text holds whole milliseconds (a Date drops the fraction): reading it back gives getTime().
  lastIso = { epochMs: clamped, textEpochMs: date.getTime(), text };
  return text;
}

/** Epoch ms of an ISO 8601 instant (NaN when it is not one): Date.parse, skipped for the text isoAt last wrote. */
export function epochOfIso(text: string): number {
  return text === lastIso.text ? lastIso.textEpochMs : Date.parse(text);
}

/** A wait in ms rounded up to a whole millisecond; above Number.MAX_SAFE_INTEGER it saturates there. */
export function saturatingWholeMs(ms: number): number | null {
  if (Number.isNaN(ms) || ms < 0) return null;
  const rounded = Math.ceil(ms);
  return Number.isSafeInteger(rounded) ? rounded : Number.MAX_SAFE_INTEGER;
}

/** "31 days", "2 h", "90 s": a wait for reasons, in the largest unit that keeps it readable. */
export function describeDuration(ms: number): string {
  if (ms >= 2 * 86_400_000) return `${Math.round(ms / 86_400_000).toLocaleString("en-US")} days`;
  if (ms >= 2 * 3_600_000) return `${Math.round(ms / 3_600_000)} h`;
  if (ms >= 120_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 100) / 10} s`;
}

/**
 * A waitSource ending so names a wait for the first retry that grows with each attempt (the wait
 * times the attempts made so far), as HubSpot's SDK waits 10 s x attempt: plan() scales it. Kept
 * in the source string, which already says how a wait was derived ("doc:fixed-60s").
 */
export const PER_ATTEMPT_SUFFIX = " x attempt";
