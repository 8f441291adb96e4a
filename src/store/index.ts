/** The governor's state stores: memory (one process), cross-flow state (one Prismatic instance, loaded and written per execution) and Redis (shared at once across executions and processes). */
export { createMemoryStore } from "./memory";
export type { MemoryStore, MemoryStoreOptions, StoreClock, StoreEvent } from "./memory";
export { createCrossFlowStore, STATE_KEY } from "./cross-flow";
export type { CrossFlowStore } from "./cross-flow";
export type { ClaimScopes, GovernorStore, ParkedItem, ParkResult, QueueLimits, StoreClaim, StoreKind, TakeResult } from "./types";
export { DEFAULT_MAX_TOTAL_QUEUE_BYTES, DEFAULT_QUEUE_LIMITS, MAX_QUEUE_NAME_LENGTH } from "./queue";
export { createRedisStore, DEFAULT_KEY_PREFIX } from "./redis/store";
export type { RedisStore, RedisStoreOptions } from "./redis/store";
