import { action, input } from "@prismatic-io/spectral";
import { classify } from "../engine";
import { parseJsonish, parseOptionalText, parseProvider, parseWhole, sendRequestInputs } from "../inputs";
import { ThrottleInputError } from "../client";

/** Explain Throttle Response: the verdict for a response another component's step received. */
export const explainResponse = action({
  display: {
    label: "Explain Throttle Response",
    description: "Read a status, headers and body from another step and say whether it is a throttle, how long to wait and why.",
  },
  inputs: {
    status: input({ label: "Status", type: "string", required: true, example: "429", clean: (v: unknown) => parseWhole("status", v, 200, 100, 599) }),
    headers: input({ label: "Headers", type: "data", required: false, comments: "The response headers (an object, or JSON text).", clean: (v: unknown) => parseJsonish("headers", v) }),
    body: input({ label: "Body", type: "data", required: false, comments: "The response body (an object, or text).", clean: (v: unknown) => parseJsonish("body", v) }),
    url: input({ label: "Request URL", type: "string", required: false, comments: "Lets the host pick the provider's rules.", clean: parseOptionalText }),
    method: input({ label: "Request Method", type: "string", required: false, default: "GET", clean: parseOptionalText }),
    provider: sendRequestInputs.provider,
  },
  allowsBranching: true,
  staticBranchNames: ["Throttled", "Not Throttled"],
  perform: async (_context, params) => {
    const status = parseWhole("status", params.status, 200, 100, 599);
    const headers = parseJsonish("headers", params.headers);
    if (headers !== undefined && (headers === null || typeof headers !== "object" || Array.isArray(headers))) {
      throw new ThrottleInputError("Invalid headers: expected an object of header names to values (or its JSON text).");
    }
    const nowMs = Date.now();
    const verdict = classify(
      {
        request: { method: parseOptionalText(params.method) ?? "GET", url: parseOptionalText(params.url) },
        response: { status, headers: headers as Record<string, string> | undefined, body: parseJsonish("body", params.body) },
        provider: parseProvider(params.provider),
      },
      { nowMs },
    );
    const notBefore = verdict.minWaitMs === null ? null : new Date(nowMs + verdict.minWaitMs).toISOString();
    return { branch: verdict.throttled ? "Throttled" : "Not Throttled", data: { ...verdict, notBefore } };
  },
});

