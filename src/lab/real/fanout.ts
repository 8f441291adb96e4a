/**
 * `npm run bench:fanout`: 200 concurrent requests through ONE client (the component's defaults,
 * nothing told about the limit) against a loopback API that allows 10 per second, on real sockets
 * and timers. Prints the makespan against the server's own minimum, the throttled answers, and
 * the most requests in any 100 ms.
 */
import { parseArgs } from "node:util";
import { createThrottleClient } from "../../client";
import { peakInAnySpan, serverMinimumMs, startFixedWindowServerProcess } from "./fixed-window-server";

export interface FanoutFigures {
  requests: number;
  succeeded: number;
  throttled: number;
  makespanMs: number;
  serverMinimumMs: number;
  ratio: number;
  peakIn100Ms: number;
}

export async function runFanout(options: { requests: number; limit: number; windowMs: number; latencyMs?: number }): Promise<FanoutFigures> {
  // The API in a process of its own: a pause of this one (a loaded machine) must not make it count a burst.
  const server = await startFixedWindowServerProcess({ limit: options.limit, windowMs: options.windowMs, latencyMs: options.latencyMs });
  let closed = false;
  try {
    const client = createThrottleClient({ baseUrl: server.url, onLongWait: "defer" });
    const startedMs = Date.now();
    const results = await Promise.all(Array.from({ length: options.requests }, (_, i) => client.request({ method: "GET", url: `/items/${i}` })));
    const makespanMs = Date.now() - startedMs;
    await server.close();
    closed = true;
    const minimumMs = serverMinimumMs(server.arrivals, options.requests, options.limit, options.windowMs) + (options.latencyMs ?? 0);
    return {
      requests: options.requests,
      succeeded: results.filter((r) => r.outcome === "success").length,
      throttled: server.arrivals.filter((a) => a.throttled).length,
      makespanMs,
      serverMinimumMs: minimumMs,
      ratio: minimumMs > 0 ? makespanMs / minimumMs : Number.NaN,
      peakIn100Ms: peakInAnySpan(server.arrivals, 100),
    };
  } finally {
    if (!closed) await server.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { requests: { type: "string", default: "200" }, limit: { type: "string", default: "10" }, help: { type: "boolean", short: "h" } }, strict: true });
  if (values.help) {
    process.stdout.write("usage: npm run -s bench:fanout -- [--requests N] [--limit PER_SECOND]\n");
    return;
  }
  const requests = Number(values.requests);
  const limit = Number(values.limit);
  if (!Number.isInteger(requests) || requests < 1 || !Number.isInteger(limit) || limit < 1) throw new Error("--requests and --limit must be whole numbers of 1 or more");
  const f = await runFanout({ requests, limit, windowMs: 1000 });
  process.stdout.write(
    `fan-out on real sockets: ${f.requests} concurrent requests through one client, server allows ${limit} per second\n` +
      `succeeded ${f.succeeded}/${f.requests}, throttled answers ${f.throttled}, makespan ${(f.makespanMs / 1000).toFixed(2)} s, ` +
      `server minimum ${(f.serverMinimumMs / 1000).toFixed(2)} s, ratio ${f.ratio.toFixed(3)} x, most requests in any 100 ms ${f.peakIn100Ms}\n`,
  );
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`bench:fanout: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  });
}
