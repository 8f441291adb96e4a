/**
 * A fixed window's next reset is granted whole only once the answers due to claims sent since the
 * reading are in (model.ts answersMayTellKind): one reading after a reset, the count back in full,
 * reads the same under a bucket whose reset is the time until it is full again.
 */
import { describe, expect, it } from "vitest";
import { type Go, Scope, shown, T0 } from "./helpers";

const LIMIT = 20;

/**
 * The first window: a probe at T0 and 19 more at T0 + 100, the count run down under one reset
 * (T0 + 1,100); then the probe after that reset, answered with the count back in full and the next
 * reset a window on: read as a fixed window. Returns the scope at T0 + 1,200 with that probe answered.
 */
function readAsFixedAfterOneReset(): { scope: Scope; probe: Go } {
  const scope = Scope.afterReading(T0 + 100, shown({ limit: LIMIT, remaining: LIMIT - 1, resetAtMs: T0 + 1100 }));
  const first = Array.from({ length: LIMIT - 1 }, () => scope.go(T0 + 100));
  first.forEach((granted, i) => scope.answer(granted, T0 + 200, { budget: shown({ limit: LIMIT, remaining: LIMIT - 2 - i, resetAtMs: T0 + 1100 }) }));
  const probe = scope.go(T0 + 1100);
  expect(probe.atMs).toBe(T0 + 1100);
  scope.answer(probe, T0 + 1200, { budget: shown({ limit: LIMIT, remaining: LIMIT - 1, resetAtMs: T0 + 2200 }) });
  expect(scope.state.refill).toBe("fixed");
  return { scope, probe };
}

/** The next `count` grants, each claimed at fromMs or when the claim before it was told to ask again. */
function grantsFrom(scope: Scope, fromMs: number, count: number): Go[] {
  const grants: Go[] = [];
  let nowMs = fromMs;
  for (let asked = 0; grants.length < count && asked < 100; asked++) {
    const result = scope.claim(nowMs);
    if (result.kind === "go") grants.push(result);
    else nowMs = result.kind === "wait" ? result.untilMs : result.notBeforeMs;
  }
  expect(grants).toHaveLength(count);
  return grants;
}

describe("a fixed window read from one reset, with its burst's answers still due", () => {
  it("grants its next window only once those answers are in: a bucket they show is paced as one", () => {
    const { scope } = readAsFixedAfterOneReset();
    const burst = Array.from({ length: LIMIT - 1 }, () => scope.go(T0 + 1200));
    expect(burst.every((granted) => granted.atMs === T0 + 1200)).toBe(true);
    // Read as fixed, the next window is T0 + 2,200; its claim waits for the burst's answers instead.
    expect(scope.claim(T0 + 1200).kind).toBe("wait");
    // A bucket of 20 refilling 10 per s: time to full, rounded up to whole seconds, moves on as the count runs down.
    burst.forEach((granted, i) => {
      const remaining = LIMIT - 2 - i;
      const fullInMs = Math.ceil(((LIMIT - remaining) * 100) / 1000) * 1000;
      scope.answer(granted, T0 + 1300, { budget: shown({ limit: LIMIT, remaining, resetAtMs: T0 + 1300 + fullInMs }) });
    });
    expect(scope.state.refill).toBe("bucket");
    const next = grantsFrom(scope, T0 + 1300, 10);
    // Units come back one at a time: the ten are spread out, not sent together at a reset.
    expect(new Set(next.map((granted) => granted.atMs)).size).toBeGreaterThanOrEqual(9);
  });

  it("and a fixed window's answers leave its next window where it was", () => {
    const { scope } = readAsFixedAfterOneReset();
    const burst = Array.from({ length: LIMIT - 1 }, () => scope.go(T0 + 1200));
    expect(scope.claim(T0 + 1200).kind).toBe("wait");
    burst.forEach((granted, i) => scope.answer(granted, T0 + 1300, { budget: shown({ limit: LIMIT, remaining: LIMIT - 2 - i, resetAtMs: T0 + 2200 }) }));
    expect(scope.state.refill).toBe("fixed");
    const next = Array.from({ length: LIMIT - 1 }, () => scope.go(T0 + 1300));
    expect(next.every((granted) => granted.atMs === T0 + 2200)).toBe(true);
  });
});
