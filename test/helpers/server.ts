/**
 * A real loopback HTTP server (node:http on 127.0.0.1, port 0) for tests: each call is answered by
 * the next scripted reply (the last one repeats), and every request is recorded.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterEach } from "vitest";
import type { AddressInfo } from "node:net";

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Hold the answer this long (to provoke a client timeout). */
  delayMs?: number;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface TestServer {
  url: string;
  calls: RecordedRequest[];
  /** Replace the script (counted from the next call); the last reply repeats when the script runs out. */
  script(replies: Array<Reply | ((req: RecordedRequest, index: number) => Reply)>): void;
  close(): Promise<void>;
}

export async function startServer(replies: Array<Reply | ((req: RecordedRequest, index: number) => Reply)> = [{ status: 200, body: { ok: true } }]): Promise<TestServer> {
  let script = replies;
  let scriptStart = 0;
  const calls: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const recorded: RecordedRequest = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      const index = calls.length;
      calls.push(recorded);
      const step = index - scriptStart;
      const entry = script[Math.min(step, script.length - 1)]!;
      const reply = typeof entry === "function" ? entry(recorded, step) : entry;
      const send = () => {
        if (res.destroyed) return;
        const body = reply.body === undefined ? "" : typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body);
        res.writeHead(reply.status, { "content-type": typeof reply.body === "string" ? "text/plain" : "application/json", ...reply.headers });
        res.end(body);
      };
      if (reply.delayMs) {
        const timer = setTimeout(() => {
          timers.delete(timer);
          send();
        }, reply.delayMs);
        timers.add(timer);
      } else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    script(next) {
      script = next;
      scriptStart = calls.length;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A manual clock whose sleeps end only when the test moves it past them (advance), or when the
 * sleeper's signal aborts it (a store waking its waiters): for tests of what happens meanwhile.
 */
export function heldClock(startMs = Date.parse("2027-01-04T09:00:00.000Z")) {
  let now = startMs;
  const sleepers: Array<{ untilMs: number; wake: () => void }> = [];
  return {
    nowMs: () => now,
    sleep: (ms: number, signal?: AbortSignal) =>
      new Promise<void>((resolve, reject) => {
        sleepers.push({ untilMs: now + ms, wake: resolve });
        signal?.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { name: "AbortError" })), { once: true });
      }),
    advance(ms: number) {
      now += ms;
      for (const sleeper of sleepers.splice(0)) {
        if (sleeper.untilMs <= now) sleeper.wake();
        else sleepers.push(sleeper);
      }
    },
  };
}

/** A manual clock for the client: sleeping advances virtual time at once. */
export function virtualClock(startMs = Date.parse("2026-01-01T00:00:00.000Z")) {
  let now = startMs;
  const sleeps: number[] = [];
  return {
    sleeps,
    nowMs: () => now,
    advance(ms: number) {
      now += ms;
    },
    async sleep(ms: number, signal?: AbortSignal) {
      if (signal?.aborted) throw Object.assign(new Error("aborted"), { name: "AbortError" });
      sleeps.push(ms);
      now += ms;
    },
  };
}

/** A logger that records every line (the shape of context.logger the client uses). */
export function recordingLogger() {
  const lines: string[] = [];
  const push = (...args: unknown[]) => {
    lines.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
  };
  return { lines, info: push, warn: push, error: push, debug: push, log: push, trace: push, metric: push };
}

/**
 * One loopback server per test of the describe block it is called in, closed after each test:
 * `const servers = serverPerTest();` then `const server = await servers.start([...])` in a test.
 */
export function serverPerTest(): { start(replies?: Parameters<typeof startServer>[0]): Promise<TestServer> } {
  let current: TestServer | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return {
    async start(replies) {
      current = await startServer(replies);
      return current;
    },
  };
}
