/**
 * Notion. An average of 3 requests per second per connection. A 429 has code "rate_limited" and
 * "Retry-After ... an integer number of seconds"; 529 "service_overload" is server back-pressure.
 * 409 "conflict_error" is a data collision: "Make sure the parameters are up to date and try again."
 * https://developers.notion.com/reference/request-limits ; https://developers.notion.com/reference/status-codes
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import type { Interpretation } from "../types";
import { impliedWait, interpretStatus, readStandardSignals } from "./generic";

function interpret(ctx: SignalContext): Interpretation {
  const signals = readStandardSignals(ctx, "auto");
  const code = asString(field(ctx.body, "code"));
  const wait = impliedWait(signals);
  const base = { minWaitMs: wait?.waitMs ?? null, waitSource: wait?.source ?? null, budget: signals.budget };
  if (code === "rate_limited" || ctx.status === 429) {
    // additional_data.rate_limit_reason is newer and its values are UNCONFIRMED: kept as scope only.
    const limitReason = asString(field(ctx.body, "additional_data", "rate_limit_reason"));
    return {
      ...base,
      throttled: true,
      retryable: true,
      limitType: "burst",
      scope: limitReason ? { rate_limit_reason: limitReason } : {},
      reason: wait
        ? `Notion ${ctx.status} rate_limited: over the connection's request rate; retry after ${wait.waitMs / 1000} s (${wait.source}).`
        : `Notion ${ctx.status} rate_limited with no Retry-After; back off.`,
    };
  }
  if (code === "service_overload" || ctx.status === 529) {
    return {
      ...base,
      throttled: true,
      retryable: true,
      limitType: "server",
      reason: `Notion ${ctx.status} service_overload: the service is shedding load; ${wait ? `retry after ${wait.waitMs} ms` : "back off and retry"}.`,
    };
  }
  if (code === "conflict_error") {
    return {
      ...base,
      throttled: false,
      retryable: true,
      limitType: "contention",
      reason: "Notion 409 conflict_error: a data collision; retry with backoff after refreshing the data.",
    };
  }
  return interpretStatus(ctx, signals);
}

export const notion: Dialect = {
  id: "notion",
  label: "Notion",
  hosts: ["api.notion.com"],
  docs: ["https://developers.notion.com/reference/request-limits", "https://developers.notion.com/reference/status-codes"],
  interpret,
};
