import { action } from "@prismatic-io/spectral";
import { createThrottleClient } from "../client";
import { authFromConnection } from "../connections";
import { parseSendRequest, sendRequestInputs } from "../inputs";
import { executionDeadlineMs, loggerOf, openLedger } from "./shared";

/**
 * Send Request: Raw Request with the throttle engine behind it. Long waits go to onLongWait:
 * fail (throw, Flow retry re-runs later), defer (branch Deferred, not_before saved in cross-flow
 * state), respond (Deferred, plus a 429/503 with Retry-After for a synchronous caller).
 */
export const sendRequest = action({
  display: {
    label: "Send Request",
    description: "Send an HTTP request that waits as long as the API asks, shares a not_before per rate-limit scope, and defers long waits.",
  },
  inputs: sendRequestInputs,
  allowsBranching: true,
  staticBranchNames: ["Success", "Deferred"],
  perform: async (context, params) => {
    const input = parseSendRequest(params);
    const nowMs = Date.now();
    const auth = authFromConnection(params.connection);
    const ledger = openLedger(context, nowMs);
    const client = createThrottleClient({
      baseUrl: auth.baseUrl,
      headers: auth.headers,
      params: auth.params,
      credential: auth.credential,
      secrets: auth.secrets,
      provider: input.provider,
      scopeKey: input.scopeKey,
      ledger,
      logger: loggerOf(context),
      budgetThreshold: input.budgetThreshold,
      breakerThreshold: input.breakerThreshold,
      onLongWait: input.onLongWait === "fail" ? "fail" : "defer",
      policy: {
        maxAttempts: input.maxAttempts,
        maxInlineWaitMs: input.maxInlineWaitSeconds * 1000,
        maxTotalMs: input.maxTotalSeconds * 1000,
        deadlineMs: executionDeadlineMs(context.startedAt, nowMs),
        jitter: input.jitter,
        backoffBaseMs: input.backoffBaseMs,
        backoffCapMs: input.backoffCapMs,
      },
    });
    const result = await client.request({
      method: input.method,
      url: input.url,
      data: input.data,
      headers: input.headers,
      params: input.queryParams,
      idempotencyKey: input.idempotencyKey,
      timeoutMs: input.timeoutMs,
      responseType: input.responseType,
    });
    const crossFlowState = ledger.toCrossFlowState(context.crossFlowState);

    if (result.outcome === "deferred") {
      const data = { outcome: "deferred", notBefore: result.notBefore, waitMs: result.waitMs, reason: result.reason, scope: result.scope, attempts: result.attempts, verdict: result.verdict };
      if (input.onLongWait === "respond") {
        const retryAfterSeconds = Math.max(1, Math.ceil((result.waitMs ?? 0) / 1000));
        const statusCode = result.verdict?.limitType === "server" ? 503 : 429;
        return { branch: "Deferred", data, crossFlowState, statusCode, contentType: "application/json", headers: { "Retry-After": String(retryAfterSeconds) } };
      }
      return { branch: "Deferred", data, crossFlowState };
    }
    if (result.outcome === "success") {
      const data = { status: result.status, headers: result.headers, data: result.data, outcome: result.outcome, attempts: result.attempts, verdict: result.verdict };
      return { branch: "Success", data, crossFlowState };
    }
    // http_error / gave_up: fail the step like Raw Request does, with the reason in one line.
    const statusText = result.status === null ? "no response" : `HTTP ${result.status}`;
    const body = typeof result.data === "string" ? result.data : JSON.stringify(result.data ?? "");
    throw new Error(`${input.method} request ${result.outcome === "gave_up" ? "gave up" : "failed"} after ${result.attempts.length} call(s), ${statusText}: ${result.reason} ${body.slice(0, 300)}`.trim());
  },
});
