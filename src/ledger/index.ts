/** The not_before ledger: per-scope earliest next request, set-if-later, bounded, with a breaker. */
export { createMemoryLedger, validateEntry } from "./memory";
export { createStateLedger, LEDGER_STATE_KEY } from "./state";
export type { StateLedger } from "./state";
export type { Ledger, LedgerEntry, LedgerState, LedgerOptions, NotBeforeWrite, BreakerState, Gate } from "./types";
