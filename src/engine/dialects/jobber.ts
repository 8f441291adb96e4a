/**
 * Jobber. STUB: reads the generic signals only until its own rules are written.
 * https://developer.getjobber.com/docs/using_jobbers_api/api_rate_limits
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const jobber: Dialect = {
  id: "jobber",
  label: "Jobber",
  hosts: ["api.getjobber.com"],
  docs: ["https://developer.getjobber.com/docs/using_jobbers_api/api_rate_limits"],
  interpret: interpretGeneric,
};
