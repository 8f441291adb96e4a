/**
 * Trello's REST API. Each API key may make 300 requests per 10 s, each token 100 per 10 s, and
 * requests to /1/members/ are limited to 100 per 900 s; over a limit, a 429 whose body names it
 * (`API_TOKEN_LIMIT_EXCEEDED`, `API_KEY_LIMIT_EXCEEDED`), with no header showing a count or a wait.
 * "If the amount of 429 errors per API key exceeds 200, Trello will return 429 for the remainder of
 * the API key requests for the remainder of the 10s window" (RATE_DOC): retries that back off from
 * half a second inside that window spend that allowance of refusals.
 * https://developer.atlassian.com/cloud/trello/guides/rest-api/rate-limits/
 *
 * So the documented interval is the wait: 10 s for the key's and the token's limits, 900 s for the
 * members endpoint's (which is its own scope, known from the path, so that it does not hold back
 * calls to boards and cards).
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readRetryAfter } from "../signals";
import type { Interpretation, ScopeParts } from "../types";
import { describeWait, docWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://developer.atlassian.com/cloud/trello/guides/rest-api/rate-limits/";

/** Requests to /1/members/ are limited on their own (100 per 900 s, RATE_DOC); every request counts against the key and token. */
function endpointScope(path: string): ScopeParts {
  return { endpoint: /^\/1\/members(?:\/|$|\?)/.test(path) ? "members" : "api" };
}

function interpret(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
  const code = asString(field(ctx.body, "error"))?.trim().toUpperCase();
  const keyOrToken = code === "API_KEY_LIMIT_EXCEEDED" ? "key" : code === "API_TOKEN_LIMIT_EXCEEDED" ? "token" : null;
  // A key's or token's limit spans the whole API (no endpoint in its scope); any other 429 on
  // /1/members/ is that endpoint's own limit.
  const members = keyOrToken === null && endpointScope(ctx.path).endpoint === "members";
  const wait = longestWait(retryAfter, docWait(members ? 900 : 10));
  const which = members ? "the members endpoint's 100 per 900 s" : keyOrToken === "key" ? "the API key's 300 per 10 s" : keyOrToken === "token" ? "the token's 100 per 10 s" : "a limit per 10 s";
  const scope: ScopeParts = members ? { endpoint: "members" } : keyOrToken === null ? {} : { limit: keyOrToken };
  return throttledBy("burst", wait, { scope, reason: `Trello 429${code ? ` ${code}` : ""}: ${which} is spent; ${describeWait(wait)}.` });
}

export const trello: Dialect = {
  id: "trello",
  label: "Trello",
  hosts: ["api.trello.com"],
  docs: [RATE_DOC],
  interpret,
  requestScope: ({ path }) => endpointScope(path),
};
