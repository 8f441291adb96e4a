/**
 * Airtable. 5 requests per second per base and 50 per second per token; "If you exceed this rate,
 * you will receive a 429 status code and will need to wait 30 seconds before subsequent requests
 * will succeed." No wait header is documented, so the documented 30 s is the wait.
 * https://airtable.com/developers/web/api/rate-limits ; https://support.airtable.com/docs/managing-api-call-limits-in-airtable
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import type { Interpretation } from "../types";
import { impliedWait, interpretStatus, readStandardSignals } from "./generic";
import { throttledBy } from "./_dialect-kit";

const DOC_WAIT_MS = 30_000;

/** {"error":{"type":"TOO_MANY_REQUESTS",...}} or {"error":"TOO_MANY_REQUESTS"}. */
function errorType(body: unknown): string | undefined {
  return asString(field(body, "error", "type")) ?? asString(field(body, "error"));
}

function interpret(ctx: SignalContext): Interpretation {
  const signals = readStandardSignals(ctx, "auto");
  const type = errorType(ctx.body);
  if (ctx.status === 429 || type === "TOO_MANY_REQUESTS") {
    const base = /^\/v0\/(app[0-9A-Za-z]+)/.exec(ctx.path)?.[1];
    const wait = impliedWait(signals) ?? { waitMs: DOC_WAIT_MS, source: "doc:fixed-30s" };
    return throttledBy("burst", wait, {
      scope: base ? { base } : {},
      budget: signals.budget,
      reason: `Airtable ${ctx.status}: over 5 requests/s per base (or 50/s per token); wait ${wait.waitMs / 1000} s before the next request.`,
    });
  }
  return interpretStatus(ctx, signals);
}

export const airtable: Dialect = {
  id: "airtable",
  label: "Airtable",
  hosts: ["api.airtable.com"],
  docs: ["https://airtable.com/developers/web/api/rate-limits", "https://support.airtable.com/docs/managing-api-call-limits-in-airtable"],
  interpret,
};
