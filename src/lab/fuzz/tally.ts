/** Counts what a target saw: inputs, throws, broken properties, and a few examples to reproduce. */
import type { FuzzResult } from "./types";

const MAX_EXAMPLES = 5;
const MAX_EXAMPLE_TEXT = 300;

/** True for an ISO 8601 string that a Date reads back to the same text. */
export function isValidIso(value: unknown): boolean {
  if (typeof value !== "string") return false;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && new Date(ms).toISOString() === value;
}

/** A non-negative safe integer: the only shape a wait may take. */
export function isWholeWait(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** Printable, bounded text for an example (long runs are shortened, never the point of the example). */
export function brief(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value, (_key, v: unknown) => (typeof v === "string" && v.length > 80 ? `${v.slice(0, 40)}…(${v.length} chars)` : v)) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > MAX_EXAMPLE_TEXT ? `${text.slice(0, MAX_EXAMPLE_TEXT)}…` : text;
}

export class Tally {
  private inputs = 0;
  private throws = 0;
  private violations = 0;
  private waitsBelow = 0;
  private readonly examples: string[] = [];

  constructor(private readonly reportsWaits: boolean) {}

  private note(kind: string, input: unknown, detail: string): void {
    if (this.examples.length < MAX_EXAMPLES) this.examples.push(`${kind}: ${detail} | input ${brief(input)}`);
  }

  /** Runs one input: `check` returns the properties it found broken (empty when all hold). */
  attempt(input: unknown, check: () => string[]): void {
    this.inputs++;
    let broken: string[];
    try {
      broken = check();
    } catch (error) {
      this.throws++;
      this.note("throw", input, error instanceof Error ? `${error.name}: ${error.message}` : String(error));
      return;
    }
    if (broken.length > 0) {
      this.violations++;
      this.note("violation", input, broken.join("; "));
    }
  }

  /** Records a wait shorter than a valid server wait present in the input (also a violation). */
  waitBelowServerWait(input: unknown, detail: string): void {
    this.waitsBelow++;
    this.note("wait below server wait", input, detail);
  }

  result(): FuzzResult {
    const base = { inputs: this.inputs, throws: this.throws, violations: this.violations, examples: [...this.examples] };
    return this.reportsWaits ? { ...base, waitsBelowServerWait: this.waitsBelow } : base;
  }
}
