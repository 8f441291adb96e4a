import { createContext, readUrl, type SignalContext } from "./context";
import type { Dialect } from "./dialect";
import { dialectById, dialectForHost, generic } from "./dialects";
import { interpretGeneric } from "./dialects/generic";
import { readExplicitWaits, type Wait } from "./signals";
import { DEFAULT_MAX_SERVER_WAIT_MS, describeDuration, epochOfIso, saturatingWholeMs } from "./time";
import type { Budget, ClassifyInput, ClassifyOptions, Interpretation, ScopeParts, Verdict } from "./types";

/** Picks the dialect: the one named by the caller, else the one that claims the host. */
export function pickDialect(
  input: Pick<ClassifyInput, "provider" | "request">,
  host: string = readUrl(input.request?.url).host,
): { dialect: Dialect; unknownProvider: string | null } {
  const named = input.provider?.trim();
  if (named && named.toLowerCase() !== "auto") {
    const dialect = dialectById(named);
    if (dialect) return { dialect, unknownProvider: null };
    return { dialect: generic, unknownProvider: named };
  }
  return { dialect: dialectForHost(host), unknownProvider: null };
}

/**
 * The scope parts a request will belong to before it is sent (see Dialect.requestScope), or an
 * empty object when the dialect cannot tell. Pure, never throws.
 */
export function requestScopeFor(input: Pick<ClassifyInput, "provider" | "request">, parsed?: { host: string; path: string }): ScopeParts {
  const { host, path } = parsed ?? readUrl(input.request?.url);
  const { dialect } = pickDialect(input, host);
  if (!dialect.requestScope) return {};
  try {
    return dialect.requestScope({ method: (input.request?.method ?? "GET").toUpperCase(), host, path });
  } catch {
    return {};
  }
}

/** The dialect's wait, if it is one: a finite, non-negative number of ms, rounded up. */
function dialectWait(ctx: SignalContext, interpretation: Interpretation): Wait | null {
  const { minWaitMs, waitSource } = interpretation;
  if (minWaitMs === null) return null;
  const waitMs = Number.isFinite(minWaitMs) ? saturatingWholeMs(minWaitMs) : null;
  if (waitMs === null) {
    ctx.ignore("wait", String(minWaitMs), "not a finite, non-negative wait");
    return null;
  }
  return { waitMs, source: waitSource ?? "dialect" };
}

interface SettledWait {
  wait: Wait | null;
  waitAboveCapMs: number | null;
  reasonNote: string;
}

/**
 * The one place every dialect's wait passes through:
 * - explicit wait headers (Retry-After, retry-after-ms, x-amz-retry-after) are a floor under
 *   whatever the dialect read, for any answer that waits at all (a throttle or a retryable
 *   failure): a reset of 39 s never wins over a Retry-After of 3600 s (RFC 9110 §10.2.3: the
 *   client "ought to wait" that long);
 * - a wait above the cap is not taken at its word: it is reported, and plan() defers.
 */
function settleWait(ctx: SignalContext, interpretation: Interpretation, maxServerWaitMs: number): SettledWait {
  let wait = dialectWait(ctx, interpretation);
  let reasonNote = "";
  if (interpretation.throttled || interpretation.retryable) {
    const explicit = readExplicitWaits(ctx);
    if (explicit && (wait === null || explicit.waitMs > wait.waitMs)) {
      if (wait !== null) {
        reasonNote = ` The server's ${explicit.source} asks for ${describeDuration(explicit.waitMs)}, longer than ${wait.source}; the longer wait is used.`;
      }
      wait = explicit;
    }
  }
  if (wait !== null && wait.waitMs > maxServerWaitMs) {
    const shown = ctx.header(wait.source) ?? `${wait.waitMs} ms`;
    ctx.ignore(wait.source, shown, `asks for ${describeDuration(wait.waitMs)}, above the cap of ${describeDuration(maxServerWaitMs)} (maxServerWaitMs): deferred, never slept`);
    return {
      wait: null,
      waitAboveCapMs: wait.waitMs,
      reasonNote: ` The server's wait (${wait.source}, ${describeDuration(wait.waitMs)}) is above the cap of ${describeDuration(maxServerWaitMs)}, so the work is deferred rather than slept.`,
    };
  }
  return { wait, waitAboveCapMs: null, reasonNote };
}

/** A budget whose reset lies beyond the cap keeps its counts but not that reset (nothing would pace to it). */
function cappedBudget(ctx: SignalContext, budget: Budget | null, maxServerWaitMs: number): Budget | null {
  if (!budget || budget.resetAt === null) return budget;
  const resetInMs = epochOfIso(budget.resetAt) - ctx.nowMs;
  if (!(resetInMs > maxServerWaitMs)) return budget;
  ctx.ignore(`${budget.source} reset`, budget.resetAt, `lies ${describeDuration(resetInMs)} ahead, beyond the cap of ${describeDuration(maxServerWaitMs)}; not used for pacing`);
  return { ...budget, resetAt: null };
}

function capOption(value: number | undefined): number {
  return typeof value === "number" && value >= 0 ? value : DEFAULT_MAX_SERVER_WAIT_MS;
}

/**
 * What a response means: throttled or not, retryable or not, what kind of limit, the wait it
 * implies, the scope it applies to and the budget it shows. Pure: `nowMs` is the only clock, and
 * the function never throws on any status, header map or body.
 */
/** A header name that may carry a rate-limit signal (a budget, a wait, the server's retry word). */
const RATE_SIGNAL_NAME = /rate|limit|retry|quota|usage|throttl|remaining|reset|cost|budget|bucket|concurren|policy/i;

/**
 * Most answers are plain successes: a 2xx with no header that could speak of a limit, from a
 * dialect that never hides a throttle in a success body. Their verdict is known without building a
 * context; test/engine/quiet-success.test.ts checks that it is exactly what the full reading gives.
 */
function quietSuccess(input: ClassifyInput, host: string | undefined): Verdict | null {
  const status = input.response.status;
  if (!(Number.isInteger(status) && status >= 200 && status < 300)) return null;
  const headers = input.response.headers;
  if (headers) for (const name in headers) if (RATE_SIGNAL_NAME.test(name)) return null;
  const { dialect, unknownProvider } = pickDialect(input, host);
  if (unknownProvider !== null || dialect.readsSuccesses) return null;
  return {
    provider: dialect.id,
    status,
    throttled: false,
    retryable: false,
    limitType: "none",
    minWaitMs: null,
    waitSource: null,
    retryAllowed: null,
    writeNotProcessed: false,
    scope: {},
    budget: null,
    ignored: [],
    deviations: [],
    reason: `${status}: not throttled.`,
  };
}

export function classify(input: ClassifyInput, options: ClassifyOptions): Verdict {
  if (!Number.isFinite(options.nowMs)) throw new RangeError("classify: options.nowMs must be a finite epoch-milliseconds number");
  const quiet = quietSuccess(input, options.requestUrlParts?.host);
  if (quiet) return quiet;
  return classifyFully(input, options);
}

/** The full reading: the context, the dialect's interpretation, the wait floor and the caps. */
export function classifyFully(input: ClassifyInput, options: ClassifyOptions): Verdict {
  const maxServerWaitMs = capOption(options.maxServerWaitMs);
  const offset = options.serverClockOffsetMs;
  const ctx = createContext(input, options.nowMs, offset !== undefined && Number.isFinite(offset) ? offset : undefined, options.requestUrlParts);
  const { dialect, unknownProvider } = pickDialect(input, ctx.host);
  if (unknownProvider !== null) ctx.ignore("provider", unknownProvider, "no dialect has this id; the generic rules were used");

  let interpretation: Interpretation;
  try {
    interpretation = dialect.interpret(ctx);
  } catch (error) {
    // A dialect bug must not take the client down: fall back to the generic reading and say so.
    ctx.ignore("dialect", dialect.id, `the dialect failed (${error instanceof Error ? error.message : String(error)}); generic rules used`);
    interpretation = interpretGeneric(ctx);
  }

  const settled = settleWait(ctx, interpretation, maxServerWaitMs);
  const budget = cappedBudget(ctx, interpretation.budget ?? null, maxServerWaitMs);
  return {
    provider: dialect.id,
    status: ctx.status,
    throttled: interpretation.throttled,
    retryable: interpretation.retryable,
    limitType: interpretation.limitType,
    minWaitMs: settled.wait?.waitMs ?? null,
    waitSource: settled.wait?.source ?? null,
    retryAllowed: interpretation.retryAllowed ?? null,
    writeNotProcessed: interpretation.writeNotProcessed ?? false,
    scope: interpretation.scope ?? {},
    budget,
    ignored: ctx.ignored,
    deviations: ctx.deviations,
    reason: `${interpretation.reason}${settled.reasonNote}`,
    ...(settled.waitAboveCapMs === null ? {} : { waitAboveCapMs: settled.waitAboveCapMs }),
  };
}
