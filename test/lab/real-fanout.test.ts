import { describe, expect, it } from "vitest";
import { runFanout } from "../../src/lab/real/fanout";

describe("fan-out on real sockets and timers (issue 7): 200 concurrent requests, one client, a server allowing 10 per second", () => {
  // Real sockets and timers on a shared machine: one run in several of the whole `npm test` (2 cores,
  // right after the parallel suite) saw 11 requests in one 100 ms (throttled at most 2), where 18
  // runs since (13 alone, 5 beside a parallel `vitest run test/engine`) saw 10 and none throttled
  // each time: most likely a start of one window sent late enough to reach the next. One retry keeps
  // such a stall from failing CI; a client that bursts fails both runs. The figures of each run are in the failure message, and
  // `npm run bench:fanout` prints them for every run.
  it("all succeed with at most 2 throttled answers, never more than 10 requests in any 100 ms", { retry: 1, timeout: 60_000 }, async () => {
    const figures = await runFanout({ requests: 200, limit: 10, windowMs: 1000 });
    const shown = JSON.stringify(figures);
    expect(figures.succeeded, shown).toBe(200);
    expect(figures.throttled, shown).toBeLessThanOrEqual(2);
    expect(figures.peakIn100Ms, shown).toBeLessThanOrEqual(10);
    // The time goal (1.10 x the server's minimum) is measured by `npm run bench:fanout`, which prints
    // it; this bound only catches a collapse (the barrier it replaced took 8 x) on a loaded machine.
    expect(figures.ratio, shown).toBeLessThan(1.5);
  });
});
