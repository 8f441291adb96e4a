/**
 * Intercom. STUB: reads the generic signals only until its own rules are written.
 * https://developers.intercom.com/docs/references/rest-api/errors/rate-limiting
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const intercom: Dialect = {
  id: "intercom",
  label: "Intercom",
  hosts: ["api.intercom.io", "api.eu.intercom.io", "api.au.intercom.io"],
  docs: ["https://developers.intercom.com/docs/references/rest-api/errors/rate-limiting"],
  interpret: interpretGeneric,
};
