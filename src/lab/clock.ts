/**
 * The lab's two clocks. Virtual: @sinonjs/fake-timers is installed around the run, so the real
 * peer packages' setTimeout and Date.now become virtual, and Math.random is replaced by a seeded
 * PRNG; the run is driven timer by timer, so hours pass in seconds and the same seed gives the
 * same result. Real: the process clock, used with the loopback server.
 */
import FakeTimers from "@sinonjs/fake-timers";

/** What the server and the strategies read time from. */
export interface LabClock {
  nowMs(): number;
  sleep(ms: number): Promise<void>;
}

/** Reads the globals at call time, so it is virtual inside runVirtual and real outside. */
export const globalClock: LabClock = {
  nowMs: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

/** mulberry32: a small, fast, seedable PRNG with values in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The virtual epoch every virtual run starts at: a Monday at 09:00 UTC. */
export const VIRTUAL_START_MS = Date.UTC(2026, 2, 2, 9, 0, 0);

export interface VirtualRunOptions {
  seed: number;
  /** Stop (and fail) a run that passes this much virtual time. */
  maxRunMs: number;
  startMs?: number;
  /** Stop a run that fires more timers than this. */
  maxTimers?: number;
}

/**
 * Runs `body` on virtual time. Timers fire in order, one at a time, with promise callbacks
 * drained between them, until `body` settles. Throws when the run passes maxRunMs of virtual time
 * or maxTimers timers, or when it waits with no timer pending (it could never finish).
 */
export async function runVirtual<T>(options: VirtualRunOptions, body: () => Promise<T>): Promise<T> {
  const realSetImmediate = globalThis.setImmediate;
  const startMs = options.startMs ?? VIRTUAL_START_MS;
  const maxTimers = options.maxTimers ?? 5_000_000;
  const originalRandom = Math.random;
  const clock = FakeTimers.withGlobal(globalThis).install({
    now: startMs,
    toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"],
    loopLimit: maxTimers,
  });
  Math.random = seededRandom(options.seed);
  try {
    let settled = false;
    let value: T | undefined;
    let failure: unknown = null;
    let failed = false;
    body().then(
      (v) => {
        settled = true;
        value = v;
      },
      (e: unknown) => {
        settled = true;
        failed = true;
        failure = e;
      },
    );
    // A sentinel timer just past the limit: timers fire in order, so none after it can run first.
    let expired = false;
    clock.setTimeout(() => {
      expired = true;
    }, options.maxRunMs + 1);
    let fired = 0;
    let idleTurns = 0;
    while (!settled) {
      if (expired) throw new Error(`virtual run passed its limit of ${options.maxRunMs} ms`);
      if (clock.countTimers() === 0) {
        // Nothing scheduled: let pending promise callbacks run; a run that stays idle is stuck.
        await new Promise<void>((resolve) => realSetImmediate(resolve));
        if (++idleTurns > 10_000) throw new Error("virtual run is waiting with no timer pending");
        continue;
      }
      idleTurns = 0;
      if (++fired > maxTimers) throw new Error(`virtual run fired more than ${maxTimers} timers`);
      await clock.nextAsync();
    }
    if (failed) throw failure;
    return value as T;
  } finally {
    Math.random = originalRandom;
    clock.uninstall();
  }
}
