/**
 * A store clock that only moves when a test says so. sleep() honours its AbortSignal as the
 * real one does (rejects with the signal's reason), so a test sees what a store does on abort.
 */
import type { StoreClock } from "../../src/store";

interface Timer {
  atMs: number;
  resolve: () => void;
}

export class FakeClock implements StoreClock {
  private timers: Timer[] = [];

  constructor(private now: number) {}

  nowMs(): number {
    return this.now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const reason = () => (signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
      if (signal?.aborted) return reject(reason());
      const timer: Timer = {
        atMs: this.now + Math.max(0, ms),
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.timers = this.timers.filter((t) => t !== timer);
        reject(reason());
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.timers.push(timer);
    });
  }

  /** Timers not yet fired or cancelled. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time on, firing every timer due by then, in time order, and lets their callbacks run. */
  async advance(ms: number): Promise<void> {
    this.now += ms;
    const due = this.timers.filter((t) => t.atMs <= this.now).sort((a, b) => a.atMs - b.atMs);
    this.timers = this.timers.filter((t) => t.atMs > this.now);
    for (const timer of due) timer.resolve();
    await settle();
  }
}

/** Lets every queued promise callback run (the stores' operations are async but never wait on time). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** Whether a promise has settled yet, without waiting for it. */
export async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await settle();
  return settled;
}
