/**
 * vitest global setup: the suites that need a real Redis (test/**\/*redis*.test.ts) run only where
 * redis-server is on PATH (or REDIS_URL names a server). Elsewhere they are skipped with ONE line
 * saying which and how to enable them; under CI=true a missing Redis fails the run, so that CI
 * cannot pass without them (.ci/run installs redis-server).
 */
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { redisServerAvailable } from "../../src/lab/redis-server";

function redisSuites(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return redisSuites(path);
    return /redis.*\.test\.ts$/.test(entry.name) ? [path] : [];
  });
}

export default function setup(): void {
  if (process.env.REDIS_URL || redisServerAvailable()) return;
  const root = join(__dirname, "..", "..");
  const suites = redisSuites(join(root, "test")).map((path) => relative(root, path));
  const line = `Redis suites skipped (no redis-server on PATH): ${suites.join(", ")}. Enable them with: apt-get install -y redis-server (or set REDIS_URL=redis://host:port).`;
  if (process.env.CI === "true") throw new Error(`CI=true and no Redis: ${line}`);
  process.stdout.write(`${line}\n`);
}
