import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["dist/**", "node_modules/**"],
    // Loopback servers and real timers: give slow shared machines room, never rely on speed.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
