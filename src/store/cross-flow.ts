/**
 * The cross-flow store: Prismatic's embedded default. Prismatic loads persisted state when an
 * execution starts and writes it when the execution ends (and, per Prismatic's guidance, not when
 * it fails), last finisher wins (https://prismatic.io/docs/components/persist-data). So the
 * governors are read once at the step's start, run in memory during the step, and handed back in
 * the step's result under this component's ONE key: Prismatic's own components return only their
 * own key (prismatic-io/components, dropbox and google-drive), and returning every key would write
 * stale copies of other components' keys back.
 *
 * The saved object is { v: 1, salt, scopes, queues? }: queues (Send Batch's park queues) is
 * written only when a queue holds items, and a state saved before queues existed reads as none.
 */
import { createMemoryStore, type MemoryStore, type MemoryStoreOptions } from "./memory";

/** The one key this component occupies in cross-flow state. */
export const STATE_KEY = "throttleAwareHttp.governor.v1";

export interface CrossFlowStore extends MemoryStore {
  /** What to return as the step's crossFlowState: this component's key only. */
  toCrossFlowState(): Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Opens the store from the execution's cross-flow state. Anything malformed under our key is
 * dropped with one warning per problem; the step goes on (a lost wait costs at most one probe).
 */
export function createCrossFlowStore(crossFlowState: unknown, options: MemoryStoreOptions & { warn?: (message: string) => void } = {}): CrossFlowStore {
  const warn = options.warn ?? (() => undefined);
  const stored = isRecord(crossFlowState) ? crossFlowState[STATE_KEY] : undefined;
  let salt: string | undefined;
  let scopes: Record<string, unknown> = {};
  let queues: unknown = undefined;
  if (stored !== undefined && stored !== null) {
    if (isRecord(stored) && stored.v === 1 && isRecord(stored.scopes)) {
      scopes = stored.scopes;
      queues = stored.queues;
      if (typeof stored.salt === "string" && /^[0-9a-f]{32}$/.test(stored.salt)) salt = stored.salt;
    } else {
      warn(`throttle-aware-http: the stored state under ${STATE_KEY} is not in a known format; starting afresh.`);
    }
  }
  // Concurrent executions each run on their own copy of the state: none sees the others' claims.
  const memory = createMemoryStore({ ...options, salt: options.salt ?? salt, governor: { ...options.governor, claimsAllSeen: false } });
  for (const problem of [...memory.load(scopes), ...memory.loadQueues(queues)]) warn(`throttle-aware-http: ${problem}`);
  return Object.assign(memory, {
    kind: "cross-flow" as const,
    seesEveryClaimNow: (): boolean => false,
    toCrossFlowState(): Record<string, unknown> {
      const queues = memory.queuesSnapshot();
      const saved = { v: 1, salt: memory.saltValue, scopes: Object.fromEntries(memory.snapshot()) };
      return { [STATE_KEY]: Object.keys(queues).length > 0 ? { ...saved, queues } : saved };
    },
  });
}
