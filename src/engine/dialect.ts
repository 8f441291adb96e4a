import type { SignalContext } from "./context";
import type { Interpretation } from "./types";

/**
 * A provider dialect: how one API says "not yet". One file per provider under dialects/,
 * each rule citing the provider's documentation.
 */
export interface Dialect {
  /** Stable id, used in verdicts, the `provider` input and ledger scopes. */
  id: string;
  label: string;
  /** Host names this dialect answers for; a leading "." matches any subdomain. */
  hosts: readonly string[];
  /** The documentation the rules come from. */
  docs: readonly string[];
  interpret(ctx: SignalContext): Interpretation;
}

export function hostMatches(host: string, pattern: string): boolean {
  if (pattern.startsWith(".")) return host.endsWith(pattern) || host === pattern.slice(1);
  return host === pattern;
}
