/**
 * Waiters on a scope: `changed` resolves when the scope's state may have changed (this process
 * wrote it) or after waitMs, whichever comes first; an abort of the caller's signal rejects it.
 * The memory store's waiters, and Redis's, whose writes can also come from elsewhere: those are
 * seen by waking at the time the claim named and claiming again.
 */
import type { StoreClock } from "./memory";

export class ScopeWaiters {
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(private readonly clock: StoreClock) {}

  /** Wakes every waiter of the scope. */
  notify(scope: string): void {
    const set = this.waiters.get(scope);
    if (!set) return;
    this.waiters.delete(scope);
    for (const wake of set) wake();
  }

  /** Wakes every waiter of every scope (the store is closing: no timer may outlive it). */
  notifyAll(): void {
    for (const scope of [...this.waiters.keys()]) this.notify(scope);
  }

  changed(scope: string, waitMs: number, signal?: AbortSignal): Promise<void> {
    // An abort listener added after the abort never fires: an aborted caller must not wait out waitMs.
    if (signal?.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
    return new Promise<void>((resolve, reject) => {
      const stop = new AbortController();
      const onAbort = () => stop.abort(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      const set = this.waiters.get(scope) ?? new Set<() => void>();
      this.waiters.set(scope, set);
      const wake = () => {
        set.delete(wake);
        signal?.removeEventListener("abort", onAbort);
        stop.abort();
        resolve();
      };
      set.add(wake);
      this.clock.sleep(waitMs, stop.signal).then(wake, (error: unknown) => {
        set.delete(wake);
        signal?.removeEventListener("abort", onAbort);
        if (signal?.aborted) reject(error);
        else resolve();
      });
    });
  }
}
