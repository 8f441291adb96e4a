/**
 * The last step of a request: what the caller gets. Every text and value passes the redactor;
 * only typed errors are thrown (a long wait in fail mode, a write whose outcome is unknown, a
 * response over the size limit, an abort).
 */
import { isAxiosError, type AxiosResponse } from "axios";
import { abortError } from "./clock";
import { ResponseTooLargeError, ThrottleDeferredError, WriteOutcomeUnknownError } from "./errors";
import { logPath } from "./prepare";
import { LongWait, type RequestRun } from "./run";
import type { ThrottleResult } from "./types";

function common(run: RequestRun): Pick<ThrottleResult, "attempts" | "slotWaitMs" | "scope" | "provider" | "verdict"> {
  return { attempts: run.attempts, slotWaitMs: run.slotWaitMs, scope: run.req.governorScope, provider: run.req.provider, verdict: run.req.redactor.value(run.lastVerdict) };
}

function answerParts(run: RequestRun, response: AxiosResponse | undefined): Pick<ThrottleResult, "status" | "headers" | "data"> {
  const { redactor } = run.req;
  return {
    status: response?.status ?? null,
    headers: response ? redactor.headers(response.headers) : {},
    data: response ? redactor.value(response.data as unknown) : null,
  };
}

/**
 * Every answered request ends here: one object literal, not spreads of answerParts and common (a
 * literal built from spreads takes V8's slower copy path; this runs once per request).
 */
export function successResult(run: RequestRun, response: AxiosResponse): ThrottleResult {
  const { redactor } = run.req;
  return {
    outcome: response.status < 400 ? "success" : "http_error",
    status: response.status,
    headers: redactor.headers(response.headers),
    data: redactor.value(response.data as unknown),
    reason: redactor.text(run.lastVerdict?.reason ?? `HTTP ${response.status}`),
    attempts: run.attempts,
    slotWaitMs: run.slotWaitMs,
    scope: run.req.governorScope,
    provider: run.req.provider,
    verdict: redactor.value(run.lastVerdict),
  };
}

function longWaitResult(run: RequestRun, notBeforeMs: number, reason: string, response: AxiosResponse | undefined): ThrottleResult {
  const { ctx, req } = run;
  const waitMs = Math.max(0, notBeforeMs - ctx.clock.nowMs());
  const notBefore = new Date(notBeforeMs).toISOString();
  if (ctx.onLongWait === "fail") {
    throw new ThrottleDeferredError({ notBefore, waitMs, provider: req.provider, scope: req.governorScope, reason: req.redactor.text(reason), verdict: req.redactor.value(run.lastVerdict), attempts: run.attempts.length });
  }
  return { outcome: "deferred", ...answerParts(run, response), notBefore, waitMs, reason: req.redactor.text(reason), ...common(run) };
}

/** A request that did not end in a final answer: a result, or a typed error. */
export function failureResult(run: RequestRun, error: unknown): ThrottleResult {
  const { req } = run;
  if (error instanceof LongWait) return longWaitResult(run, error.notBeforeMs, error.why, undefined);
  if (error instanceof Error && error.name === "AbortError") throw error;
  if (run.signal.aborted) throw abortError(run.signal);
  const settled = run.final;
  if (settled?.kind === "write_unknown") throw new WriteOutcomeUnknownError({ method: req.method, path: logPath(req), code: settled.code });
  if (settled?.kind === "too_large") throw new ResponseTooLargeError({ method: req.method, path: logPath(req), limitBytes: run.ctx.policy.maxResponseBytes });
  const response = isAxiosError(error) ? error.response : undefined;
  if (settled?.kind === "long_wait") return longWaitResult(run, settled.notBeforeMs, settled.reason, response);
  if (response && settled?.kind === "gave_up" && !run.lastVerdict?.retryable && !run.lastVerdict?.throttled) {
    // A final error answer (404, a validation 400, a permission 403): the answer itself is the result.
    return { outcome: "http_error", ...answerParts(run, response), reason: req.redactor.text(run.lastVerdict?.reason ?? `HTTP ${response.status}`), ...common(run) };
  }
  if (isAxiosError(error) || settled?.kind === "gave_up") {
    return {
      outcome: response && response.status < 400 ? "http_error" : "gave_up",
      ...answerParts(run, response),
      ...(settled?.kind === "gave_up" && settled.notBefore ? { notBefore: settled.notBefore } : {}),
      reason: req.redactor.text(settled?.kind === "gave_up" ? settled.reason : `${req.method} ${logPath(req)} failed: ${(error as Error).message}`),
      ...common(run),
    };
  }
  // Anything else (a bug, a thrown adapter error): never let it carry request config or secrets out.
  const wrapped = new Error(req.redactor.text(`${req.method} ${logPath(req)} failed: ${error instanceof Error ? error.message : String(error)}`));
  wrapped.name = error instanceof Error ? error.name : "Error";
  throw wrapped;
}
