/**
 * Redis for the tests that need one (test/**\/*redis*.test.ts): each suite starts its own
 * redis-server on a free loopback port (src/lab/redis-server.ts), or uses REDIS_URL when set.
 * Without a redis-server those suites are skipped; test/helpers/redis-setup.ts (vitest's global
 * setup) prints one line naming them, and fails the run under CI=true.
 */
import { redisServerAvailable } from "../../src/lab/redis-server";

/** Whether the Redis suites can run here. */
export const REDIS_AVAILABLE = Boolean(process.env.REDIS_URL) || redisServerAvailable();
