/**
 * Asana. STUB: reads the generic signals only until its own rules are written.
 * https://developers.asana.com/docs/rate-limits
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const asana: Dialect = {
  id: "asana",
  label: "Asana",
  hosts: ["app.asana.com"],
  docs: ["https://developers.asana.com/docs/rate-limits"],
  interpret: interpretGeneric,
};
