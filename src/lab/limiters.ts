/**
 * The server's limiters. Each is pure state plus an injected time (`nowMs`), so a test can step
 * it exactly: a fixed window of 3 per 100 ms admits 3 and rejects the 4th.
 */
import type { LimiterKind } from "./types";

/** What the limiter says about one request, with what a dialect needs to describe it. */
export interface Admission {
  admitted: boolean;
  /** ms until a request of this cost would be admitted (0 when admitted; null when unknown, e.g. concurrency). */
  waitMs: number | null;
  /** Allowance per window / capacity, in the limiter's unit (requests or points). */
  limit: number;
  /** What is left after this request. */
  remaining: number;
  /** ms until the allowance is whole again (window end, bucket full, oldest entry leaving). */
  resetMs: number;
  /** The limiter's unit: requests, points or concurrent requests. */
  unit: "requests" | "points" | "concurrent";
  /** A quota (daily) rather than a burst limit. */
  quota: boolean;
  windowMs: number;
}

export interface Limiter {
  readonly kind: LimiterKind;
  admit(nowMs: number, cost: number): Admission;
  /** Called when an admitted request has been answered (concurrency limit). */
  release(nowMs: number): void;
  /** The least time in which the server can admit `jobs` requests of `cost`, first at time 0. */
  minimumMs(jobs: number, cost: number): number;
  /**
   * How many of those jobs the server can admit no sooner than that minimum, all at once: a
   * window's last share (its jobs wait for that window to open together), or the one job a bucket
   * or a trickle lets in last. The ideal makespan carries them over the workers.
   */
  lastBatch(jobs: number, cost: number): number;
}

/** Jobs of `cost` a window of `limit` admits (at least one). */
function jobsPerWindow(limit: number, cost: number): number {
  return Math.max(1, Math.floor(limit / cost));
}

/** Jobs past the last whole window of `perWindow`: the last window's share (a full window when they divide evenly). */
function lastWindowShare(jobs: number, perWindow: number): number {
  return jobs <= 0 ? 0 : jobs - (Math.ceil(jobs / perWindow) - 1) * perWindow;
}

export interface LimiterOptions {
  kind: LimiterKind;
  limit: number;
  windowMs: number;
  /** Epoch ms the windows are aligned to (the run's start). */
  originMs: number;
}

/** Fixed windows aligned to originMs: `limit` per window; a rejected request does not count. */
export class FixedWindowLimiter implements Limiter {
  readonly kind: LimiterKind;
  private windowIndex = -1;
  private used = 0;
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly originMs: number,
    private readonly isQuota = false,
  ) {
    this.kind = isQuota ? "daily-quota" : "fixed-window";
  }
  admit(nowMs: number, cost: number): Admission {
    const index = Math.floor((nowMs - this.originMs) / this.windowMs);
    if (index !== this.windowIndex) {
      this.windowIndex = index;
      this.used = 0;
    }
    const windowEndMs = this.originMs + (index + 1) * this.windowMs;
    const resetMs = Math.max(0, windowEndMs - nowMs);
    const admitted = this.used + cost <= this.limit;
    if (admitted) this.used += cost;
    return {
      admitted,
      waitMs: admitted ? 0 : resetMs,
      limit: this.limit,
      remaining: Math.max(0, this.limit - this.used),
      resetMs,
      unit: "requests",
      quota: this.isQuota,
      windowMs: this.windowMs,
    };
  }
  release(): void {}
  minimumMs(jobs: number, cost: number): number {
    if (jobs <= 0) return 0;
    const perWindow = jobsPerWindow(this.limit, cost);
    if (this.isQuota) return 0; // jobs past the quota are deferred, not waited for
    return (Math.ceil(jobs / perWindow) - 1) * this.windowMs;
  }
  lastBatch(jobs: number, cost: number): number {
    const perWindow = jobsPerWindow(this.limit, cost);
    return this.isQuota ? Math.min(jobs, perWindow) : lastWindowShare(jobs, perWindow);
  }
}

/** A sliding log: at most `limit` admitted requests in any windowMs. */
export class SlidingWindowLimiter implements Limiter {
  readonly kind: LimiterKind = "sliding-window";
  private readonly log: number[] = [];
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}
  admit(nowMs: number, cost: number): Admission {
    while (this.log.length > 0 && this.log[0]! <= nowMs - this.windowMs) this.log.shift();
    const admitted = this.log.length + cost <= this.limit;
    if (admitted) for (let i = 0; i < cost; i++) this.log.push(nowMs);
    // The request fits once enough of the oldest entries have left the window.
    const mustLeave = this.log.length + cost - this.limit;
    const waitMs = admitted ? 0 : Math.max(0, this.log[Math.min(this.log.length, mustLeave) - 1]! + this.windowMs - nowMs);
    const resetMs = this.log.length === 0 ? 0 : Math.max(0, this.log[0]! + this.windowMs - nowMs);
    return {
      admitted,
      waitMs,
      limit: this.limit,
      remaining: Math.max(0, this.limit - this.log.length),
      resetMs,
      unit: "requests",
      quota: false,
      windowMs: this.windowMs,
    };
  }
  release(): void {}
  minimumMs(jobs: number, cost: number): number {
    if (jobs <= 0) return 0;
    const perWindow = jobsPerWindow(this.limit, cost);
    return (Math.ceil(jobs / perWindow) - 1) * this.windowMs;
  }
  lastBatch(jobs: number, cost: number): number {
    return lastWindowShare(jobs, jobsPerWindow(this.limit, cost));
  }
}

/**
 * A token bucket of `limit` tokens that refills `limit` per windowMs, continuously. With points
 * as the unit it is the Shopify GraphQL cost bucket (maximumAvailable, restoreRate).
 */
export class TokenBucketLimiter implements Limiter {
  readonly kind: LimiterKind;
  private tokens: number;
  private lastMs: number | null = null;
  readonly refillPerMs: number;
  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly unit: "requests" | "points",
  ) {
    this.kind = unit === "points" ? "cost-bucket" : "token-bucket";
    this.tokens = limit;
    this.refillPerMs = limit / windowMs;
  }
  private refill(nowMs: number): void {
    if (this.lastMs !== null && nowMs > this.lastMs) this.tokens = Math.min(this.limit, this.tokens + (nowMs - this.lastMs) * this.refillPerMs);
    this.lastMs = this.lastMs === null ? nowMs : Math.max(this.lastMs, nowMs);
  }
  available(nowMs: number): number {
    this.refill(nowMs);
    return this.tokens;
  }
  admit(nowMs: number, cost: number): Admission {
    this.refill(nowMs);
    // A tiny tolerance so that float refill never rejects a request that arrives exactly on time.
    const admitted = this.tokens + 1e-9 >= cost;
    if (admitted) this.tokens = Math.max(0, this.tokens - cost);
    return {
      admitted,
      waitMs: admitted ? 0 : Math.ceil((cost - this.tokens) / this.refillPerMs),
      limit: this.limit,
      remaining: Math.floor(this.tokens + 1e-9),
      resetMs: Math.ceil((this.limit - this.tokens) / this.refillPerMs),
      unit: this.unit,
      quota: false,
      windowMs: this.windowMs,
    };
  }
  release(): void {}
  minimumMs(jobs: number, cost: number): number {
    const deficit = jobs * cost - this.limit;
    return deficit <= 0 ? 0 : Math.ceil(deficit / this.refillPerMs);
  }
  lastBatch(jobs: number, cost: number): number {
    // All at once from a full bucket; past it, the refill lets them in one at a time.
    return jobs * cost <= this.limit ? jobs : 1;
  }
}

/** At most `limit` requests in flight; the wait is unknown to the server. */
export class ConcurrencyLimiter implements Limiter {
  readonly kind: LimiterKind = "concurrency";
  private inFlight = 0;
  constructor(
    private readonly limit: number,
    private readonly latencyMs: number,
  ) {}
  admit(): Admission {
    const admitted = this.inFlight < this.limit;
    if (admitted) this.inFlight += 1;
    return {
      admitted,
      waitMs: admitted ? 0 : null,
      limit: this.limit,
      remaining: this.limit - this.inFlight,
      resetMs: this.latencyMs,
      unit: "concurrent",
      quota: false,
      windowMs: this.latencyMs,
    };
  }
  release(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }
  minimumMs(jobs: number): number {
    return jobs <= 0 ? 0 : (Math.ceil(jobs / this.limit) - 1) * this.latencyMs;
  }
  lastBatch(jobs: number): number {
    return lastWindowShare(jobs, this.limit);
  }
}

export const DAY_MS = 86_400_000;

export function createLimiter(options: LimiterOptions & { latencyMs: number }): Limiter {
  const { kind, limit, windowMs, originMs } = options;
  if (!(Number.isFinite(limit) && limit >= 1)) throw new RangeError(`limit must be >= 1, got ${limit}`);
  if (!(Number.isFinite(windowMs) && windowMs >= 1)) throw new RangeError(`windowMs must be >= 1, got ${windowMs}`);
  switch (kind) {
    case "fixed-window":
      return new FixedWindowLimiter(limit, windowMs, originMs);
    case "sliding-window":
      return new SlidingWindowLimiter(limit, windowMs);
    case "token-bucket":
      return new TokenBucketLimiter(limit, windowMs, "requests");
    case "cost-bucket":
      return new TokenBucketLimiter(limit, windowMs, "points");
    case "concurrency":
      return new ConcurrencyLimiter(limit, options.latencyMs);
    case "daily-quota":
      return new FixedWindowLimiter(limit, windowMs, originMs, true);
  }
}
