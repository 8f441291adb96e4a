import { describe, expect, it } from "vitest";
import { ConcurrencyLimiter, createLimiter, DAY_MS, FixedWindowLimiter, SlidingWindowLimiter, TokenBucketLimiter } from "../../src/lab/limiters";

const T0 = 1_000_000;

describe("fixed window", () => {
  it("a window of 3 per 100 ms admits 3 and rejects the 4th, then admits again in the next window", () => {
    const limiter = new FixedWindowLimiter(3, 100, T0);
    expect([0, 10, 20].map((t) => limiter.admit(T0 + t, 1).admitted)).toEqual([true, true, true]);
    const fourth = limiter.admit(T0 + 30, 1);
    expect(fourth.admitted).toBe(false);
    expect(fourth.waitMs).toBe(70);
    expect(fourth.remaining).toBe(0);
    expect(limiter.admit(T0 + 99, 1).admitted).toBe(false);
    expect(limiter.admit(T0 + 100, 1).admitted).toBe(true);
  });

  it("reports remaining and the reset of the window", () => {
    const limiter = new FixedWindowLimiter(3, 100, T0);
    const first = limiter.admit(T0 + 40, 1);
    expect(first.remaining).toBe(2);
    expect(first.resetMs).toBe(60);
  });
});

describe("sliding window", () => {
  it("admits exactly `limit` in any window and says when the oldest leaves", () => {
    const limiter = new SlidingWindowLimiter(3, 100);
    expect([0, 10, 20].map((t) => limiter.admit(T0 + t, 1).admitted)).toEqual([true, true, true]);
    const fourth = limiter.admit(T0 + 50, 1);
    expect(fourth.admitted).toBe(false);
    expect(fourth.waitMs).toBe(50);
    // Unlike a fixed window, the boundary at 100 frees only the first slot.
    expect(limiter.admit(T0 + 100, 1).admitted).toBe(true);
    expect(limiter.admit(T0 + 100, 1).admitted).toBe(false);
    expect(limiter.admit(T0 + 110, 1).admitted).toBe(true);
  });
});

describe("token bucket", () => {
  it("admits the bucket, rejects the next, and admits one token's time later", () => {
    const limiter = new TokenBucketLimiter(3, 300, "requests"); // 1 token per 100 ms
    expect([0, 0, 0].map(() => limiter.admit(T0, 1).admitted)).toEqual([true, true, true]);
    const fourth = limiter.admit(T0 + 40, 1);
    expect(fourth.admitted).toBe(false);
    expect(fourth.waitMs).toBe(60);
    expect(limiter.admit(T0 + 100, 1).admitted).toBe(true);
    expect(limiter.admit(T0 + 100, 1).admitted).toBe(false);
  });

  it("as a cost bucket counts points: 100 points at 30 a query admit 3 queries", () => {
    const limiter = createLimiter({ kind: "cost-bucket", limit: 100, windowMs: 2000, originMs: T0, latencyMs: 0 }); // 50 points/s
    expect([1, 2, 3].map(() => limiter.admit(T0, 30).admitted)).toEqual([true, true, true]);
    const fourth = limiter.admit(T0, 30);
    expect(fourth.admitted).toBe(false);
    expect(fourth.remaining).toBe(10);
    expect(fourth.waitMs).toBe(400); // 20 more points at 0.05 points/ms
    expect(fourth.unit).toBe("points");
    expect(limiter.admit(T0 + 400, 30).admitted).toBe(true);
  });
});

describe("concurrency limit", () => {
  it("admits `limit` in flight and one more after a release", () => {
    const limiter = new ConcurrencyLimiter(2, 50);
    expect(limiter.admit().admitted).toBe(true);
    expect(limiter.admit().admitted).toBe(true);
    const third = limiter.admit();
    expect(third.admitted).toBe(false);
    expect(third.waitMs).toBeNull();
    limiter.release();
    expect(limiter.admit().admitted).toBe(true);
  });
});

describe("daily quota", () => {
  it("admits the quota, then rejects until the day ends, and is marked as a quota", () => {
    const limiter = createLimiter({ kind: "daily-quota", limit: 5, windowMs: DAY_MS, originMs: T0, latencyMs: 0 });
    for (let i = 0; i < 5; i++) expect(limiter.admit(T0 + i * 1000, 1).admitted).toBe(true);
    const sixth = limiter.admit(T0 + 60_000, 1);
    expect(sixth.admitted).toBe(false);
    expect(sixth.quota).toBe(true);
    expect(sixth.waitMs).toBe(DAY_MS - 60_000);
    expect(limiter.admit(T0 + DAY_MS, 1).admitted).toBe(true);
  });
});

describe("minimum time (the ideal)", () => {
  it("is (ceil(jobs/limit) - 1) windows for windows and the deficit over the rate for buckets", () => {
    expect(new FixedWindowLimiter(3, 100, T0).minimumMs(8, 1)).toBe(200);
    expect(new SlidingWindowLimiter(120, 60_000).minimumMs(1200, 1)).toBe(540_000);
    expect(new TokenBucketLimiter(1000, 20_000, "points").minimumMs(300, 50)).toBe(280_000);
    expect(new ConcurrencyLimiter(4, 50).minimumMs(10)).toBe(100);
    // ... and how many of them it admits only then, together: a window's last share (a whole one
    // when the jobs divide evenly), a bucket's last one once its burst is spent, or all of a burst.
    expect(new FixedWindowLimiter(3, 100, T0).lastBatch(8, 1)).toBe(2);
    expect(new SlidingWindowLimiter(120, 60_000).lastBatch(1200, 1)).toBe(120);
    expect(new TokenBucketLimiter(1000, 20_000, "points").lastBatch(300, 50)).toBe(1);
    expect(new TokenBucketLimiter(1000, 20_000, "points").lastBatch(20, 50)).toBe(20);
    expect(new ConcurrencyLimiter(4, 50).lastBatch(10)).toBe(2);
  });
});
