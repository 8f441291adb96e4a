/**
 * The in-process stores answer claim and observe without a promise (claimNow, observeNow), and the
 * client takes that path when a slot starts now (src/client/run.ts beforeAttempt). A store with
 * only the asynchronous interface (a user's own, Redis) must see the same decisions: the same
 * requests, the same waits, the same governor state at the end.
 */
import { describe, expect, it } from "vitest";
import type { AxiosAdapter } from "axios";
import { createThrottleClient, type ThrottleResult } from "../../src/client";
import { createMemoryStore, type GovernorStore, type MemoryStore } from "../../src/store";
import { virtualClock } from "../helpers/server";

/** The store behind its asynchronous methods only (claimNow and observeNow left out). */
function asyncOnly(store: MemoryStore): GovernorStore {
  return {
    kind: store.kind,
    claim: (scopes, request) => store.claim(scopes, request),
    observe: (scope, observation) => store.observe(scope, observation),
    release: (scope, seq) => store.release(scope, seq),
    holdUntil: (scope, untilMs, reason, limitType) => store.holdUntil(scope, untilMs, reason, limitType),
    clear: (scope) => store.clear(scope),
    scopesUnder: (base) => store.scopesUnder(base),
    changed: (scope, waitMs, signal) => store.changed(scope, waitMs, signal),
    salt: () => store.salt(),
    park: (queue, items, limits) => store.park(queue, items, limits),
    takeParked: (queue, nowMs, maxItems) => store.takeParked(queue, nowMs, maxItems),
    close: () => store.close(),
  };
}

/** 5 per window of 2 s behind X-RateLimit headers, then a 429 with Retry-After, then budget again. */
function scriptedAdapter(clock: { nowMs(): number }): AxiosAdapter {
  let calls = 0;
  return async (config) => {
    calls += 1;
    const resetEpochS = String(Math.ceil(clock.nowMs() / 1000) + 2);
    if (calls === 7) return { status: 429, statusText: "", headers: { "retry-after": "1", "x-ratelimit-remaining": "0", "x-ratelimit-limit": "5", "x-ratelimit-reset": resetEpochS }, data: { error: "slow down" }, config, request: {} };
    const remaining = String(Math.max(0, 5 - (calls % 6)));
    return { status: 200, statusText: "", headers: { "x-ratelimit-limit": "5", "x-ratelimit-remaining": remaining, "x-ratelimit-reset": resetEpochS }, data: { calls }, config, request: {} };
  };
}

async function runScript(wrap: (store: MemoryStore) => GovernorStore): Promise<{ results: Array<Pick<ThrottleResult, "outcome" | "attempts" | "slotWaitMs">>; state: unknown; nowMs: number }> {
  const clock = virtualClock();
  const memory = createMemoryStore({ clock, salt: "0".repeat(32) });
  const client = createThrottleClient({ clock, store: wrap(memory), random: () => 0.5, adapter: scriptedAdapter(clock), onLongWait: "defer" });
  const results = [];
  for (let i = 0; i < 14; i++) {
    const { outcome, attempts, slotWaitMs } = await client.request({ method: "GET", url: `https://api.example.test/items/${i}` });
    results.push({ outcome, attempts, slotWaitMs });
  }
  return { results, state: structuredClone(Object.fromEntries(memory.snapshot())), nowMs: clock.nowMs() };
}

describe("a store that answers without a promise", () => {
  it("gives the same requests, waits and governor state as the same store behind its asynchronous methods", async () => {
    const sync = await runScript((store) => store);
    const async = await runScript(asyncOnly);
    expect(sync.results.map((r) => r.outcome)).toEqual(Array(14).fill("success"));
    // The script's 429 was waited out and some starts were spaced: the run exercised more than free slots.
    expect(sync.results.some((r) => r.attempts.length === 2)).toBe(true);
    expect(sync).toEqual(async);
  });
});
