/**
 * Mailchimp Marketing. Errors are problem+json. "TooManyRequests 429: You have exceeded the limit
 * of 10 simultaneous connections." That is a per-account concurrency limit; no wait and no limit
 * headers are documented, so the client backs off. The doc gives only this prose, so the detail
 * text is matched (the one place this dialect reads prose).
 * https://mailchimp.com/developer/marketing/docs/errors/ ; https://mailchimp.com/developer/marketing/docs/fundamentals/#api-limits
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import type { Interpretation } from "../types";
import { impliedWait, interpretStatus, readStandardSignals } from "./generic";

function interpret(ctx: SignalContext): Interpretation {
  const signals = readStandardSignals(ctx, "auto");
  if (ctx.status !== 429) return interpretStatus(ctx, signals);
  const detail = asString(field(ctx.body, "detail")) ?? ctx.bodyText;
  const concurrent = /simultaneous connections/i.test(detail);
  const datacenter = /^([a-z]+\d+)\.api\.mailchimp\.com$/.exec(ctx.host)?.[1];
  const wait = impliedWait(signals);
  return {
    throttled: true,
    retryable: true,
    limitType: concurrent ? "concurrency" : "burst",
    minWaitMs: wait?.waitMs ?? null,
    waitSource: wait?.source ?? null,
    scope: datacenter ? { datacenter } : {},
    budget: signals.budget,
    reason: concurrent
      ? "Mailchimp 429: over the account's 10 simultaneous connections; back off and retry once a request finishes."
      : "Mailchimp 429 Too Many Requests; back off and retry.",
  };
}

export const mailchimp: Dialect = {
  id: "mailchimp",
  label: "Mailchimp Marketing",
  hosts: [".api.mailchimp.com"],
  docs: ["https://mailchimp.com/developer/marketing/docs/errors/", "https://mailchimp.com/developer/marketing/docs/fundamentals/#api-limits"],
  interpret,
};
