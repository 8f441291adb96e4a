import type { Verdict } from "../engine";

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/**
 * The wait is longer than this run may sleep. Thrown in onLongWait "fail" mode so that the
 * execution fails and Prismatic's Flow retry re-runs it later (state is not written on failure,
 * so the retried run may make one probe call if it cannot see the not_before).
 */
export class ThrottleDeferredError extends Error {
  override readonly name = "ThrottleDeferredError";
  readonly notBefore: string;
  readonly waitMs: number;
  readonly provider: string;
  readonly scope: string;
  readonly reason: string;
  readonly verdict: Verdict | null;
  readonly attempts: number;

  constructor(input: { notBefore: string; waitMs: number; provider: string; scope: string; reason: string; verdict: Verdict | null; attempts: number }) {
    super(
      `Rate limited by ${input.provider} (scope ${input.scope}): not before ${input.notBefore}, a wait of ${seconds(input.waitMs)} that this step will not sleep through (longer than its inline limit, or its attempts or time are spent). ` +
        `${input.reason} Failing the step so that Flow retry takes over: set the trigger's Flow retry so that attempts x minutes between attempts covers the wait.`,
    );
    this.notBefore = input.notBefore;
    this.waitMs = input.waitMs;
    this.provider = input.provider;
    this.scope = input.scope;
    this.reason = input.reason;
    this.verdict = input.verdict;
    this.attempts = input.attempts;
  }
}

/** A write (POST/PATCH) got no answer and had no idempotency key: it may or may not have happened. */
export class WriteOutcomeUnknownError extends Error {
  override readonly name = "WriteOutcomeUnknownError";
  readonly method: string;
  readonly path: string;
  readonly code: string;

  constructor(input: { method: string; path: string; code: string }) {
    super(
      `${input.method} ${input.path} got no response (${input.code}): the write may or may not have happened. ` +
        "It was not retried because the request has no idempotency key. Check the target system before re-running, or set idempotencyKey to make retries safe.",
    );
    this.method = input.method;
    this.path = input.path;
    this.code = input.code;
  }
}

/** A bad input: one line saying what was wrong and what to do. */
export class ThrottleInputError extends Error {
  override readonly name = "ThrottleInputError";
  constructor(message: string) {
    super(message);
  }
}

/** The response body passed the size limit (counted after decompression); it was not kept. */
export class ResponseTooLargeError extends Error {
  override readonly name = "ResponseTooLargeError";
  readonly limitBytes: number;
  constructor(input: { method: string; path: string; limitBytes: number }) {
    super(
      `${input.method} ${input.path}: the response is larger than ${input.limitBytes} bytes (after decompression), the limit for one response. ` +
        "Ask the API for a smaller page, or raise the response size limit.",
    );
    this.limitBytes = input.limitBytes;
  }
}
