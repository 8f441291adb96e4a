/**
 * Park queues in one process: named lists of work held until a not_before, with bounds. The
 * memory store (and through it the cross-flow store) keeps its queues here; every operation runs
 * synchronously, so it is atomic. Items are kept as JSON copies: what goes in is what comes out,
 * and what is stored can be saved in cross-flow state as it is.
 */
import type { ParkedItem, ParkResult, QueueLimits, TakeResult } from "./types";

/**
 * Per queue: 1,000 items and 2 MiB; all queues of a store together: 8 MiB. Cross-flow state has
 * a 64 MB limit for everything an instance persists (https://prismatic.io/docs/components/persist-data),
 * and the governors need room too (500 scopes at most): queues stay far below it.
 */
export const DEFAULT_QUEUE_LIMITS: Readonly<QueueLimits> = Object.freeze({ maxItems: 1000, maxBytes: 2 * 1024 * 1024 });
export const DEFAULT_MAX_TOTAL_QUEUE_BYTES = 8 * 1024 * 1024;
export const MAX_QUEUE_NAME_LENGTH = 200;

interface Entry {
  parked: ParkedItem;
  bytes: number;
}

export interface QueueSet {
  park(queue: string, items: readonly ParkedItem[], limits?: Partial<QueueLimits>): ParkResult;
  take(queue: string, nowMs: number, maxItems: number): TakeResult;
  /** Every queue's items, for saving (copies). */
  snapshot(): Record<string, ParkedItem[]>;
  /** Loads queues saved elsewhere (checked; malformed items are dropped and reported). Returns the problems, one line each. */
  load(value: unknown): string[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function checkQueueName(queue: string): void {
  if (typeof queue !== "string" || queue.trim() === "" || queue.length > MAX_QUEUE_NAME_LENGTH) {
    throw new TypeError(`Invalid park queue name "${String(queue).slice(0, 40)}": give a name of 1 to ${MAX_QUEUE_NAME_LENGTH} characters.`);
  }
}

/** A JSON copy of an item and its size as stored; throws one line when it is not JSON. */
function entryOf(parked: ParkedItem): Entry {
  if (!isRecord(parked.item) || !Number.isFinite(parked.notBeforeMs) || typeof parked.reason !== "string") {
    throw new TypeError("Invalid parked item: it needs an item object, a finite notBeforeMs and a reason.");
  }
  let text: string;
  try {
    text = JSON.stringify({ item: parked.item, notBeforeMs: parked.notBeforeMs, reason: parked.reason });
  } catch (error) {
    throw new TypeError(`Invalid parked item: it cannot be stored as JSON (${error instanceof Error ? error.message : String(error)}).`, { cause: error });
  }
  return { parked: JSON.parse(text) as ParkedItem, bytes: Buffer.byteLength(text, "utf8") };
}

/** A stored item as read back, or why it cannot be used. */
function readEntry(value: unknown): Entry | string {
  if (!isRecord(value)) return "not an object";
  if (!isRecord(value.item)) return "its item is not an object";
  if (typeof value.notBeforeMs !== "number" || !Number.isFinite(value.notBeforeMs)) return "its notBeforeMs is not a number";
  if (typeof value.reason !== "string") return "its reason is not text";
  return entryOf({ item: value.item, notBeforeMs: value.notBeforeMs, reason: value.reason });
}

const copy = (entry: Entry): ParkedItem => JSON.parse(JSON.stringify(entry.parked)) as ParkedItem;

export function createQueueSet(options: { limits?: Partial<QueueLimits>; maxTotalBytes?: number } = {}): QueueSet {
  const defaults: QueueLimits = { ...DEFAULT_QUEUE_LIMITS, ...options.limits };
  const maxTotalBytes = options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_QUEUE_BYTES;
  const queues = new Map<string, Entry[]>();
  const bytesOf = (entries: readonly Entry[]): number => entries.reduce((sum, e) => sum + e.bytes, 0);
  const totalBytes = (): number => [...queues.values()].reduce((sum, entries) => sum + bytesOf(entries), 0);

  return {
    park(queue, items, limits = {}) {
      checkQueueName(queue);
      const bounds: QueueLimits = { ...defaults, ...limits };
      const entries = items.map(entryOf);
      const held = queues.get(queue) ?? [];
      let queueBytes = bytesOf(held);
      let storeBytes = totalBytes();
      const overflow: ParkedItem[] = [];
      let parked = 0;
      for (const entry of entries) {
        // Once one item does not fit, the ones after it do not go in either: the queue keeps the given order.
        const fits = overflow.length === 0 && held.length < bounds.maxItems && queueBytes + entry.bytes <= bounds.maxBytes && storeBytes + entry.bytes <= maxTotalBytes;
        if (!fits) {
          overflow.push(copy(entry));
          continue;
        }
        held.push(entry);
        queueBytes += entry.bytes;
        storeBytes += entry.bytes;
        parked++;
      }
      if (held.length > 0) queues.set(queue, held);
      return { parked, overflow, queued: held.length };
    },
    take(queue, nowMs, maxItems) {
      checkQueueName(queue);
      const held = queues.get(queue) ?? [];
      const taken: Entry[] = [];
      const kept: Entry[] = [];
      for (const entry of held) {
        if (taken.length < maxItems && entry.parked.notBeforeMs <= nowMs) taken.push(entry);
        else kept.push(entry);
      }
      if (kept.length > 0) queues.set(queue, kept);
      else queues.delete(queue);
      const next = kept.reduce<number | null>((min, e) => (min === null || e.parked.notBeforeMs < min ? e.parked.notBeforeMs : min), null);
      return { items: taken.map(copy), remaining: kept.length, nextNotBeforeMs: next };
    },
    snapshot() {
      return Object.fromEntries([...queues.entries()].map(([name, entries]) => [name, entries.map(copy)]));
    },
    load(value) {
      if (value === undefined || value === null) return [];
      if (!isRecord(value)) return ["the park queues are not an object; they were dropped"];
      const problems: string[] = [];
      for (const [name, list] of Object.entries(value)) {
        if (name.trim() === "" || name.length > MAX_QUEUE_NAME_LENGTH || !Array.isArray(list)) {
          problems.push(`park queue ${name.slice(0, 40)} is not a named list; it was dropped`);
          continue;
        }
        const entries: Entry[] = [];
        let bad = 0;
        for (const stored of list) {
          const read = readEntry(stored);
          if (typeof read === "string") bad++;
          else entries.push(read);
        }
        if (bad > 0) problems.push(`${bad} item(s) of park queue ${name.slice(0, 40)} were not in a known format and were dropped`);
        if (entries.length > 0) queues.set(name, entries);
      }
      return problems;
    },
  };
}
