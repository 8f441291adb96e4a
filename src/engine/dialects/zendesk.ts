/**
 * Zendesk. STUB: reads the generic signals only until its own rules are written.
 * https://developer.zendesk.com/api-reference/introduction/rate-limits/
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const zendesk: Dialect = {
  id: "zendesk",
  label: "Zendesk",
  hosts: [".zendesk.com"],
  docs: ["https://developer.zendesk.com/api-reference/introduction/rate-limits/"],
  interpret: interpretGeneric,
};
