import { createContext, readUrl } from "./context";
import type { Dialect } from "./dialect";
import { dialectById, dialectForHost, generic } from "./dialects";
import { interpretGeneric } from "./dialects/generic";
import type { ClassifyInput, ClassifyOptions, Interpretation, ScopeParts, Verdict } from "./types";

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
export function requestScopeFor(input: Pick<ClassifyInput, "provider" | "request">): ScopeParts {
  const { host, path } = readUrl(input.request?.url);
  const { dialect } = pickDialect(input, host);
  if (!dialect.requestScope) return {};
  try {
    return dialect.requestScope({ method: (input.request?.method ?? "GET").toUpperCase(), host, path });
  } catch {
    return {};
  }
}

/**
 * What a response means: throttled or not, retryable or not, what kind of limit, the wait it
 * implies, the scope it applies to and the budget it shows. Pure: `nowMs` is the only clock, and
 * the function never throws on any status, header map or body.
 */
export function classify(input: ClassifyInput, options: ClassifyOptions): Verdict {
  if (!Number.isFinite(options.nowMs)) throw new RangeError("classify: options.nowMs must be a finite epoch-milliseconds number");
  const ctx = createContext(input, options.nowMs);
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

  let minWaitMs = interpretation.minWaitMs;
  if (minWaitMs !== null && !(Number.isFinite(minWaitMs) && minWaitMs >= 0)) {
    ctx.ignore("wait", String(minWaitMs), "not a finite, non-negative wait");
    minWaitMs = null;
  }
  if (minWaitMs !== null) minWaitMs = Math.ceil(minWaitMs);
  if (minWaitMs !== null && !Number.isSafeInteger(minWaitMs)) minWaitMs = null;

  return {
    provider: dialect.id,
    status: ctx.status,
    throttled: interpretation.throttled,
    retryable: interpretation.retryable,
    limitType: interpretation.limitType,
    minWaitMs,
    waitSource: minWaitMs === null ? null : interpretation.waitSource,
    retryAllowed: interpretation.retryAllowed ?? null,
    writeNotProcessed: interpretation.writeNotProcessed ?? false,
    scope: interpretation.scope ?? {},
    budget: interpretation.budget ?? null,
    ignored: ctx.ignored,
    deviations: ctx.deviations,
    reason: interpretation.reason,
  };
}
