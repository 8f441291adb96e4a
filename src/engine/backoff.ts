/**
 * Fallback backoff for when the server gives no wait: exponential, capped, with a choice of
 * jitter so that workers throttled together do not come back together.
 * https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/
 */
import type { JitterKind } from "./types";

export interface BackoffInput {
  /** The retry number, 1 for the first retry. */
  retry: number;
  baseMs: number;
  capMs: number;
  /** The previous wait, for decorrelated jitter. */
  previousWaitMs?: number | null;
  random: () => number;
}

/** Exponential growth, capped: base * 2^(retry-1). */
export function exponentialCeilingMs(retry: number, baseMs: number, capMs: number): number {
  const exponent = Math.max(0, Math.min(retry - 1, 52));
  return Math.min(capMs, baseMs * 2 ** exponent);
}

const strategies: Record<JitterKind, (input: BackoffInput) => number> = {
  /** No jitter: the plain exponential curve (lockstep-prone; for comparison). */
  none: ({ retry, baseMs, capMs }) => exponentialCeilingMs(retry, baseMs, capMs),
  /** Full jitter: uniform in [0, ceiling]; spreads load best. */
  full: ({ retry, baseMs, capMs, random }) => random() * exponentialCeilingMs(retry, baseMs, capMs),
  /** Equal jitter: half the ceiling, plus uniform in the other half; never near zero. */
  equal: ({ retry, baseMs, capMs, random }) => {
    const ceiling = exponentialCeilingMs(retry, baseMs, capMs);
    return ceiling / 2 + random() * (ceiling / 2);
  },
  /** Decorrelated jitter: uniform in [base, previous * 3], capped. */
  decorrelated: ({ baseMs, capMs, previousWaitMs, random }) => {
    const previous = Math.max(baseMs, previousWaitMs ?? baseMs);
    return Math.min(capMs, baseMs + random() * (previous * 3 - baseMs));
  },
};

export function backoffMs(kind: JitterKind, input: BackoffInput): number {
  return Math.max(0, Math.round(strategies[kind](input)));
}
