/**
 * The throttled API. One piece of logic (`ThrottledApi.handle`) serves two transports: a
 * node:http server on 127.0.0.1 (real clock) and an in-process axios adapter (virtual clock; see
 * adapter.ts). It counts every call, every throttled answer and every POST it executed, per job,
 * so that a write executed twice for one job is caught as a duplicate.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { LabClock } from "./clock";
import { seededRandom } from "./clock";
import { isSuccess, renderOk, renderThrottled, renderUnavailable, type LabResponse, type RenderContext } from "./dialects";
import { createLimiter, type Limiter } from "./limiters";
import type { HttpMethod, RequestRecord, ServerSpec } from "./types";

export interface LabRequest {
  method: string;
  path: string;
  jobId: string;
  idempotencyKey: string | null;
}

/** A response, or a connection dropped after the work was done (the client sees a reset). */
export type LabOutcome = { kind: "response"; response: LabResponse } | { kind: "drop" };

export const JOB_HEADER = "x-job-id";

export class ThrottledApi {
  readonly records: RequestRecord[] = [];
  private readonly limiter: Limiter;
  private readonly executions = new Map<string, number>();
  private readonly idempotent = new Map<string, LabResponse>();
  private readonly random: () => number;
  readonly originMs: number;

  constructor(
    readonly spec: ServerSpec,
    private readonly clock: LabClock,
    seed: number,
  ) {
    this.originMs = clock.nowMs();
    this.limiter = createLimiter({ kind: spec.limiter, limit: spec.limit, windowMs: spec.windowMs, originMs: this.originMs, latencyMs: spec.latencyMs });
    // The server's own PRNG, so that the clients' randomness never shifts where faults fall.
    this.random = seededRandom(seed ^ 0x5eed);
  }

  get cost(): number {
    return this.spec.limiter === "cost-bucket" ? this.spec.costPerRequest : 1;
  }

  /** The least time in which this server can finish `jobs` requests (limits only, latency apart). */
  minimumMs(jobs: number): number {
    return this.limiter.minimumMs(jobs, this.cost);
  }

  /** How many of `jobs` this server admits no sooner than minimumMs, together (a window's last share). */
  lastBatch(jobs: number): number {
    return this.limiter.lastBatch(jobs, this.cost);
  }

  async handle(request: LabRequest): Promise<LabOutcome> {
    const nowMs = this.clock.nowMs();
    const method: HttpMethod = request.method.toUpperCase() === "POST" ? "POST" : "GET";
    const record: RequestRecord = { atMs: nowMs - this.originMs, jobId: request.jobId, method, status: 0, throttled: false, executed: false, fault: "none" };
    this.records.push(record);
    const ctx: RenderContext = { nowMs, retryAfter: this.spec.retryAfter, budgetHeaders: this.spec.budgetHeaders, cost: this.cost, jobId: request.jobId, throttleBody: this.spec.throttleBody };

    const replay = method === "POST" && this.spec.honoursIdempotencyKey && request.idempotencyKey !== null ? this.idempotent.get(request.idempotencyKey) : undefined;
    if (replay) {
      // A repeated key: the stored answer, without executing or spending the limit again.
      record.status = replay.status;
      await this.clock.sleep(this.spec.latencyMs);
      // Stripe marks a replayed answer (https://docs.stripe.com/api/idempotent_requests): its
      // headers, budget included, are the original request's.
      return { kind: "response", response: { ...replay, headers: { ...replay.headers, "idempotent-replayed": "true" } } };
    }

    const admission = this.limiter.admit(nowMs, this.cost);
    if (!admission.admitted) {
      const response = renderThrottled(this.spec.dialect, admission, ctx);
      record.status = response.status;
      record.throttled = true;
      await this.clock.sleep(this.spec.latencyMs);
      return { kind: "response", response };
    }

    const faults = this.spec.faults;
    try {
      if (faults.error503Share > 0 && this.random() < faults.error503Share) {
        record.fault = "503";
        record.status = 503;
        await this.clock.sleep(this.spec.latencyMs);
        return { kind: "response", response: renderUnavailable(nowMs) };
      }
      record.executed = true;
      this.executions.set(request.jobId, (this.executions.get(request.jobId) ?? 0) + 1);
      const response = renderOk(this.spec.dialect, admission, ctx, { id: request.jobId, method });
      if (method === "POST" && this.spec.honoursIdempotencyKey && request.idempotencyKey !== null) this.idempotent.set(request.idempotencyKey, response);
      record.status = response.status;
      let delayMs = this.spec.latencyMs;
      if (faults.slowShare > 0 && this.random() < faults.slowShare) {
        record.fault = "slow";
        delayMs += faults.slowMs;
      }
      const drop = faults.dropShare > 0 && this.random() < faults.dropShare;
      await this.clock.sleep(delayMs);
      if (drop) {
        record.fault = "drop";
        record.status = 0;
        return { kind: "drop" };
      }
      return { kind: "response", response };
    } finally {
      this.limiter.release(this.clock.nowMs());
    }
  }

  /** POSTs executed more than once for one job (each extra execution counts). */
  duplicates(): number {
    let extra = 0;
    const posts = new Map<string, number>();
    for (const r of this.records) if (r.executed && r.method === "POST") posts.set(r.jobId, (posts.get(r.jobId) ?? 0) + 1);
    for (const count of posts.values()) extra += Math.max(0, count - 1);
    return extra;
  }

  /** Jobs the server executed at least once. */
  executedJobs(): number {
    return this.executions.size;
  }

  /** Serves the same logic on 127.0.0.1, port 0 (an ephemeral port). */
  async listen(): Promise<{ url: string; close: () => Promise<void> }> {
    const server = http.createServer((req, res) => {
      const header = (name: string): string | null => {
        const value = req.headers[name];
        return typeof value === "string" ? value : Array.isArray(value) ? (value[0] ?? null) : null;
      };
      req.resume();
      req.on("end", () => {
        this.handle({ method: req.method ?? "GET", path: req.url ?? "/", jobId: header(JOB_HEADER) ?? "unknown", idempotencyKey: header("idempotency-key") })
          .then((outcome) => {
            if (outcome.kind === "drop") {
              req.socket.destroy();
              return;
            }
            const { status, headers, body } = outcome.response;
            const text = typeof body === "string" ? body : JSON.stringify(body);
            res.writeHead(status, { ...headers, "content-type": typeof body === "string" ? "text/plain" : "application/json" }).end(text);
          })
          .catch((error: unknown) => {
            res.writeHead(500).end(error instanceof Error ? error.message : "error");
          });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }
}

export { isSuccess };
