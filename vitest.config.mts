import { defineConfig } from "vitest/config";

/**
 * Tests whose assertions are about real-clock spacing (at most 10 requests in any 100 ms on real
 * sockets and timers) run alone, after the rest: under the suite's own parallel load a start at a
 * window's edge was once delayed into the next window's first 100 ms (11 in one span, 1 run in
 * several). https://main.vitest.dev/guide/recipes/parallel-sequential
 */
const REAL_CLOCK_SPACING = ["test/lab/real-fanout.test.ts"];

export default defineConfig({
  test: {
    exclude: ["dist/**", "node_modules/**"],
    // Loopback servers and real timers: give slow shared machines room, never rely on speed.
    testTimeout: 30_000,
    // The client logs one JSON line per decision through context.logger, and spectral's
    // loggerMock() spies on console and calls through: without this, every action test prints
    // its log lines. "passed-only" still prints the console output of a test that fails.
    silent: "passed-only",
    hookTimeout: 30_000,
    // The Redis suites need a redis-server: one line says when they are skipped (a failure under CI=true).
    globalSetup: ["test/helpers/redis-setup.ts"],
    projects: [
      { extends: true, test: { name: "suite", include: ["test/**/*.test.ts"], exclude: ["dist/**", "node_modules/**", ...REAL_CLOCK_SPACING], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "real-clock spacing", include: REAL_CLOCK_SPACING, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
