/** Every strategy the lab knows, by name, in the order the tables show them. */
import { axiosRetryStrategy } from "./axios-retry";
import type { Strategy } from "./common";
import { exponential, fixedSleep, fullJitter } from "./hand-retry";
import { headerFirst } from "./header-first";
import { naive } from "./naive";
import { ours } from "./ours";
import { slidingLimiter } from "./sliding-limiter";
import { spectralDefault, spectralRawRequest, spectralRetriesOnly } from "./spectral";

export const STRATEGIES: readonly Strategy[] = [
  naive,
  fixedSleep,
  exponential,
  fullJitter,
  axiosRetryStrategy,
  spectralRawRequest,
  spectralDefault,
  spectralRetriesOnly,
  headerFirst,
  slidingLimiter,
  ours,
];

export const STRATEGY_NAMES: readonly string[] = STRATEGIES.map((s) => s.name);

export function strategyByName(name: string): Strategy | undefined {
  return STRATEGIES.find((s) => s.name === name);
}
