/** The governor's state stores: memory, cross-flow state (and Redis, for state shared across executions and processes). */
export { createMemoryStore } from "./memory";
export type { MemoryStore, MemoryStoreOptions, StoreClock, StoreEvent } from "./memory";
export { createCrossFlowStore, STATE_KEY } from "./cross-flow";
export type { CrossFlowStore } from "./cross-flow";
export type { ClaimScopes, GovernorStore, ParkedItem, ParkResult, QueueLimits, StoreClaim, StoreKind, TakeResult } from "./types";
export { DEFAULT_MAX_TOTAL_QUEUE_BYTES, DEFAULT_QUEUE_LIMITS, MAX_QUEUE_NAME_LENGTH } from "./queue";
