/**
 * The fault server does what the table says it does: checked with plain node:http requests, not
 * with the client under test.
 */
import http from "node:http";
import { createGunzip } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOB_HEADER, startFaultServer, type FaultServer } from "../../src/lab/faults/server";

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(async () => {
  await server.close();
});

interface Answer {
  status: number | null;
  headers: http.IncomingHttpHeaders;
  error: string | null;
  res: http.IncomingMessage | null;
}

/** One request; resolves at the response head (the body is left to the caller) or on a socket error. */
function call(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: options.method ?? "GET", headers: options.headers }, (res) => resolve({ status: res.statusCode ?? null, headers: res.headers, error: null, res }));
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ status: null, headers: {}, error: error.code ?? error.message, res: null }));
    req.end(options.body);
  });
}

async function bodyOf(answer: Answer): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of answer.res!) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

describe("fault server", () => {
  it("reset-after does the work, resets the first call, and replays a repeated Idempotency-Key without doing it again", async () => {
    const url = `${server.url}/t1/reset-after`;
    const first = await call(url, { method: "POST", headers: { [JOB_HEADER]: "t1:a", "idempotency-key": "k1" }, body: "{}" });
    expect(first.error).toBe("ECONNRESET");
    const second = await call(url, { method: "POST", headers: { [JOB_HEADER]: "t1:a", "idempotency-key": "k1" }, body: "{}" });
    expect(second.status).toBe(200);
    expect(second.headers["idempotent-replayed"]).toBe("true");
    await bodyOf(second);
    expect(server.stats("t1").executions).toEqual({ "t1:a": 1 });
    // Without a key every call is new work: the same job executed twice is a duplicate.
    await call(url, { method: "POST", headers: { [JOB_HEADER]: "t1:b" }, body: "{}" });
    await bodyOf(await call(url, { method: "POST", headers: { [JOB_HEADER]: "t1:b" }, body: "{}" }));
    expect(server.stats("t1").executions["t1:b"]).toBe(2);
    expect(server.stats("t1").calls).toBe(4);
  });

  it("reset-before resets the first call without doing any work", async () => {
    const first = await call(`${server.url}/t2/reset-before`, { headers: { [JOB_HEADER]: "t2:a" } });
    expect(first.error).toBe("ECONNRESET");
    expect(server.stats("t2").executions).toEqual({});
    const second = await call(`${server.url}/t2/reset-before`, { headers: { [JOB_HEADER]: "t2:a" } });
    expect(second.status).toBe(200);
    await bodyOf(second);
  });

  it("the gzip bomb inflates to 1 GiB of zeros from about a thousandth of that on the wire", async () => {
    const answer = await call(`${server.url}/t3/gzip-bomb`);
    expect(answer.headers["content-encoding"]).toBe("gzip");
    let inflated = 0;
    let nonZero = 0;
    const zeros = Buffer.alloc(1024 * 1024);
    const gunzip = answer.res!.pipe(createGunzip({ chunkSize: zeros.length }));
    for await (const chunk of gunzip) {
      const buffer = chunk as Buffer;
      inflated += buffer.length;
      if (!buffer.equals(zeros.subarray(0, buffer.length))) nonZero++;
    }
    expect(inflated).toBe(1024 * 1024 * 1024);
    expect(nonZero).toBe(0);
    expect(server.stats("t3").bytesSent).toBeLessThan(inflated / 500);
  });

  it("the endless body keeps coming (past 64 MiB here) until the client goes away", async () => {
    const answer = await call(`${server.url}/t4/endless`);
    let received = 0;
    for await (const chunk of answer.res!) {
      received += (chunk as Buffer).length;
      if (received > 64 * 1024 * 1024) break;
    }
    expect(received).toBeGreaterThan(64 * 1024 * 1024);
  });

  it("the trickle sends about 5 bytes a second; silent never answers", async () => {
    const trickle = await call(`${server.url}/t5/trickle`);
    expect(trickle.headers["content-length"]).toBe("2000");
    let received = 0;
    trickle.res!.on("data", (c: Buffer) => (received += c.length));
    const silent = call(`${server.url}/t5/silent`);
    const winner = await Promise.race([silent.then(() => "answered"), new Promise((resolve) => setTimeout(() => resolve("still silent"), 1100))]);
    trickle.res!.destroy();
    expect(winner).toBe("still silent");
    expect(received).toBeGreaterThanOrEqual(3);
    expect(received).toBeLessThanOrEqual(7);
  });

  it("429 carries the Retry-After value asked for; flap answers 503, 503, 200", async () => {
    const throttled = await call(`${server.url}/t6/retry-after/${encodeURIComponent("Fri, 31 Dec 9999 23:59:59 GMT")}`);
    expect(throttled.status).toBe(429);
    expect(throttled.headers["retry-after"]).toBe("Fri, 31 Dec 9999 23:59:59 GMT");
    const statuses: Array<number | null> = [];
    for (let i = 0; i < 3; i++) {
      const answer = await call(`${server.url}/t6/flap`, { headers: { [JOB_HEADER]: "t6:flap" } });
      await bodyOf(answer);
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([503, 503, 200]);
  });

  it("redirect points at another host, which records what arrived", async () => {
    const answer = await call(`${server.url}/t7/redirect`);
    expect(answer.status).toBe(302);
    const location = new URL(String(answer.headers.location));
    expect(location.host).not.toBe(new URL(server.url).host);
    await bodyOf(await call(location.toString(), { headers: { "x-api-key": "visible" } }));
    expect(server.stats("t7").landed).toHaveLength(1);
    expect(server.stats("t7").landed[0]!.headers["x-api-key"]).toBe("visible");
  });
});
