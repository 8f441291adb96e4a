/**
 * Microsoft Graph.
 * https://learn.microsoft.com/en-us/graph/throttling
 * https://learn.microsoft.com/en-us/graph/errors
 *
 * Throttling is 429 with Retry-After in seconds (the SDK also accepts an HTTP-date); without
 * Retry-After the docs say to back off exponentially. 503 ("overloaded") and 504 may carry
 * Retry-After too, and msgraph-sdk-javascript retries 429, 503 and 504.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { readRetryAfter } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const THROTTLING_DOC = "https://learn.microsoft.com/en-us/graph/throttling";

/** Error codes that name a throttle (https://learn.microsoft.com/en-us/graph/errors). */
const THROTTLE_CODES = new Set(["toomanyrequests", "activitylimitreached"]);

function interpretMsgraph(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const code = asString(field(ctx.body, "error", "code"));

  if (ctx.status === 429 || (code !== undefined && THROTTLE_CODES.has(code.toLowerCase()))) {
    return throttledBy("burst", retryAfter, {
      scope: {},
      budget: null,
      reason: `Microsoft Graph throttled the request (${ctx.status}${code ? ` ${code}` : ""}); ${describeWait(retryAfter)}.`,
    });
  }
  if ((ctx.status === 503 || ctx.status === 504) && retryAfter) {
    return throttledBy("server", retryAfter, {
      scope: {},
      budget: null,
      reason: `Microsoft Graph is overloaded (${ctx.status} with Retry-After); ${describeWait(retryAfter)}.`,
    });
  }
  return interpretStatus(ctx, { retryAfter, budget: null, reset: null });
}

export const msgraph: Dialect = {
  id: "msgraph",
  label: "Microsoft Graph",
  hosts: ["graph.microsoft.com", "graph.microsoft.us", "dod-graph.microsoft.us", "microsoftgraph.chinacloudapi.cn"],
  docs: [THROTTLING_DOC, "https://learn.microsoft.com/en-us/graph/errors"],
  interpret: interpretMsgraph,
};
