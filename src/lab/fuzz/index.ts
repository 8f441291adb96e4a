/**
 * The fuzz targets and their share of a run. To add one (the store, the redactor...), write a
 * module exporting a FuzzTarget and list it here with its weight.
 */
import { classifyTarget } from "./targets/classify";
import { graphqlTarget } from "./targets/graphql";
import { headerParsersTarget } from "./targets/header-parsers";
import { planTarget } from "./targets/plan";
import { writeSafetyTarget } from "./targets/write-safety";
import type { FuzzResult, FuzzTarget } from "./types";

export type { FuzzResult, FuzzTarget } from "./types";

/** Each target with its share of the inputs of a run (the shares sum to 1). */
export const fuzzTargets: readonly { target: FuzzTarget; share: number }[] = [
  { target: headerParsersTarget, share: 0.4 },
  { target: classifyTarget, share: 0.25 },
  { target: planTarget, share: 0.2 },
  { target: writeSafetyTarget, share: 0.08 },
  { target: graphqlTarget, share: 0.07 },
];

export interface TargetRun extends FuzzResult {
  name: string;
  elapsedMs: number;
}

/** Runs one target with its own seed (derived from the run's), timing it with the given clock. */
export function runTarget(target: FuzzTarget, seed: number, count: number, nowMs: () => number): TargetRun {
  const startedMs = nowMs();
  const result = target.run(seed, count);
  return { name: target.name, ...result, elapsedMs: nowMs() - startedMs };
}

/** True when a run found nothing: no throw, no broken property, no wait below a server wait. */
export function isClean(run: FuzzResult): boolean {
  return run.throws === 0 && run.violations === 0 && (run.waitsBelowServerWait ?? 0) === 0;
}
