import { createMemoryLedger } from "./memory";
import type { Ledger, LedgerOptions } from "./types";

/** The one namespaced key the ledger occupies in Prismatic cross-flow state. */
export const LEDGER_STATE_KEY = "throttleAwareHttp.ledger.v1";

export interface StateLedger extends Ledger {
  /**
   * The cross-flow state to return at the end of the step: every other key kept as it was
   * (a returned crossFlowState may replace the stored one), the ledger key replaced.
   */
  toCrossFlowState(current: Record<string, unknown> | undefined): Record<string, unknown>;
}

/**
 * A ledger backed by cross-flow state. Prismatic loads state when an execution starts and writes
 * it when the execution ends (and, per Prismatic's guidance, not when it fails), last writer
 * wins. So: read once at step start, prune, and hand the result back in the step's return value.
 */
export function createStateLedger(crossFlowState: Record<string, unknown> | undefined, nowMs: number, options: LedgerOptions = {}): StateLedger {
  const ledger = createMemoryLedger(options);
  ledger.load(crossFlowState?.[LEDGER_STATE_KEY]);
  ledger.prune(nowMs);
  return {
    ...ledger,
    toCrossFlowState(current) {
      return { ...(current ?? {}), [LEDGER_STATE_KEY]: ledger.toState() };
    },
  };
}
