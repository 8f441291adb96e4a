/**
 * The rate governor: one state per rate-limit scope that learns the API's budget from its own
 * signals and hands out spaced start times (slots). Pure functions over a plain JSON state; the
 * stores (memory, cross-flow state, Redis) apply them atomically.
 */
import { clampTime, clip, copyState } from "./state";
import type { GovernorState } from "./types";

export { claim, claimInPlace, isCold, keptHeldGrant, latestPacedStartMs, prune, recheckMs, release } from "./claim";
export { observe, observeInPlace } from "./observe";
export { holdsConcurrency as freesOnAnswer } from "./concurrency";
export { earliestStart, fromOwnLog, seesEveryClaim, unreflectedUnits } from "./model";
export { boundSlots, clampTime, copyState, emptyState, MAX_SLOTS, readState } from "./state";
export type * from "./types";
export { DEFAULT_GOVERNOR_OPTIONS } from "./types";

/** Records a wait (set-if-later): no start before untilMs. Record Backoff, and waits told by other means. */
export function holdUntil(current: GovernorState, untilMs: number, reason: string, limitType: GovernorState["notBeforeType"]): GovernorState {
  const state = copyState(current);
  const atMs = clampTime(untilMs);
  if (atMs > state.notBeforeMs) {
    state.notBeforeMs = atMs;
    state.notBeforeReason = clip(reason);
    state.notBeforeType = limitType;
  }
  return state;
}
