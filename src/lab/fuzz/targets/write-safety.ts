/**
 * writeRetrySafety and applyWriteSafety on random requests (methods, keys blank or not, key
 * headers, GraphQL and other bodies) and random answers (classify's verdicts, or none).
 * Properties: it never throws; idempotent methods are always repeatable; a write with no key and
 * no read-only body is never repeatable after no response or after a 5xx that is not a limiter's
 * refusal; turning throttle write retries off is obeyed; the guard never turns a "fail" or "done"
 * into a retry, and leaves every decision of a repeatable request as it was.
 */
import { applyWriteSafety, classify, DEFAULT_POLICY, isGraphqlReadOnly, plan, writeRetrySafety } from "../../../engine";
import type { Verdict, WriteSafetyRequest } from "../../../engine";
import { Gen } from "../random";
import { randomResponse } from "../responses";
import { Tally } from "../tally";
import type { FuzzResult, FuzzTarget } from "../types";

const NOW_MS = Date.UTC(2026, 10, 30, 12);
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]);
const BODIES: unknown[] = [undefined, { query: "{ a }" }, { query: "mutation { b }" }, '{"query":"query Q { a }"}', { query: '{ a(x: "#") } mutation { b }' }, "a=1", { a: 1 }, [{ query: "{ a }" }]];

function randomRequest(gen: Gen): WriteSafetyRequest {
  const method = gen.chance(0.95) ? gen.pick(["GET", "POST", "POST", "PATCH", "PUT", "DELETE", "head", "OPTIONS", "TRACE"]) : gen.text(6);
  const request: WriteSafetyRequest = { method, body: gen.pick(BODIES) };
  if (gen.chance(0.3)) request.idempotencyKey = gen.pick(["k-1", "", "  ", "\t"]);
  if (gen.chance(0.3)) request.headers = { [gen.pick(["Idempotency-Key", "idempotency-key", "X-Other"])]: gen.pick(["k-2", "", " ", ["a", "b"] as never]) };
  return request;
}

function hasKey(request: WriteSafetyRequest): boolean {
  if ((request.idempotencyKey ?? "").trim() !== "") return true;
  return Object.entries(request.headers ?? {}).some(([name, value]) => name.toLowerCase() === "idempotency-key" && String(value ?? "").trim() !== "");
}

function problems(request: WriteSafetyRequest, verdict: Verdict | null, throttleRetries: boolean, gen: Gen): string[] {
  const safety = writeRetrySafety(request, verdict, { retryWritesAfterThrottle: throttleRetries });
  const broken: string[] = [];
  // A request without a method is a GET (HTTP clients' default, and classify's).
  const method = request.method.trim().toUpperCase() || "GET";
  const writeWithoutCover = !IDEMPOTENT.has(method) && !hasKey(request) && !(method === "POST" && isGraphqlReadOnly(request.body));
  if (IDEMPOTENT.has(method) && !safety.repeatable) broken.push(`${method} not repeatable`);
  if (writeWithoutCover && verdict === null && safety.repeatable) broken.push("repeatable after no response");
  const limiterSignal = verdict !== null && verdict.throttled && ["burst", "quota", "concurrency", "cost"].includes(verdict.limitType);
  if (writeWithoutCover && verdict !== null && verdict.status >= 500 && !limiterSignal && !verdict.writeNotProcessed && safety.repeatable) broken.push(`repeatable after a ${verdict.status} without a limiter's signal`);
  if (writeWithoutCover && !throttleRetries && safety.basis === "throttle-refusal") broken.push("throttle write retries were off");
  if (!safety.reason) broken.push("no reason");
  if (verdict) {
    const decision = plan(verdict, { attempts: 1, firstAttemptAtMs: NOW_MS }, DEFAULT_POLICY, { nowMs: NOW_MS, random: gen.random });
    const guarded = applyWriteSafety(decision, safety);
    if (safety.repeatable && guarded !== decision) broken.push("changed the decision of a repeatable request");
    if ((decision.decision === "fail" || decision.decision === "done") && guarded.decision !== decision.decision) broken.push("turned a final decision into another");
    if (!safety.repeatable && (guarded.decision === "retry" || guarded.decision === "defer")) broken.push("lets an unsafe write be sent again");
  }
  return broken;
}

export const writeSafetyTarget: FuzzTarget = {
  name: "write safety",
  run(seed: number, count: number): FuzzResult {
    const gen = new Gen(seed);
    const tally = new Tally(false);
    for (let i = 0; i < count; i++) {
      const request = randomRequest(gen);
      const response = gen.chance(0.15) ? null : randomResponse(gen);
      const throttleRetries = gen.chance(0.8);
      tally.attempt({ request, response, throttleRetries }, () => problems(request, response === null ? null : classify(response, { nowMs: NOW_MS }), throttleRetries, gen));
    }
    return tally.result();
  },
};
