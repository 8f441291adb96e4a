/**
 * Gorgias's REST API, one account per subdomain ({domain}.gorgias.com/api/..., ACCESS_DOC).
 * https://developers.gorgias.com/reference/limitations
 * https://developers.gorgias.com/docs/access-tokens-api-keys
 *
 * A leaky bucket per account: an API-key integration may make 40 requests in a 20 s window, an
 * OAuth2 app 80, and Enterprise accounts the same counts in a 10 s window. Every answer carries
 * X-Gorgias-Account-Api-Call-Limit, used/limit ("10/80": 10 made, the limit 80); over the bucket, a
 * 429 whose Retry-After gives the seconds to wait (LIMITS_DOC).
 *
 * So the header is the account's budget as Shopify REST's used/limit is (remaining = limit - used,
 * no reset instant: the bucket drains continuously), with the documented leak as an estimate, and a
 * 429 waits its Retry-After. 401 and 403 are access errors and stay final (interpretStatus).
 */
import type { SignalContext } from "../context";
import type { Dialect } from "../dialect";
import { parseUsedOfLimit, readRetryAfter } from "../signals";
import type { Budget, Interpretation } from "../types";
import { budgetFromUsed, describeWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const LIMITS_DOC = "https://developers.gorgias.com/reference/limitations";
const ACCESS_DOC = "https://developers.gorgias.com/docs/access-tokens-api-keys";

const CALL_LIMIT = "x-gorgias-account-api-call-limit";
/** The bucket's documented window, seconds: 40 or 80 requests per 20 s (LIMITS_DOC). */
const WINDOW_SECONDS = 20;
/** The slowest documented leak: an API key's 40 per 20 s (LIMITS_DOC). */
const SLOWEST_PER_SECOND = 40 / WINDOW_SECONDS;

/**
 * used/limit of the account's bucket. The leak rate is not sent: limit per 20 s is the documented
 * rate for either bucket size, an estimate only (an Enterprise account's 10 s window leaks twice as
 * fast, which the governor learns from the count coming back sooner), and a bucket shown smaller
 * than 40 starts at the slowest documented rate, 2 per s.
 */
function readBudget(ctx: SignalContext): Budget | null {
  const raw = ctx.header(CALL_LIMIT);
  if (raw === undefined) return null;
  const parsed = parseUsedOfLimit(raw);
  if (!parsed) {
    ctx.ignore(CALL_LIMIT, raw, "not used/limit");
    return null;
  }
  return {
    ...budgetFromUsed(parsed.used, parsed.limit, CALL_LIMIT),
    restorePerSecond: parsed.limit / WINDOW_SECONDS,
    restoreEstimated: true,
    restoreFloorPerSecond: SLOWEST_PER_SECOND,
  };
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const budget = readBudget(ctx);
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget, reset: null });
  const shown = budget ? ` (${budget.remaining} of ${budget.limit ?? "?"} left)` : "";
  return throttledBy("burst", retryAfter, {
    budget,
    reason: `Gorgias 429: the account's request bucket is full${shown}; ${describeWait(retryAfter)}.`,
  });
}

export const gorgias: Dialect = {
  id: "gorgias",
  label: "Gorgias",
  hosts: [".gorgias.com"],
  docs: [LIMITS_DOC, ACCESS_DOC],
  interpret,
};
