import type { SignalContext } from "./context";
import type { Interpretation, ScopeParts } from "./types";

/** What is known of a request before it is sent. */
export interface RequestShape {
  method: string;
  host: string;
  path: string;
}

/**
 * A provider dialect: how one API says "not yet". One file per provider under dialects/,
 * each rule citing the provider's documentation.
 */
export interface Dialect {
  /** Stable id, used in verdicts, the `provider` input and the governors' scope names. */
  id: string;
  label: string;
  /** Host names this dialect answers for; a leading "." matches any subdomain. */
  hosts: readonly string[];
  /** The documentation the rules come from. */
  docs: readonly string[];
  interpret(ctx: SignalContext): Interpretation;
  /**
   * The dialect has something to say of a 2xx beyond "not throttled": a throttle inside a success
   * body (Shopify and Jobber GraphQL THROTTLED, GitHub GraphQL RATE_LIMITED, Stripe's rate_limit
   * code, Slack ok:false) or the scope a success belongs to (a store, an org, an account). Every
   * success of such a dialect gets its full reading.
   */
  readsSuccesses?: boolean;
  /**
   * The scope parts a request will belong to, known before any response (GitHub's resource from
   * the path, Slack's method), so that a spent budget of one part does not hold back another.
   * Absent when the dialect cannot tell before the server answers.
   */
  requestScope?(request: RequestShape): ScopeParts;
}

export function hostMatches(host: string, pattern: string): boolean {
  if (pattern.startsWith(".")) return host.endsWith(pattern) || host === pattern.slice(1);
  return host === pattern;
}
