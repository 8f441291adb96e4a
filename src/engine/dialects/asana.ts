/**
 * Asana. Per token: 150 requests per minute on free plans, 1,500 paid, 60 per minute for search,
 * concurrent and cost-based limits too; every one answers 429 with Retry-After (seconds) and an
 * errors[].message. 402 means the feature is above the workspace's premium level.
 * https://developers.asana.com/docs/rate-limits ; https://developers.asana.com/docs/errors
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import type { Interpretation } from "../types";
import { impliedWait, interpretStatus, readStandardSignals } from "./generic";
import { throttledBy } from "./_dialect-kit";

function interpret(ctx: SignalContext): Interpretation {
  const signals = readStandardSignals(ctx, "auto");
  if (ctx.status === 429) {
    const wait = impliedWait(signals);
    return throttledBy("burst", wait, {
      budget: signals.budget,
      reason: wait
        ? `Asana 429: the token's rate, concurrency or cost limit; retry after ${wait.waitMs / 1000} s (${wait.source}).`
        : "Asana 429 with no Retry-After; back off.",
    });
  }
  if (ctx.status === 402) {
    // https://developers.asana.com/docs/errors : 402 Payment Required, a premium-only feature.
    return {
      throttled: false,
      retryable: false,
      limitType: "permission",
      minWaitMs: null,
      waitSource: null,
      budget: signals.budget,
      reason: "Asana 402: the request needs a premium feature the workspace lacks; retrying will not help.",
    };
  }
  return interpretStatus(ctx, signals);
}

export const asana: Dialect = {
  id: "asana",
  label: "Asana",
  hosts: ["app.asana.com"],
  docs: ["https://developers.asana.com/docs/rate-limits", "https://developers.asana.com/docs/errors"],
  interpret,
};
