/**
 * The fuzz targets and their share of a run. To add one (the store...), write a module exporting
 * a FuzzTarget and list it here with its weight.
 */
import { classifyTarget } from "./targets/classify";
import { governorTarget } from "./targets/governor";
import { graphqlTarget } from "./targets/graphql";
import { headerParsersTarget } from "./targets/header-parsers";
import { planTarget } from "./targets/plan";
import { name as redactorName, run as runRedactor } from "./targets/redactor";
import { writeSafetyTarget } from "./targets/write-safety";
import type { FuzzResult, FuzzTarget } from "./types";

export type { FuzzResult, FuzzTarget } from "./types";

/** The redactor's target runs the component's own redactor (its optional third argument is for tests). */
const redactorTarget: FuzzTarget = { name: redactorName, run: (seed, count) => runRedactor(seed, count) };

/**
 * Each target with its share of the inputs of a run (the shares sum to 1). A governor input is a
 * whole sequence of up to 24 steps and a redactor input builds and searches every encoding of its
 * secrets, about 0.4 ms and 1 ms each against 0.05 to 0.09 ms for the others, so their shares are
 * smaller for a run of comparable length per target.
 */
export const fuzzTargets: readonly { target: FuzzTarget; share: number }[] = [
  { target: headerParsersTarget, share: 0.38 },
  { target: classifyTarget, share: 0.24 },
  { target: planTarget, share: 0.19 },
  { target: writeSafetyTarget, share: 0.07 },
  { target: graphqlTarget, share: 0.06 },
  { target: governorTarget, share: 0.04 },
  { target: redactorTarget, share: 0.02 },
];

/** How many of `total` inputs each selected target gets: its share of the selected shares (at least one). */
export function inputsPerTarget(total: number, selected: readonly { share: number }[] = fuzzTargets): number[] {
  const shareSum = selected.reduce((sum, t) => sum + t.share, 0);
  return selected.map(({ share }) => Math.max(1, Math.round((total * share) / shareSum)));
}

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
