/**
 * Microsoft Dataverse Web API. STUB: reads the generic signals only until its own rules are written.
 * https://learn.microsoft.com/en-us/power-apps/developer/data-platform/api-limits
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const dataverse: Dialect = {
  id: "dataverse",
  label: "Microsoft Dataverse Web API",
  hosts: [".dynamics.com"],
  docs: ["https://learn.microsoft.com/en-us/power-apps/developer/data-platform/api-limits"],
  interpret: interpretGeneric,
};
