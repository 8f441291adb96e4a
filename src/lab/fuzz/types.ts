/**
 * A fuzz target: a name and a run over `count` seeded inputs. The interface is kept small so that
 * targets for other parts (the store, the redactor) plug in beside the engine's.
 */
export interface FuzzResult {
  inputs: number;
  /** Inputs on which the code under test threw. Always a failure. */
  throws: number;
  /** Inputs that broke a stated property. Always a failure. */
  violations: number;
  /** A few failing inputs, short and printable, for a person to reproduce. */
  examples: string[];
  /** For targets that produce waits: how many were shorter than a valid server wait present in the input. */
  waitsBelowServerWait?: number;
}

export interface FuzzTarget {
  name: string;
  run(seed: number, count: number): FuzzResult;
}
