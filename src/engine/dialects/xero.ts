/**
 * Xero. STUB: reads the generic signals only until its own rules are written.
 * https://developer.xero.com/documentation/guides/oauth2/limits/
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const xero: Dialect = {
  id: "xero",
  label: "Xero",
  hosts: ["api.xero.com"],
  docs: ["https://developer.xero.com/documentation/guides/oauth2/limits/"],
  interpret: interpretGeneric,
};
