import { action, type ActionContext } from "@prismatic-io/spectral";
import { ThrottleInputError, type ThrottleClient, type ThrottleResult } from "../client";
import { authFromConnection, type ConnectionAuth } from "../connections";
import { batchItemName, checkUrl, parseBatch, parsePolicy, sendBatchInputs, type BatchItem, type StepPolicy } from "../inputs";
import type { GovernorStore, ParkedItem, ParkResult } from "../store";
import type { StepStore } from "../store/fallback";
import { batchExamples, batchSchemas } from "./batchSchemas";
import { DEADLINE_MARGIN_MS, EXECUTION_LIMIT_MS, executionDeadlineMs, loggerOf, nextStartMs, openStore, throttleClientFor } from "./shared";

/** What became of one item. */
export interface ItemOutcome {
  outcome: "success" | "failed" | "deferred";
  status: number | null;
  data: unknown;
  notBeforeMs?: number;
  reason: string;
  /** Calls made for the item; null when a failure did not say (a write whose outcome is unknown). */
  attempts: number | null;
}

/** A wait an item of this batch was told: later items of its scope are deferred to it without calling. */
interface ScopeHold {
  notBeforeMs: number;
  reason: string;
}

interface BatchRun {
  client: ThrottleClient;
  store: GovernorStore;
  /** No item starts after this: the batch's end less one attempt timeout, so that what starts can finish. */
  latestStartMs: number;
  /** Waits up to this long are slept through; a longer one is the API's long wait. */
  maxInlineWaitMs: number;
  /** Why items that reach latestStartMs are not started. */
  timeReason: string;
  /** Set once an item could not start in time: the items after it are not started either. */
  timeIsUp: boolean;
  holds: Map<string, ScopeHold>;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The client's wording names code options; a batch item names them as item keys. */
function inItemTerms(text: string): string {
  return text.replace(/\bset (?:an idempotency key|idempotencyKey)\b/g, "give the item an idempotencyKey");
}

/** Every item's URL as the client will resolve it; the first bad one fails the step in one line naming the item. */
function checkItemUrls(items: readonly BatchItem[], auth: ConnectionAuth): void {
  for (const item of items) {
    try {
      checkUrl(item.url, auth);
    } catch (error) {
      if (!(error instanceof ThrottleInputError)) throw error;
      throw new ThrottleInputError(`Invalid Requests: ${batchItemName(item.index, item.id)} has an invalid url: ${error.message.replace(/^Invalid URL /, "")}`);
    }
  }
}

/** The earliest time the item's scope allows a start (its not_before, its budget), or now. */
async function scopeReadyMs(run: BatchRun, scope: string, nowMs: number): Promise<number> {
  const states = await run.store.scopesUnder(scope);
  const own = states.find(([key]) => key === scope)?.[1];
  return own ? Math.max(nowMs, nextStartMs(own, nowMs)) : nowMs;
}

function fromResult(result: ThrottleResult): ItemOutcome {
  const common = { status: result.status, data: result.data, reason: inItemTerms(result.reason), attempts: result.attempts.length };
  if (result.outcome === "success") return { outcome: "success", ...common };
  if (result.outcome === "deferred") return { outcome: "deferred", ...common, notBeforeMs: Date.parse(result.notBefore ?? iso(Date.now())) };
  // http_error (a 404, a validation 400) and gave_up (retries or time spent): reported, not thrown.
  return { outcome: "failed", ...common, ...(result.notBefore ? { notBeforeMs: Date.parse(result.notBefore) } : {}) };
}

/**
 * A deferred item either met a long wait (more than Max Inline Wait: the API's, or a turn the
 * scope's pacing set past the batch's latest start): its scope's later items are deferred to the
 * same time without calling; or its turn (or retry) came after the latest start this batch allows,
 * within Max Inline Wait: time is up, and it says so.
 */
function holdOrStop(run: BatchRun, scope: string, outcome: ItemOutcome, notBeforeMs: number): void {
  const waitMs = notBeforeMs - Date.now();
  if (notBeforeMs > run.latestStartMs && waitMs <= run.maxInlineWaitMs) {
    run.timeIsUp = true;
    outcome.reason = `${run.timeReason} Its turn was at ${iso(notBeforeMs)}: ${outcome.reason}`;
    return;
  }
  const held = run.holds.get(scope);
  if (!held || held.notBeforeMs < notBeforeMs) run.holds.set(scope, { notBeforeMs, reason: outcome.reason });
}

/** The wait held for the item's scope (or for its API as a whole) that is still ahead, if any. */
function holdFor(run: BatchRun, scope: string, base: string, nowMs: number): ScopeHold | null {
  const ahead = [run.holds.get(scope), run.holds.get(base)].filter((h): h is ScopeHold => h !== undefined && h.notBeforeMs > nowMs);
  return ahead.reduce<ScopeHold | null>((latest, h) => (latest === null || h.notBeforeMs > latest.notBeforeMs ? h : latest), null);
}

/** One item: deferred without calling when time is up or an earlier item of its scope was deferred (told to wait, or paced past the batch); else sent through the batch's one client. */
async function attemptItem(run: BatchRun, item: BatchItem): Promise<ItemOutcome> {
  const { client } = run;
  const scope = await client.scopeOf(item.url, item.method);
  const nowMs = Date.now();
  const hold = holdFor(run, scope, await client.baseScopeOf(item.url), nowMs);
  if (hold) {
    return { outcome: "deferred", status: null, data: null, notBeforeMs: hold.notBeforeMs, reason: `Not sent: an earlier item to the same API cannot start before ${iso(hold.notBeforeMs)}: ${hold.reason}`, attempts: 0 };
  }
  if (run.timeIsUp || nowMs > run.latestStartMs) {
    run.timeIsUp = true;
    return { outcome: "deferred", status: null, data: null, notBeforeMs: await scopeReadyMs(run, scope, nowMs), reason: run.timeReason, attempts: 0 };
  }
  const result = await client.request({
    method: item.method,
    url: item.url,
    data: item.data,
    headers: item.headers,
    params: item.queryParams,
    idempotencyKey: item.idempotencyKey,
    latestStartMs: run.latestStartMs,
  });
  const outcome = fromResult(result);
  if (outcome.outcome === "deferred" && outcome.notBeforeMs !== undefined) holdOrStop(run, result.scope, outcome, outcome.notBeforeMs);
  return outcome;
}

async function sendItem(run: BatchRun, item: BatchItem): Promise<ItemOutcome> {
  try {
    return await attemptItem(run, item);
  } catch (error) {
    // A write whose outcome is unknown, a response over the size limit: this item failed, the batch goes on.
    const reason = error instanceof Error ? inItemTerms(error.message) : String(error);
    return { outcome: "failed", status: null, data: null, reason, attempts: null };
  }
}

/** Sends every item, at most `concurrency` at once, and returns their outcomes in input order. */
async function runItems(run: BatchRun, items: readonly BatchItem[], concurrency: number): Promise<ItemOutcome[]> {
  const outcomes: ItemOutcome[] = new Array<ItemOutcome>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      outcomes[index] = await sendItem(run, items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return outcomes;
}

/** Why an item is not started when time runs out: the execution's end or the step's Max Total, whichever is first. */
function timeReasonOf(byMaxTotal: boolean, timeoutMs: number): string {
  const needs = `an item needs up to its Timeout (seconds), ${timeoutMs / 1000} s, to finish`;
  if (byMaxTotal) return `Not started: it could not finish inside this step's Max Total (seconds) (${needs}). Send it again later, e.g. from a park queue.`;
  return `Not started: it could not finish inside this execution (Prismatic stops an execution after ${EXECUTION_LIMIT_MS / 60_000} minutes; this step keeps ${DEADLINE_MARGIN_MS / 1000} s for the steps after it, and ${needs}). Send it again in a later execution, e.g. from a park queue.`;
}

/** The item as a deferred entry: what the caller gave, with its id, notBefore and reason. */
function deferredEntry(item: BatchItem, outcome: ItemOutcome): Record<string, unknown> {
  return { ...item.given, id: item.id, notBefore: iso(outcome.notBeforeMs ?? Date.now()), reason: outcome.reason };
}

interface Parking {
  queue: string;
  parked: number;
  queued: number;
  /** Deferred items that did not fit the queue: returned in `deferred`. */
  overflow: Array<Record<string, unknown>>;
}

/** Parks the deferred items; what does not fit comes back, with one warning line in the log. */
async function park(context: Pick<ActionContext, "logger">, store: GovernorStore, queue: string, entries: Array<Record<string, unknown>>): Promise<{ parking: Parking; warning: string | null }> {
  const items: ParkedItem[] = entries.map((entry) => ({ item: entry, notBeforeMs: Date.parse(String(entry.notBefore)), reason: String(entry.reason) }));
  let result: ParkResult;
  try {
    result = await store.park(queue, items);
  } catch (error) {
    // An item that cannot be stored (not JSON): the work is done; hand every deferred item back rather than fail the step.
    const warning = `Park queue "${queue}": the deferred items could not be parked (${error instanceof Error ? error.message : String(error)}); they are returned in deferred.`;
    context.logger.warn(`throttle-aware-http: ${warning}`);
    return { parking: { queue, parked: 0, queued: 0, overflow: entries }, warning };
  }
  const overflow = result.overflow.map((p) => p.item);
  const parking = { queue, parked: result.parked, queued: result.queued, overflow };
  if (overflow.length === 0) return { parking, warning: null };
  const warning = `Park queue "${queue}" is full (${result.queued} items waiting): ${overflow.length} deferred item(s) were not parked and are returned in deferred. Take parked items more often, or send fewer items per execution.`;
  context.logger.warn(`throttle-aware-http: ${warning}`);
  return { parking, warning };
}

function resultsOf(items: readonly BatchItem[], outcomes: readonly ItemOutcome[]) {
  return items.map((item, i) => {
    const o = outcomes[i]!;
    return { id: item.id, outcome: o.outcome, status: o.status, data: o.data ?? null, ...(o.notBeforeMs !== undefined ? { notBefore: iso(o.notBeforeMs) } : {}), reason: o.reason, attempts: o.attempts };
  });
}

type BatchData = { summary: Record<"total" | "succeeded" | "failed" | "deferred" | "parked", number>; results: ReturnType<typeof resultsOf>; deferred: Array<Record<string, unknown>>; parkQueue: { name: string; parked: number; waiting: number } | null; warnings: string[] };
/** What the step returns: the branch, its data, and the governors and queues in cross-flow state (our key only). */
type SendBatchReturn = { branch: "Success" | "Deferred"; data: BatchData; crossFlowState?: Record<string, unknown> };

/**
 * Send Batch: many requests in one step through ONE client, so that every item takes its turn from
 * its scope's governor (shared with other steps and executions through the store): the batch keeps
 * the API's pace without pacing of its own. What cannot run now is deferred with its not_before,
 * never dropped: returned in `deferred`, or parked in a named queue for a later execution.
 */
export const sendBatch = action({
  display: {
    label: "Send Batch",
    description: "Send a list of HTTP requests at the API's pace in one step; what cannot run now is deferred with its not_before (or parked in a queue), never dropped.",
    directions:
      "Give Requests a JSON array of requests (from a previous step or a code step). They are sent a few at a time (Concurrency), each waiting for its turn from the rate-limit scope's governor, so the batch keeps the API's pace by itself and together with other steps using the same connection. A failed item (a 404, a validation error) is reported in the results, not thrown. When the API asks for a long wait, or the execution's time runs out, the remaining items are deferred: returned in deferred with their not_before, or kept in a Park Queue that a later execution empties with Take Parked Items.",
  },
  inputs: sendBatchInputs,
  allowsBranching: true,
  staticBranchNames: ["Success", "Deferred"],
  // Calls an external API (and may write) and changes cross-flow state: never run it just to fill the designer.
  performSafety: "notAllowed",
  examplePayload: { branch: "Deferred", data: batchExamples.Deferred },
  outputSchema: { type: "branchingOutput", branchSchemas: batchSchemas },
  perform: async (context, params): Promise<SendBatchReturn> => {
    const batch = { ...parseBatch(params), policy: parsePolicy(params), auth: authFromConnection(params.connection as Parameters<typeof authFromConnection>[0]) };
    checkItemUrls(batch.items, batch.auth);
    const store = openStore(context, params);
    try {
      return await runBatch(context, store, batch);
    } finally {
      await store.close();
    }
  },
});

interface ParsedBatch {
  items: BatchItem[];
  concurrency: number;
  parkQueue: string | undefined;
  policy: StepPolicy;
  auth: ConnectionAuth;
}

/** The batch itself, on a store the caller opened (and closes). */
async function runBatch(context: ActionContext, store: StepStore, { items, concurrency, parkQueue, policy, auth }: ParsedBatch): Promise<SendBatchReturn> {
  const startMs = Date.now();
  const executionEndMs = executionDeadlineMs(context.startedAt, startMs) ?? Number.POSITIVE_INFINITY;
  const batchEndMs = Math.min(executionEndMs, startMs + policy.maxTotalMs);
  // A batch never fails on a long wait: it defers the item (and the rest of its scope).
  const client = throttleClientFor({ context, auth, policy: { ...policy, onLongWait: "defer" }, store, nowMs: startMs, deadlineMs: batchEndMs });
  const run: BatchRun = {
    client,
    store,
    latestStartMs: batchEndMs - policy.timeoutMs,
    maxInlineWaitMs: policy.maxInlineWaitMs,
    timeReason: timeReasonOf(batchEndMs < executionEndMs, policy.timeoutMs),
    timeIsUp: false,
    holds: new Map(),
  };
  const outcomes = await runItems(run, items, concurrency);

  const deferredEntries = items.flatMap((item, i) => (outcomes[i]!.outcome === "deferred" ? [deferredEntry(item, outcomes[i]!)] : []));
  const parked = parkQueue && deferredEntries.length > 0 ? await park(context, store, parkQueue, deferredEntries) : null;
  const count = (outcome: ItemOutcome["outcome"]) => outcomes.filter((o) => o.outcome === outcome).length;
  const summary = { total: items.length, succeeded: count("success"), failed: count("failed"), deferred: count("deferred"), parked: parked?.parking.parked ?? 0 };
  loggerOf(context).info(`Send Batch: ${summary.total} item(s): ${summary.succeeded} succeeded, ${summary.failed} failed, ${summary.deferred} deferred${parkQueue ? `, ${summary.parked} parked in "${parkQueue}"` : ""}.`);
  const data: BatchData = {
    summary,
    results: resultsOf(items, outcomes),
    deferred: parked ? parked.parking.overflow : deferredEntries,
    parkQueue: parked ? { name: parked.parking.queue, parked: parked.parking.parked, waiting: parked.parking.queued } : null,
    warnings: parked?.warning ? [parked.warning] : [],
  };
  // Only this component's own key: the governors, what they learned, and the park queues.
  return { branch: summary.deferred > 0 ? "Deferred" : "Success", data, crossFlowState: await store.toCrossFlowState() };
}
