import { describe, expect, it } from "vitest";
import { ASSUMED_SYNC_MS, observeServerDate, serverClockOffsetMs, type ServerClock } from "../../src/engine/server-clock";

// Local and server clocks agree here (offset 0); the server writes whole-second Dates (RFC 9110 §5.6.7).
const T0 = Date.parse("2026-03-02T09:00:00Z");

/** The interval a run of answers teaches: each sent at sentAtMs, its Date written on arrival, answered latencyMs later. */
function learn(sentAtMs: number[], latencyMs: number, writtenAfterMs = 0): ServerClock | null {
  let clock: ServerClock | null = null;
  for (const sent of sentAtMs) {
    const dateMs = Math.floor((sent + writtenAfterMs) / 1000) * 1000;
    clock = observeServerDate(clock, dateMs, sent, sent + latencyMs);
  }
  return clock;
}

describe("the offset the server's instants are read against", () => {
  it("is the evidence where it proves the server no further behind than the assumed agreement", () => {
    // 20 ms answers: the interval is [-20, 0); nothing allows the server more than 20 ms behind.
    const clock = learn([T0, T0 + 999, T0 + 1500], 20);
    expect(clock).toMatchObject({ lowMs: -20 });
    expect(serverClockOffsetMs(clock)).toBe(-20);
  });

  it("takes the clocks to agree within ASSUMED_SYNC_MS where slow answers leave the interval wider (the reset read at most that late)", () => {
    // 200 ms answers whose Date was written as the request arrived: the interval is [-200, 0), the
    // truth 0. Read at the interval's low end, every reset came 200 ms late; a sliding window of
    // 1 s was laid 100 ms (the old agreement) longer at each reading: 1.14 to 1.18 x ideal.
    const clock = learn([T0, T0 + 999, T0 + 1500], 200);
    expect(clock).toMatchObject({ lowMs: -200 });
    expect(serverClockOffsetMs(clock)).toBe(-ASSUMED_SYNC_MS);
    expect(ASSUMED_SYNC_MS).toBe(25);
  });

  it("follows the evidence where it proves the server further behind than that", () => {
    // The server's clock runs 300 ms behind ours: every interval lies below -ASSUMED_SYNC_MS.
    let clock: ServerClock | null = null;
    for (const sent of [T0 + 300, T0 + 1299, T0 + 1800]) clock = observeServerDate(clock, Math.floor((sent - 300) / 1000) * 1000, sent, sent + 50);
    expect(clock!.highMs).toBeLessThanOrEqual(-ASSUMED_SYNC_MS);
    expect(serverClockOffsetMs(clock)).toBe(clock!.lowMs);
  });

  it("knows nothing without a Date", () => {
    expect(serverClockOffsetMs(null)).toBeNull();
  });
});
