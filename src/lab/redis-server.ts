/**
 * A throwaway redis-server for the lab and the tests: started from PATH on a free loopback port,
 * with nothing saved to disk, and stopped afterwards. `REDIS_URL` names an existing server
 * instead (then nothing is started or stopped). A gate (a TCP relay in front of it) lets the lab
 * make Redis unreachable for a while without losing its data: connections are cut and refused,
 * as when a managed Redis fails over.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import net from "node:net";

export interface RedisServer {
  url: string;
  /** Whether this process started the server (and stop() ends it). */
  owned: boolean;
  stop(): Promise<void>;
}

/** Whether a redis-server can be started from PATH. */
export function redisServerAvailable(): boolean {
  const probe = spawnSync("redis-server", ["--version"], { stdio: "ignore" });
  return probe.status === 0;
}

/** A free TCP port on 127.0.0.1 (the OS picks one; it is released before the caller binds it). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on port ${port} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Starts redis-server on a free port (or uses REDIS_URL when set); with a password, clients must give it (requirepass). */
export async function startRedisServer(options: { password?: string; env?: NodeJS.ProcessEnv } = {}): Promise<RedisServer> {
  const env = options.env ?? process.env;
  if (env.REDIS_URL && !options.password) return { url: env.REDIS_URL, owned: false, stop: async () => undefined };
  const port = await freePort();
  const auth = options.password ? ["--requirepass", options.password] : [];
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes", "--loglevel", "warning", ...auth], { stdio: "ignore" });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  await spawned;
  try {
    await waitForPort(port, child, 10_000);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    owned: true,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

export interface RedisGate {
  /** The gate's own URL: clients connect here. */
  url: string;
  /** Cuts every connection and refuses new ones until open(). */
  shut(): Promise<void>;
  open(): Promise<void>;
  close(): Promise<void>;
}

/** A TCP relay on loopback in front of a Redis URL; shut() makes Redis unreachable through it. */
export async function startGate(targetUrl: string): Promise<RedisGate> {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port || 6379);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(targetPort, target.hostname);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    inbound.pipe(outbound).pipe(inbound);
    inbound.on("close", () => outbound.destroy());
    outbound.on("close", () => inbound.destroy());
  });
  const port = await freePort();
  const listen = () => new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  await listen();
  let listening = true;
  const stopListening = () =>
    new Promise<void>((resolve) => {
      if (!listening) return resolve();
      listening = false;
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  return {
    url: `redis://127.0.0.1:${port}`,
    shut: stopListening,
    async open() {
      if (listening) return;
      await listen();
      listening = true;
    },
    close: stopListening,
  };
}
