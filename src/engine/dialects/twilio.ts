/**
 * Twilio. A 429 carries error code 20429 ("Too Many Requests"): the account's concurrency limit.
 * Twilio sends no wait; the request "was never processed and is always safe to retry".
 * https://www.twilio.com/docs/api/errors/20429
 */
import type { SignalContext } from "../context";
import { asNumber, field } from "../context";
import type { Dialect } from "../dialect";
import type { Interpretation } from "../types";
import { impliedWait, interpretStatus, readStandardSignals } from "./generic";
import { throttledBy } from "./_dialect-kit";

/** The account SID in /2010-04-01/Accounts/{AccountSid}/...: the limit is per account. */
function accountOf(path: string): Record<string, string> {
  const m = /\/Accounts\/(AC[0-9a-zA-Z]+)/.exec(path);
  return m ? { account: m[1]! } : {};
}

function interpret(ctx: SignalContext): Interpretation {
  const signals = readStandardSignals(ctx, "auto");
  const code = asNumber(field(ctx.body, "code"));
  // https://www.twilio.com/docs/api/errors/20429 : "never processed and is always safe to retry".
  if (code === 20429 || ctx.status === 429) {
    const documented = code === 20429;
    // No wait is documented; a Retry-After, if one ever comes, is still the server's word.
    const wait = impliedWait(signals);
    return throttledBy("concurrency", wait, {
      writeNotProcessed: documented,
      scope: { ...accountOf(ctx.path), ...(documented ? { code: "20429" } : {}) },
      budget: signals.budget,
      reason: documented
        ? "Twilio 20429: too many concurrent requests on the account; the request was never processed and is safe to retry after a backoff."
        : "Twilio 429 without error code 20429: treated as the account concurrency limit; back off and retry.",
    });
  }
  return interpretStatus(ctx, signals);
}

export const twilio: Dialect = {
  id: "twilio",
  label: "Twilio",
  hosts: [".twilio.com"],
  docs: ["https://www.twilio.com/docs/api/errors/20429"],
  interpret,
};
