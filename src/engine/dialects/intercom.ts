/**
 * Intercom. Limits per app and workspace, enforced over 10-second windows. A 429 carries
 * errors[].code "rate_limit_exceeded" ("Exceeded rate limit of 167 in 10_seconds");
 * X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (a UNIX timestamp, epoch seconds)
 * come on every response.
 * https://developers.intercom.com/docs/references/rest-api/errors/rate-limiting
 */
import type { SignalContext } from "../context";
import { asArray, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readReset } from "../signals";
import type { Interpretation } from "../types";
import { interpretStatus, readStandardSignals } from "./generic";
import { throttledBy } from "./_dialect-kit";

function interpret(ctx: SignalContext): Interpretation {
  // X-RateLimit-Reset is epoch seconds for this host.
  const signals = readStandardSignals(ctx, "epoch-seconds");
  const codes = asArray(field(ctx.body, "errors")).map((e) => asString(field(e, "code")));
  if (codes.includes("rate_limit_exceeded") || ctx.status === 429) {
    // Retry-After when sent, else the window's reset: the 429 itself says the window is spent.
    const reset =
      signals.reset ?? (signals.budget === null ? readReset(ctx, "x-ratelimit-reset", "epoch-seconds") : null);
    const wait = signals.retryAfter ?? reset;
    return throttledBy("burst", wait, {
      scope: codes.includes("rate_limit_exceeded") ? { code: "rate_limit_exceeded" } : {},
      budget: signals.budget,
      reason: wait
        ? `Intercom ${ctx.status} rate_limit_exceeded: the app's 10-second window is spent; retry after ${wait.waitMs} ms (${wait.source}).`
        : `Intercom ${ctx.status} rate_limit_exceeded with no reset given; back off.`,
    });
  }
  return interpretStatus(ctx, signals);
}

export const intercom: Dialect = {
  id: "intercom",
  label: "Intercom",
  hosts: ["api.intercom.io", "api.eu.intercom.io", "api.au.intercom.io"],
  docs: ["https://developers.intercom.com/docs/references/rest-api/errors/rate-limiting"],
  interpret,
};
