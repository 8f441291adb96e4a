/**
 * QuickBooks Online. 500 requests per minute per realm, 10 concurrent per realm and app, 40 batch
 * requests per minute. "HTTP Status Code 429 ... wait 60 seconds before retrying." The fault body
 * carries code 3001 ("message=ThrottleExceeded; errorCode=003001"), which covers both the rate and
 * the concurrency limit. No wait header is sent, so the documented 60 s is the wait.
 * https://developer.intuit.com/app/developer/qbo/docs/learn/limits-and-throttles
 */
import type { SignalContext } from "../context";
import { asArray, asString, field } from "../context";
import type { Dialect } from "../dialect";
import type { Interpretation } from "../types";
import { impliedWait, interpretStatus, readStandardSignals } from "./generic";
import { throttledBy } from "./_dialect-kit";

const DOC_WAIT_MS = 60_000;

function faultCodes(body: unknown): string[] {
  // JSON: {"Fault":{"Error":[{"code":"3001",...}]}}; some SDKs lower-case the keys.
  const fault = field(body, "Fault") ?? field(body, "fault");
  const errors = asArray(field(fault, "Error") ?? field(fault, "error"));
  return errors.map((e) => asString(field(e, "code")) ?? String(field(e, "code") ?? "")).filter((c) => c !== "");
}

/** An IPP fault is well under a kilobyte; only the head of a body is searched for one. */
const MAX_FAULT_SCAN = 65_536;

/**
 * The XML fault form, <Error code="3001">, found without a regex that scans the rest of the body
 * from every "<Error": each candidate tag is cut at its first ">" within 512 characters, so the
 * work is linear in the (bounded) text, whatever the body holds.
 */
function xmlFaultHasThrottleCode(text: string): boolean {
  const head = text.length > MAX_FAULT_SCAN ? text.slice(0, MAX_FAULT_SCAN) : text;
  for (let start = head.indexOf("<Error"); start >= 0; start = head.indexOf("<Error", start + 6)) {
    const window = head.slice(start, start + 512);
    const close = window.indexOf(">");
    if ((close < 0 ? window : window.slice(0, close)).includes('code="3001"')) return true;
  }
  return false;
}

function realmOf(path: string): Record<string, string> {
  const m = /\/v3\/company\/(\d+)/.exec(path);
  return m ? { realm: m[1]! } : {};
}

function interpret(ctx: SignalContext): Interpretation {
  const signals = readStandardSignals(ctx, "auto");
  const codes = faultCodes(ctx.body);
  // The XML fault form carries the same code: <Error code="3001">.
  const throttleCode = codes.includes("3001") || (typeof ctx.body === "string" && xmlFaultHasThrottleCode(ctx.bodyText));
  if (ctx.status === 429 || throttleCode) {
    // "wait 60 seconds before retrying": the documented fixed wait, unless the server sends its own.
    const wait = impliedWait(signals) ?? { waitMs: DOC_WAIT_MS, source: "doc:fixed-60s" };
    return throttledBy("burst", wait, {
      scope: { ...realmOf(ctx.path), ...(throttleCode ? { code: "3001" } : {}) },
      budget: signals.budget,
      reason: `QuickBooks ${ctx.status}${throttleCode ? " ThrottleExceeded (3001)" : ""}: the realm's request or concurrency limit; wait ${wait.waitMs / 1000} s before retrying.`,
    });
  }
  return interpretStatus(ctx, signals);
}

export const quickbooks: Dialect = {
  id: "quickbooks",
  label: "QuickBooks Online",
  hosts: ["quickbooks.api.intuit.com", "sandbox-quickbooks.api.intuit.com"],
  docs: ["https://developer.intuit.com/app/developer/qbo/docs/learn/limits-and-throttles"],
  interpret,
};
