/**
 * The fault server: node:http on 127.0.0.1 (an ephemeral port) whose routes misbehave on
 * purpose, and a second server on 127.0.0.2 (another host, so a redirect there is cross-origin)
 * that records what arrives. Every route lives under /<run>/ so that counts belong to one
 * scenario run:
 *
 *   /<run>/ok                      200 {"ok":true}
 *   /<run>/reset-before            first call: the connection is reset before any work; then 200
 *   /<run>/reset-after             does the work, then resets the connection on the first call of a job;
 *                                  a repeated Idempotency-Key is replayed without doing the work again
 *   /<run>/trickle                 200 with a 2,000-byte body sent one byte every 200 ms
 *   /<run>/endless                 200 with a body that never ends (64 KiB chunks as fast as the client reads)
 *   /<run>/gzip-bomb               200, Content-Encoding gzip: 1 GiB of zeros in about 1 MiB
 *   /<run>/silent                  reads the request and never answers
 *   /<run>/retry-after/<value>     429 with Retry-After: <value> (URL-decoded)
 *   /<run>/flap                    503, 503, then 200
 *   /<run>/redirect                302 to <landing>/<run>/landed on another host
 *
 * Executions are counted per job (the x-job-id header, else the path) so that a write done twice
 * is a duplicate; a server that honours Idempotency-Key, as Stripe's does
 * (https://docs.stripe.com/api/idempotent_requests), replays a seen key without executing.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createGzip } from "node:zlib";

export const JOB_HEADER = "x-job-id";

export interface RunStats {
  /** Requests that reached a route (resets and silences included). */
  calls: number;
  /** Work done per job id. */
  executions: Record<string, number>;
  /** Requests that arrived at the landing server: what a cross-origin redirect carried there. */
  landed: Array<{ url: string; headers: Record<string, string> }>;
  /** Response bytes written (bodies only). */
  bytesSent: number;
}

export interface FaultServer {
  url: string;
  landingUrl: string;
  stats(run: string): RunStats;
  close(): Promise<void>;
}

const GZIP_MEMBER_ZEROS = 8 * 1024 * 1024;
/** 128 members of 8 MiB of zeros: 1 GiB once inflated. */
const GZIP_MEMBERS = 128;

/**
 * One gzip member holding 8 MiB of zeros, compressed once (about 8 KiB). Gzip allows members to
 * be concatenated (RFC 1952 2.2) and Node's zlib inflates all of them, so repeating this member
 * streams a 1 GiB bomb without ever holding more than one member in memory.
 */
let zeroMember: Promise<Buffer> | null = null;
function gzipZeroMember(): Promise<Buffer> {
  zeroMember ??= new Promise<Buffer>((resolve, reject) => {
    const gzip = createGzip({ level: 9 });
    const chunks: Buffer[] = [];
    gzip.on("data", (c: Buffer) => chunks.push(c));
    gzip.on("end", () => resolve(Buffer.concat(chunks)));
    gzip.on("error", reject);
    gzip.end(Buffer.alloc(GZIP_MEMBER_ZEROS));
  });
  return zeroMember;
}

/** Writes `next()` chunks while the client reads, until it returns null or the socket closes. */
function pump(res: ServerResponse, next: () => Buffer | null, stats: RunStats): void {
  const write = (): void => {
    for (;;) {
      if (res.destroyed) return;
      const chunk = next();
      if (chunk === null) {
        res.end();
        return;
      }
      stats.bytesSent += chunk.length;
      if (!res.write(chunk)) {
        res.once("drain", write);
        return;
      }
    }
  };
  write();
}

/** A TCP reset, not a clean close: what a crashed proxy or a dropped connection looks like. */
function reset(socket: Socket): void {
  if (typeof socket.resetAndDestroy === "function") socket.resetAndDestroy();
  else socket.destroy();
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  stats: RunStats;
  job: string;
  run: string;
  rest: string;
  attempt: number;
  landingUrl: string;
  idempotent: Map<string, unknown>;
  timers: Set<NodeJS.Timeout>;
}

function resetAfter(ctx: RouteContext): void {
  const key = ctx.req.headers["idempotency-key"];
  const keyText = typeof key === "string" ? `${ctx.job}|${key}` : null;
  if (keyText !== null && ctx.idempotent.has(keyText)) {
    json(ctx.res, 200, ctx.idempotent.get(keyText), { "idempotent-replayed": "true" });
    return;
  }
  ctx.stats.executions[ctx.job] = (ctx.stats.executions[ctx.job] ?? 0) + 1;
  const result = { id: `item-${ctx.job}`, executions: ctx.stats.executions[ctx.job] };
  if (keyText !== null) ctx.idempotent.set(keyText, result);
  if (ctx.attempt === 1) reset(ctx.req.socket);
  else json(ctx.res, 200, result);
}

function trickle(ctx: RouteContext): void {
  const total = 2000;
  ctx.res.writeHead(200, { "content-type": "text/plain", "content-length": String(total) });
  let sent = 0;
  const timer = setInterval(() => {
    if (ctx.res.destroyed || sent >= total) {
      clearInterval(timer);
      ctx.timers.delete(timer);
      if (!ctx.res.destroyed) ctx.res.end();
      return;
    }
    ctx.res.write("x");
    ctx.stats.bytesSent += 1;
    sent += 1;
  }, 200);
  ctx.timers.add(timer);
}

async function gzipBomb(ctx: RouteContext): Promise<void> {
  const member = await gzipZeroMember();
  ctx.res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
  let members = 0;
  pump(ctx.res, () => (members++ < GZIP_MEMBERS ? member : null), ctx.stats);
}

function route(ctx: RouteContext): void | Promise<void> {
  const { res, rest, attempt } = ctx;
  switch (rest.split("/")[0]) {
    case "ok":
      return json(res, 200, { ok: true });
    case "reset-before":
      if (attempt === 1) return reset(ctx.req.socket);
      ctx.stats.executions[ctx.job] = (ctx.stats.executions[ctx.job] ?? 0) + 1;
      return json(res, 200, { ok: true });
    case "reset-after":
      return resetAfter(ctx);
    case "trickle":
      return trickle(ctx);
    case "endless": {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      return pump(res, () => chunk, ctx.stats);
    }
    case "gzip-bomb":
      return gzipBomb(ctx);
    case "silent":
      return;
    case "retry-after":
      return json(res, 429, { error: "rate limited" }, { "retry-after": decodeURIComponent(rest.slice("retry-after/".length)) });
    case "flap":
      return attempt <= 2 ? json(res, 503, { error: "unavailable" }) : json(res, 200, { ok: true });
    case "redirect":
      res.writeHead(302, { location: `${ctx.landingUrl}/${ctx.run}/landed` });
      return void res.end();
    default:
      return json(res, 404, { error: `no route ${rest}` });
  }
}

async function listen(server: http.Server, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

/** The landing server: 127.0.0.2 where the system allows it (Linux routes all of 127/8), else another port. */
async function startLanding(record: (run: string, entry: RunStats["landed"][number]) => void): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer((req, res) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) headers[name] = Array.isArray(value) ? value.join(", ") : String(value ?? "");
    record((req.url ?? "/").split("/")[1] ?? "", { url: req.url ?? "/", headers });
    json(res, 200, { landed: true });
  });
  try {
    return { server, url: await listen(server, "127.0.0.2") };
  } catch {
    return { server, url: await listen(server, "127.0.0.1") };
  }
}

export async function startFaultServer(): Promise<FaultServer> {
  const runs = new Map<string, RunStats>();
  const statsOf = (run: string): RunStats => {
    let s = runs.get(run);
    if (!s) runs.set(run, (s = { calls: 0, executions: {}, landed: [], bytesSent: 0 }));
    return s;
  };
  const attempts = new Map<string, number>();
  const idempotent = new Map<string, unknown>();
  const timers = new Set<NodeJS.Timeout>();
  const landing = await startLanding((run, entry) => statsOf(run).landed.push(entry));

  const server = http.createServer((req, res) => {
    const [, run = "", ...restParts] = (req.url ?? "/").split("?")[0]!.split("/");
    const rest = restParts.join("/");
    const stats = statsOf(run);
    stats.calls += 1;
    const jobHeader = req.headers[JOB_HEADER];
    const job = typeof jobHeader === "string" ? jobHeader : `${run}/${rest}`;
    const attempt = (attempts.get(job) ?? 0) + 1;
    attempts.set(job, attempt);
    // Read the whole request first: the work (and the reset after it) happens once it has arrived.
    req.resume();
    req.on("end", () => {
      void Promise.resolve(route({ req, res, stats, job, run, rest, attempt, landingUrl: landing.url, idempotent, timers })).catch(() => res.destroy());
    });
  });
  const url = await listen(server, "127.0.0.1");

  return {
    url,
    landingUrl: landing.url,
    stats: statsOf,
    async close() {
      for (const t of timers) clearInterval(t);
      for (const s of [server, landing.server]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
