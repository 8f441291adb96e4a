/**
 * Microsoft Azure: Azure Resource Manager (the management plane, management.azure.com and the
 * sovereign clouds' management hosts) and Azure Storage (the data plane of storage accounts,
 * {account}.blob/.queue/.table/.file/.dfs.core.windows.net). Two dialects, as the two speak of
 * different limits in different ways.
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, longestWait, readCount, readDecimalHeader, readExplicitWaits, type Wait } from "../signals";
import type { Budget, Interpretation, ScopeParts } from "../types";
import { describeWait, retryableBy, throttledBy, tightestBudget } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const ARM_DOC = "https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/request-limits-and-throttling";
const RESOURCE_GRAPH_DOC = "https://learn.microsoft.com/en-us/azure/governance/resource-graph/concepts/guidance-for-throttled-requests";
const COMPUTE_DOC = "https://learn.microsoft.com/en-us/troubleshoot/azure/virtual-machines/troubleshooting-throttling-errors";
/** The -global- header names: not in ARM_DOC's header table; seen on ARM's answers and read by this integration's doc. */
const GLOBAL_HEADERS_DOC = "https://coralogix.com/docs/integrations/azure/microsoft-azure-api-rate-limits/";
const STORAGE_TARGETS_DOC = "https://learn.microsoft.com/en-us/azure/storage/blobs/scalability-targets";
const STORAGE_ERRORS_DOC = "https://learn.microsoft.com/en-us/rest/api/storageservices/common-rest-api-error-codes";
const STORAGE_STATUS_DOC = "https://learn.microsoft.com/en-us/rest/api/storageservices/status-and-error-codes2";
/** x-ms-retry-after-ms: known from the Azure SDK's retry code only. */
const SDK_SOURCE = "https://github.com/Azure/azure-sdk-for-js/blob/main/sdk/core/core-rest-pipeline/src/retryStrategies/throttlingRetryStrategy.ts";

/**
 * The Azure SDK retries a 429 or 503 after "Retry-After" or "retry-after-ms" or "x-ms-retry-after-ms"
 * (SDK_SOURCE, isThrottlingRetryResponse): the last one, ms, is read here; the first two by every
 * dialect. The longest wins, each being a floor.
 */
function readWait(ctx: SignalContext): Wait | null {
  return longestWait(readExplicitWaits(ctx), readDecimalHeader(ctx, "x-ms-retry-after-ms", 1));
}

// ---------------------------------------------------------------------------------------------
// Azure Resource Manager
// ---------------------------------------------------------------------------------------------
/*
 * ARM throttles each request twice (ARM_DOC): first for the subscription (a request whose path
 * names /subscriptions/{id}) or the tenant (any other), then at the resource provider, whose limits
 * are its own. Since 2024 ARM's limits are token buckets per Region: per subscription, service
 * principal and operation type, reads a bucket of 250 refilled at 25 per second, writes and deletes
 * 200 at 10 per second, the tenant's the same; and "a global subscription limit that's 15 times the
 * individual service principal limit" for all the subscription's principals. Free and trial
 * subscriptions may have lower limits. Before, the limits were 12,000 reads and 1,200 writes an hour
 * per ARM instance, which counts such as 11999 still show.
 *
 * Every answer shows what is left of its own bucket: x-ms-ratelimit-remaining-subscription-reads on
 * reads, -writes on writes, -deletes on deletes, -tenant-reads and -writes, and where a service
 * overrides the defaults -subscription-resource-requests and -resource-entities-read (and the
 * tenant's), counts with no limit or reset (ARM_DOC, "Remaining requests"). The global buckets show
 * as -subscription-global-reads, -writes and -deletes (GLOBAL_HEADERS_DOC; 249 beside 3749 on one
 * read: 250 and 15 times it, less one). A resource provider shows its own policies in
 * x-ms-ratelimit-remaining-resource, "<source RP>/<policy or bucket>;<count>", one per policy
 * (COMPUTE_DOC: "Microsoft.Compute/HighCostGet3Min;107").
 *
 * Azure Resource Graph (/providers/Microsoft.ResourceGraph/...) "sets its own limit and reset rate"
 * (ARM_DOC): a quota per user and time window ("up to 15 queries within every 5-second window"),
 * shown on every answer as x-ms-user-quota-remaining and x-ms-user-quota-resets-after, "(hh:mm:ss):
 * The time duration until a user's quota consumption is reset" (RESOURCE_GRAPH_DOC). Its queries are
 * a scope of their own, so that a spent query quota holds back no other call.
 *
 * Over a limit: "429 Too many requests", with "a Retry-After value, which specifies the number of
 * seconds your application should wait" (ARM_DOC), whether ARM or the provider refused (COMPUTE_DOC:
 * if ARM's count is near 0 it is ARM's limit, "Otherwise, the throttling is coming from the target
 * resource provider"). But "Some resource providers return 429 to report a temporary problem ... the
 * network resource provider returns 429 with the RetryableErrorDueToAnotherOperation error code when
 * the target resource is locked by another operation" (ARM_DOC): that is contention, retried after
 * the wait, holding back no other call. 401 and 403 (AuthorizationFailed...) are access errors, final.
 */

/** A documented bucket behind a remaining-count header: its size and refill per second (ARM_DOC). */
interface ArmBucket {
  header: string;
  size: number;
  refillPerSecond: number;
}

const PREFIX = "x-ms-ratelimit-remaining-";
const GLOBAL_TIMES = 15;
const ARM_BUCKETS: readonly ArmBucket[] = [
  { header: `${PREFIX}subscription-reads`, size: 250, refillPerSecond: 25 },
  { header: `${PREFIX}subscription-writes`, size: 200, refillPerSecond: 10 },
  { header: `${PREFIX}subscription-deletes`, size: 200, refillPerSecond: 10 },
  { header: `${PREFIX}subscription-global-reads`, size: 250 * GLOBAL_TIMES, refillPerSecond: 25 * GLOBAL_TIMES },
  { header: `${PREFIX}subscription-global-writes`, size: 200 * GLOBAL_TIMES, refillPerSecond: 10 * GLOBAL_TIMES },
  { header: `${PREFIX}subscription-global-deletes`, size: 200 * GLOBAL_TIMES, refillPerSecond: 10 * GLOBAL_TIMES },
  { header: `${PREFIX}tenant-reads`, size: 250, refillPerSecond: 25 },
  { header: `${PREFIX}tenant-writes`, size: 200, refillPerSecond: 10 },
];
/** Counts of limits a service set for itself: no documented size (ARM_DOC). */
const OVERRIDE_HEADERS: readonly string[] = [
  `${PREFIX}subscription-resource-requests`,
  `${PREFIX}subscription-resource-entities-read`,
  `${PREFIX}tenant-resource-requests`,
  `${PREFIX}tenant-resource-entities-read`,
];
const RESOURCE_HEADER = `${PREFIX}resource`;
const RESOURCE_ENTRY = /^\s*([^;,]{1,200});(\d{1,15})\s*$/;
const SUBSCRIPTION_PATH = /^\/subscriptions\/([^/?#]+)/i;
const RESOURCE_GRAPH_PATH = /^\/providers\/microsoft\.resourcegraph\//i;
const GRAPH_REMAINING = "x-ms-user-quota-remaining";
const GRAPH_RESETS_AFTER = "x-ms-user-quota-resets-after";
/** hh:mm:ss, as Resource Graph writes the time to its reset (RESOURCE_GRAPH_DOC: "00:00:03"). */
const CLOCK_DURATION = /^(\d{1,4}):([0-5]\d):([0-5]\d(?:\.\d{1,7})?)$/;
const LOCKED_CODE = "RetryableErrorDueToAnotherOperation";

/** The operation types ARM counts apart (ARM_DOC): GET and HEAD read, DELETE deletes, the rest write. */
function operationType(method: string): "reads" | "writes" | "deletes" {
  if (method === "GET" || method === "HEAD") return "reads";
  return method === "DELETE" ? "deletes" : "writes";
}

/** The bucket a request counts against, known before it is sent: its subscription (or the tenant) and its operation type. */
export function armScopeOf(method: string, path: string): ScopeParts {
  if (RESOURCE_GRAPH_PATH.test(path)) return { armScope: "resourcegraph", operation: "queries" };
  const subscription = SUBSCRIPTION_PATH.exec(path)?.[1];
  return { armScope: subscription === undefined ? "tenant" : `subscriptions/${subscription.toLowerCase()}`, operation: operationType(method.toUpperCase()) };
}

/**
 * A documented bucket's count, with its size and refill as the pacing estimate. A count above the
 * bucket's size is the hourly count of the older limits (11999 of 12,000), whose limit per ARM
 * instance says nothing of the whole: shown as a count only.
 */
function bucketBudget(ctx: SignalContext, bucket: ArmBucket): Budget | null {
  const remaining = readCount(ctx, bucket.header);
  if (remaining === null) return null;
  if (remaining > bucket.size) return { remaining, limit: null, resetAt: null, source: bucket.header };
  return { remaining, limit: bucket.size, resetAt: null, source: bucket.header, restorePerSecond: bucket.refillPerSecond, restoreEstimated: true };
}

/** x-ms-ratelimit-remaining-resource: one count per provider policy, "Microsoft.Compute/HighCostGet3Min;107" (COMPUTE_DOC). */
function resourceBudgets(ctx: SignalContext): Budget[] {
  const raw = ctx.header(RESOURCE_HEADER);
  if (raw === undefined) return [];
  const budgets: Budget[] = [];
  for (const entry of raw.split(",")) {
    const match = RESOURCE_ENTRY.exec(entry);
    if (!match) {
      if (entry.trim() !== "") ctx.ignore(RESOURCE_HEADER, entry.trim(), "not <provider>/<policy>;<count>");
      continue;
    }
    budgets.push({ remaining: Number(match[2]), limit: null, resetAt: null, source: RESOURCE_HEADER });
  }
  return budgets;
}

/** x-ms-user-quota-resets-after, hh:mm:ss (RESOURCE_GRAPH_DOC), as a wait; null with a recorded reason when unreadable. */
function readResetsAfter(ctx: SignalContext): Wait | null {
  const raw = ctx.header(GRAPH_RESETS_AFTER);
  if (raw === undefined) return null;
  const match = CLOCK_DURATION.exec(raw.trim());
  if (!match) {
    ctx.ignore(GRAPH_RESETS_AFTER, raw, "not hh:mm:ss");
    return null;
  }
  const seconds = Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]);
  return { waitMs: Math.ceil(seconds * 1000), source: GRAPH_RESETS_AFTER };
}

/** Resource Graph's per-user query quota: what is left and when the window resets (RESOURCE_GRAPH_DOC). */
function resourceGraphQuota(ctx: SignalContext): { budget: Budget | null; reset: Wait | null } {
  const reset = readResetsAfter(ctx);
  const remaining = readCount(ctx, GRAPH_REMAINING);
  if (remaining === null) return { budget: null, reset };
  return { budget: { remaining, limit: null, resetAt: reset ? isoAfter(ctx, reset.waitMs) : null, source: GRAPH_REMAINING }, reset };
}

function readArmBudgets(ctx: SignalContext): Budget[] {
  const budgets: Budget[] = [];
  for (const bucket of ARM_BUCKETS) {
    const budget = bucketBudget(ctx, bucket);
    if (budget) budgets.push(budget);
  }
  for (const header of OVERRIDE_HEADERS) {
    const remaining = readCount(ctx, header);
    if (remaining !== null) budgets.push({ remaining, limit: null, resetAt: null, source: header });
  }
  return budgets.concat(resourceBudgets(ctx));
}

/** Whose limit a 429 is: a spent count names it; with none spent it is the resource provider's (COMPUTE_DOC). */
function whoseLimit(ctx: SignalContext, spent: Budget | undefined): string {
  if (spent === undefined) return "a limit of the resource provider (ARM's counts show room)";
  if (spent.source === GRAPH_REMAINING) return `the user's Resource Graph query quota for this window (${GRAPH_REMAINING} 0)`;
  if (spent.source === RESOURCE_HEADER) return `the resource provider's policy (${RESOURCE_HEADER} 0)`;
  if (spent.source.includes("-global-")) return `the subscription's global bucket, shared by all its principals (${spent.source} 0)`;
  if (spent.source.includes("-resource-")) return `a limit the service set for this resource type (${spent.source} 0)`;
  if (spent.source.includes("-tenant-")) return `the tenant's bucket (${spent.source} 0)`;
  return `the ${operationType(ctx.method)} bucket of this principal in the subscription (${spent.source} 0)`;
}

function interpretArm(ctx: SignalContext): Interpretation {
  const graph = resourceGraphQuota(ctx);
  const budgets = readArmBudgets(ctx);
  if (graph.budget) budgets.push(graph.budget);
  // A spent query quota's reset is a floor under the server's wait, as Retry-After is.
  const wait = longestWait(readWait(ctx), graph.budget?.remaining === 0 ? graph.reset : null);
  const budget = tightestBudget(budgets);
  const scope = armScopeOf(ctx.method, ctx.path);
  const code = asString(field(ctx.body, "error", "code")) ?? asString(field(ctx.body, "code"));
  if (code === LOCKED_CODE) {
    return retryableBy("contention", wait, {
      writeNotProcessed: true,
      scope,
      budget,
      reason: `Azure Resource Manager ${ctx.status} ${LOCKED_CODE}: the target resource is locked by another operation, not a rate limit; the request was refused; retry after the wait; ${describeWait(wait)}.`,
    });
  }
  if (ctx.status !== 429) return interpretStatus(ctx, { retryAfter: readWait(ctx), budget, reset: graph.reset }, budget === null ? undefined : scope);
  const spent = budgets.find((b) => b.remaining === 0);
  return throttledBy("burst", wait, {
    scope,
    budget,
    reason: `Azure Resource Manager 429${code ? ` ${code}` : ""}: ${whoseLimit(ctx, spent)}; ${describeWait(wait)}.`,
  });
}

export const azure: Dialect = {
  id: "azure",
  label: "Azure Resource Manager",
  hosts: ["management.azure.com", "management.usgovcloudapi.net", "management.chinacloudapi.cn"],
  docs: [ARM_DOC, COMPUTE_DOC, RESOURCE_GRAPH_DOC, GLOBAL_HEADERS_DOC, SDK_SOURCE],
  interpret: interpretArm,
  requestScope: ({ method, path }) => armScopeOf(method, path),
};

// ---------------------------------------------------------------------------------------------
// Azure Storage
// ---------------------------------------------------------------------------------------------
/*
 * A storage account has scalability targets (requests per second, ingress and egress for the
 * account; a rate per partition: a blob, a queue, a table partition), and "When your application
 * reaches the limit of what a partition can handle for your workload, Azure Storage begins to return
 * error code 503 (Server Busy) or error code 500 (Operation Timeout) responses. If 503 errors are
 * occurring, consider modifying your application to use an exponential backoff policy for retries"
 * (STORAGE_TARGETS_DOC). The error code is in the x-ms-error-code header ("the storage error code
 * string", STORAGE_STATUS_DOC) and in the body: XML <Error><Code> for Blob, Queue and File, JSON
 * odata.error.code for Table, error.code for Data Lake (dfs). The messages of ServerBusy
 * (STORAGE_ERRORS_DOC) tell the account's limits ("Ingress is over the account limit.", "Egress ...",
 * "Operations per second is over the account limit.") from a busy partition ("The server is
 * currently unable to receive requests. Please retry your request."); OperationTimedOut is "The
 * operation could not be completed within the permitted time.".
 *
 * So ServerBusy is a burst throttle of the account (its host), waited as the server says or with
 * backoff; OperationTimedOut is a throttle too, as the targets doc says, but of kind "server": it
 * may also be a slow operation that began, so a write is not taken for refused. InternalError (500)
 * and other 5xx are transient as the generic dialect reads them; 403 (AuthenticationFailed,
 * AuthorizationPermissionMismatch) is final.
 */
const SERVER_BUSY = "ServerBusy";
const OPERATION_TIMED_OUT = "OperationTimedOut";
const STORAGE_SCAN_CHARS = 4096;
const XML_CODE = /<Code>([^<]{1,128})<\/Code>/;
const XML_MESSAGE = /<Message>([^<]{0,512})<\/Message>/;
const ACCOUNT_LIMIT = /over the account limit/i;

interface StorageError {
  code: string | null;
  message: string;
}

/** The code from x-ms-error-code, else the body (XML, Table's odata.error, dfs's error); and the message. */
function readStorageError(ctx: SignalContext): StorageError {
  const xml = typeof ctx.body === "string" ? ctx.bodyText.slice(0, STORAGE_SCAN_CHARS) : "";
  const jsonMessage = asString(field(ctx.body, "odata.error", "message", "value")) ?? asString(field(ctx.body, "error", "message"));
  const message = (jsonMessage ?? XML_MESSAGE.exec(xml)?.[1] ?? "").trim();
  const header = ctx.header("x-ms-error-code")?.trim();
  const bodyCode = asString(field(ctx.body, "odata.error", "code")) ?? asString(field(ctx.body, "error", "code")) ?? XML_CODE.exec(xml)?.[1];
  const code = header || bodyCode?.trim() || null;
  return { code, message };
}

function interpretStorage(ctx: SignalContext): Interpretation {
  const wait = readWait(ctx);
  const { code, message } = readStorageError(ctx);
  const said = message ? ` ("${message}")` : "";
  if (code === SERVER_BUSY) {
    const what = ACCOUNT_LIMIT.test(message) ? "the storage account's scalability target is exceeded" : "the partition (or the server) is busy";
    return throttledBy("burst", wait, {
      scope: {},
      reason: `Azure Storage ${ctx.status} ${SERVER_BUSY}${said}: ${what}; ${describeWait(wait)}.`,
    });
  }
  if (code === OPERATION_TIMED_OUT) {
    return throttledBy("server", wait, {
      scope: {},
      reason: `Azure Storage ${ctx.status} ${OPERATION_TIMED_OUT}${said}: what a partition at its limit answers (or a slow operation); retry with backoff; ${describeWait(wait)}.`,
    });
  }
  return interpretStatus(ctx, { retryAfter: wait, budget: null, reset: null });
}

const STORAGE_SERVICES = ["blob", "queue", "table", "file", "dfs"];
const STORAGE_CLOUDS = ["core.windows.net", "core.usgovcloudapi.net", "core.chinacloudapi.cn"];

export const azureStorage: Dialect = {
  id: "azure-storage",
  label: "Azure Storage",
  hosts: STORAGE_CLOUDS.flatMap((cloud) => STORAGE_SERVICES.map((service) => `.${service}.${cloud}`)),
  docs: [STORAGE_TARGETS_DOC, STORAGE_ERRORS_DOC, STORAGE_STATUS_DOC, SDK_SOURCE],
  interpret: interpretStorage,
};
