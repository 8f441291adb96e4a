/**
 * LinkedIn's APIs (Marketing, Community Management, Sign In). Every limit is a number of calls per
 * day, per application and per member of an application, reset at midnight UTC; a call over it is
 * answered 429, and no header shows the limit, what is left or a wait (RATE_DOC). "In rare cases"
 * a 429 is infrastructure protection instead, which passes by itself (RATE_DOC). The body names
 * which: "Resource level throttle APPLICATION DAY limit for calls to this resource is reached."
 * https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/rate-limits
 * https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/error-handling
 *
 * A daily limit retried in the run is retried until midnight: each attempt a call refused, and the
 * day's jobs held inline. So a 429 whose message names a day's limit is a quota that waits for the
 * next midnight UTC; any other 429 is a burst, backed off.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readRetryAfter } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, throttledBy, untilDailyReset } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/rate-limits";
const ERRORS_DOC = "https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/error-handling";
/** "Resource level throttle APPLICATION DAY limit ...", "... MEMBER DAY limit ...": whose day's limit. */
const DAY_LIMIT = /\b(APPLICATION|MEMBER)\b[^.]*\bDAY\b/i;

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
  const message = asString(field(ctx.body, "message")) ?? ctx.bodyText.slice(0, 2048);
  const day = DAY_LIMIT.exec(message);
  if (day) {
    const who = day[1]!.toLowerCase();
    const wait = untilDailyReset(ctx, 0, "doc:daily-reset-midnight-utc");
    return throttledBy("quota", wait, {
      retryable: false,
      scope: { limit: `${who}-day` },
      reason: `LinkedIn 429: the ${who}'s daily limit for this resource is reached; it resets at midnight UTC, so the work waits for that (${describeWait(wait)}) and is not retried in this run.`,
    });
  }
  return throttledBy("burst", retryAfter, {
    reason: `LinkedIn 429 that names no day's limit (infrastructure protection, which passes by itself); ${describeWait(retryAfter)}.`,
  });
}

export const linkedin: Dialect = {
  id: "linkedin",
  label: "LinkedIn",
  hosts: ["api.linkedin.com"],
  docs: [RATE_DOC, ERRORS_DOC],
  interpret,
};
