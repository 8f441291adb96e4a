/**
 * A start taken late (a timer or an event loop behind its grant) is counted by the server when it
 * arrives: our log moves its unit to the send, so the starts laid after it keep the window's
 * distance from it (observe.ts slotToSend).
 */
import { describe, expect, it } from "vitest";
import { Scope, shown, T0 } from "./helpers";

/** A rolling window of 2 per 1000 ms shown on every answer (HubSpot's interval): the probe at T0 answered at T0 + 100. */
function windowOfTwo(): Scope {
  return Scope.afterReading(T0 + 100, shown({ limit: 2, remaining: 1, windowMs: 1000 }));
}

describe("a start sent later than its grant", () => {
  it("moves its unit to the send: the start after the window waits for that unit to leave, not the grant's", () => {
    const scope = windowOfTwo();
    const late = scope.go(T0 + 100);
    expect(late.atMs).toBe(T0 + 100);
    // Sent 30 ms after its grant; answered a round trip later.
    scope.answer({ seq: late.seq, atMs: T0 + 130 }, T0 + 230, { budget: shown({ limit: 2, remaining: 0, windowMs: 1000 }) });
    // The probe's unit (T0) leaves at T0 + 1000; the late one's at T0 + 1130, not T0 + 1100.
    expect(scope.go(T0 + 230).atMs).toBe(T0 + 1000);
    expect(scope.go(T0 + 230).atMs).toBeGreaterThanOrEqual(T0 + 1130);
  });

  it("keeps the log in start order when the late unit passes a later grant's", () => {
    const scope = Scope.afterReading(T0 + 100, shown({ limit: 5, remaining: 4, windowMs: 1000 }));
    const late = scope.go(T0 + 100);
    const onTime = scope.go(T0 + 100);
    expect(onTime.seq).toBeGreaterThan(late.seq);
    scope.answer({ seq: late.seq, atMs: T0 + 180 }, T0 + 280);
    const starts = scope.state.slots.map(([atMs]) => atMs);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(scope.state.slots.at(-1)).toEqual([T0 + 180, late.seq, 1]);
  });

  it("is not moved by a send before its grant, nor by one past the late-start bound (a clock that jumped)", () => {
    const scope = windowOfTwo();
    const early = scope.go(T0 + 100);
    scope.answer({ seq: early.seq, atMs: T0 + 90 }, T0 + 190);
    expect(scope.state.slots.find(([, seq]) => seq === early.seq)?.[0]).toBe(T0 + 100);
    const jumped = new Scope(T0);
    const first = jumped.go(T0);
    jumped.answer({ seq: first.seq, atMs: T0 + 5000 }, T0 + 5100);
    expect(jumped.state.slots.find(([, seq]) => seq === first.seq)?.[0]).toBe(T0);
  });
});
