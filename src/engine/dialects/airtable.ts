/**
 * Airtable. STUB: reads the generic signals only until its own rules are written.
 * https://airtable.com/developers/web/api/rate-limits
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const airtable: Dialect = {
  id: "airtable",
  label: "Airtable",
  hosts: ["api.airtable.com"],
  docs: ["https://airtable.com/developers/web/api/rate-limits"],
  interpret: interpretGeneric,
};
