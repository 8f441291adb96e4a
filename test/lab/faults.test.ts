/**
 * The fault suite (src/lab/faults) against the client: every scenario in its own process on real
 * loopback sockets, each row held to the goals of issue 11 (no hang past the budget, no duplicate
 * execution, peak RSS under 200 MB, every error typed, no secret at a cross-origin redirect target
 * or in what the client returns, throws or logs, no call before the server's time).
 *
 * A failing row names the goals it misses. Rows that fail on the client of this branch, and why,
 * are listed in the fault-suite report; none is skipped.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRACE_MS, runFaultScenario } from "../../src/lab/faults/runner";
import { BUDGET_MS, FAULT_SCENARIOS } from "../../src/lab/faults/scenarios";
import { startFaultServer, type FaultServer } from "../../src/lab/faults/server";

/** Process start-up (tsx compiling the client) on a busy machine, on top of the budget and grace. */
const STARTUP_MS = 20_000;

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(async () => {
  await server.close();
});

describe("fault suite: every row meets the goals", () => {
  for (const scenario of FAULT_SCENARIOS) {
    it(
      `${scenario.title}`,
      async () => {
        const row = await runFaultScenario(scenario, server);
        expect({ outcome: row.outcome, failures: row.failures }).toEqual({ outcome: row.outcome, failures: [] });
        // The row is measured, not assumed: the child reported or was killed.
        expect(row.elapsedMs).toBeGreaterThanOrEqual(0);
        expect(row.peakRssMb).toBeGreaterThan(0);
      },
      (scenario.budgetMs ?? BUDGET_MS) + GRACE_MS + STARTUP_MS,
    );
  }
});
