/**
 * OpenAI. STUB: reads the generic signals only until its own rules are written.
 * https://platform.openai.com/docs/guides/rate-limits
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const openai: Dialect = {
  id: "openai",
  label: "OpenAI",
  hosts: ["api.openai.com"],
  docs: ["https://platform.openai.com/docs/guides/rate-limits"],
  interpret: interpretGeneric,
};
