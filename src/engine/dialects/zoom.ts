/**
 * Zoom. STUB: reads the generic signals only until its own rules are written.
 * https://developers.zoom.us/docs/api/rate-limits/
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const zoom: Dialect = {
  id: "zoom",
  label: "Zoom",
  hosts: ["api.zoom.us"],
  docs: ["https://developers.zoom.us/docs/api/rate-limits/"],
  interpret: interpretGeneric,
};
