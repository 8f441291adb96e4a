/** The governor's state stores: memory, cross-flow state (and Redis, for state shared across executions and processes). */
export { createMemoryStore } from "./memory";
export type { MemoryStore, MemoryStoreOptions, StoreClock, StoreEvent } from "./memory";
export { createCrossFlowStore, STATE_KEY } from "./cross-flow";
export type { CrossFlowStore } from "./cross-flow";
export type { ClaimScopes, GovernorStore, StoreClaim, StoreKind } from "./types";
