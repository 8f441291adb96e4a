/**
 * Jira Cloud. STUB: reads the generic signals only until its own rules are written.
 * https://developer.atlassian.com/cloud/jira/platform/rate-limiting/
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const jira: Dialect = {
  id: "jira",
  label: "Jira Cloud",
  hosts: [".atlassian.net", "api.atlassian.com"],
  docs: ["https://developer.atlassian.com/cloud/jira/platform/rate-limiting/"],
  interpret: interpretGeneric,
};
