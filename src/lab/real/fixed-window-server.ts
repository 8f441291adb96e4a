/**
 * A loopback API with a fixed window of `limit` requests per `windowMs`, the windows aligned to
 * the epoch (as a limiter keyed by the current second is): 429 with Retry-After (whole seconds,
 * rounded up) and X-RateLimit-Limit/-Remaining/-Reset (epoch seconds) on every answer. It records
 * when each request arrived and whether it was throttled.
 */
import { fork } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

export interface Arrival {
  atMs: number;
  throttled: boolean;
}

export interface FixedWindowServer {
  url: string;
  arrivals: Arrival[];
  close(): Promise<void>;
}

export async function startFixedWindowServer(options: { limit: number; windowMs: number; latencyMs?: number }): Promise<FixedWindowServer> {
  const { limit, windowMs } = options;
  const arrivals: Arrival[] = [];
  let windowIndex = -1;
  let used = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const nowMs = Date.now();
      const index = Math.floor(nowMs / windowMs);
      if (index !== windowIndex) {
        windowIndex = index;
        used = 0;
      }
      const resetMs = (index + 1) * windowMs;
      const admitted = used < limit;
      if (admitted) used += 1;
      arrivals.push({ atMs: nowMs, throttled: !admitted });
      const headers: Record<string, string> = {
        "content-type": "application/json",
        date: new Date(nowMs).toUTCString(),
        "x-ratelimit-limit": String(limit),
        "x-ratelimit-remaining": String(limit - used),
        "x-ratelimit-reset": String(Math.ceil(resetMs / 1000)),
      };
      if (!admitted) headers["retry-after"] = String(Math.max(1, Math.ceil((resetMs - nowMs) / 1000)));
      const send = () => res.writeHead(admitted ? 200 : 429, headers).end(JSON.stringify(admitted ? { ok: true } : { error: "too many requests" }));
      if (options.latencyMs) setTimeout(send, options.latencyMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The same API in a child process (fixed-window-child.ts): its clock and event loop are not paused
 * with the caller's. `arrivals` is filled when close() has resolved.
 */
export async function startFixedWindowServerProcess(options: { limit: number; windowMs: number; latencyMs?: number }): Promise<FixedWindowServer> {
  const child = fork(path.join(__dirname, "fixed-window-child.ts"), [String(options.limit), String(options.windowMs), String(options.latencyMs ?? 0)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const arrivals: Arrival[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    child.once("message", (message: { kind: string; url?: string }) => (message.kind === "listening" && message.url ? resolve(message.url) : reject(new Error("the API process did not start"))));
    child.once("exit", (code) => reject(new Error(`the API process exited with code ${code} before listening`)));
  });
  return {
    url,
    arrivals,
    close: () =>
      new Promise<void>((resolve, reject) => {
        child.once("message", (message: { kind: string; arrivals?: Arrival[] }) => {
          if (message.kind === "closed" && message.arrivals) arrivals.push(...message.arrivals);
          resolve();
        });
        child.once("exit", () => resolve());
        child.once("error", reject);
        child.send({ kind: "close" });
      }),
  };
}

/** The server's least time for `count` admissions starting at the first arrival: full windows after the first one. */
export function serverMinimumMs(arrivals: readonly Arrival[], count: number, limit: number, windowMs: number): number {
  const firstMs = arrivals[0]?.atMs ?? 0;
  const firstWindowEndMs = (Math.floor(firstMs / windowMs) + 1) * windowMs;
  const windowsAfterFirst = Math.max(0, Math.ceil(count / limit) - 1);
  return windowsAfterFirst === 0 ? 0 : firstWindowEndMs - firstMs + (windowsAfterFirst - 1) * windowMs;
}

/**
 * The most arrivals in any `spanMs`. Every arrival after the first one follows a wait (the cold
 * start's probe, then the governor's slots), so this is the herd measure after a wait.
 */
export function peakInAnySpan(arrivals: readonly Arrival[], spanMs: number): number {
  const times = arrivals.map((a) => a.atMs).sort((a, b) => a - b);
  let peak = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= spanMs) start++;
    peak = Math.max(peak, end - start + 1);
  }
  return peak;
}
