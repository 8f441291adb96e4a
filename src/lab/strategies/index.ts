/** Every strategy the lab knows, by name, in the order the tables show them. */
import { axiosRetryStrategy } from "./axios-retry";
import type { Strategy } from "./common";
import { oursBatch, oursLoop } from "./component-steps";
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
  oursLoop,
  oursBatch,
];

/** The component's own steps run over sockets only: a scenario names them (with "clock": "real"); they are not run by default. */
const REAL_CLOCK_ONLY: readonly Strategy[] = [oursLoop, oursBatch];

export const STRATEGY_NAMES: readonly string[] = STRATEGIES.map((s) => s.name);
/** What a scenario that names no strategies runs. */
export const DEFAULT_STRATEGY_NAMES: readonly string[] = STRATEGIES.filter((s) => !REAL_CLOCK_ONLY.includes(s)).map((s) => s.name);

export function strategyByName(name: string): Strategy | undefined {
  return STRATEGIES.find((s) => s.name === name);
}
