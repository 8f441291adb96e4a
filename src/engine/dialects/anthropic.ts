/**
 * Anthropic. STUB: reads the generic signals only until its own rules are written.
 * https://docs.anthropic.com/en/api/rate-limits
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const anthropic: Dialect = {
  id: "anthropic",
  label: "Anthropic",
  hosts: ["api.anthropic.com"],
  docs: ["https://docs.anthropic.com/en/api/rate-limits"],
  interpret: interpretGeneric,
};
