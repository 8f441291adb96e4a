/**
 * Microsoft Dataverse Web API.
 * https://learn.microsoft.com/en-us/power-apps/developer/data-platform/api-limits
 *
 * Service-protection limits per user, per web server, over a 300 s sliding window: 6,000
 * requests (0x80072322), 1,200 s of combined execution time (0x80072321) and 52 concurrent
 * requests (0x80072326). Each answers 429 with Retry-After in seconds; clients that keep
 * sending get a longer Retry-After. The x-ms-ratelimit-* headers are for debugging only.
 */
import type { SignalContext } from "../context";
import { field } from "../context";
import type { Dialect } from "../dialect";
import { readCount, readRetryAfter } from "../signals";
import type { Budget, Interpretation, LimitType, ScopeParts } from "../types";
import { describeWait } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://learn.microsoft.com/en-us/power-apps/developer/data-platform/api-limits";

/** Hex codes of the Web API, and the signed decimal form the SDK (Organization service) uses. */
const LIMIT_CODES: Record<string, { limitType: LimitType; what: string }> = {
  "0x80072322": { limitType: "burst", what: "number of requests (6,000 per 300 s)" },
  "-2147015902": { limitType: "burst", what: "number of requests (6,000 per 300 s)" },
  // Execution time is a budget of server seconds, not of requests: a "cost" limit (it comes back as
  // the 300 s window slides, and a cheaper request spends less of it).
  "0x80072321": { limitType: "cost", what: "combined execution time (1,200 s per 300 s)" },
  "-2147015903": { limitType: "cost", what: "combined execution time (1,200 s per 300 s)" },
  "0x80072326": { limitType: "concurrency", what: "concurrent requests (52)" },
  "-2147015898": { limitType: "concurrency", what: "concurrent requests (52)" },
};

function interpretDataverse(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const scope: ScopeParts = ctx.host ? { org: ctx.host } : {};
  const rawCode = field(ctx.body, "error", "code");
  const code = typeof rawCode === "number" ? String(rawCode) : typeof rawCode === "string" ? rawCode.trim().toLowerCase() : undefined;
  const known = code === undefined ? undefined : LIMIT_CODES[code];
  const remaining = readCount(ctx, "x-ms-ratelimit-burst-remaining-xrm-requests");
  const budget: Budget | null =
    remaining === null ? null : { remaining, limit: null, resetAt: null, source: "x-ms-ratelimit-burst-remaining-xrm-requests" };

  if (known || ctx.status === 429) {
    return {
      throttled: true,
      retryable: true,
      limitType: known?.limitType ?? "burst",
      minWaitMs: retryAfter?.waitMs ?? null,
      waitSource: retryAfter?.source ?? null,
      scope,
      budget,
      reason: `Dataverse service protection limit${known ? ` on ${known.what} (${code})` : ""}; ${describeWait(retryAfter)}.`,
    };
  }
  return interpretStatus(ctx, { retryAfter, budget, reset: null }, scope);
}

export const dataverse: Dialect = {
  id: "dataverse",
  readsSuccesses: true,
  label: "Microsoft Dataverse Web API",
  hosts: [".dynamics.com"],
  docs: [LIMITS_DOC],
  interpret: interpretDataverse,
};
