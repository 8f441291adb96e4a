import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
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
  },
});
