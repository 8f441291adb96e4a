/**
 * Microsoft Graph. STUB: reads the generic signals only until its own rules are written.
 * https://learn.microsoft.com/en-us/graph/throttling
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const msgraph: Dialect = {
  id: "msgraph",
  label: "Microsoft Graph",
  hosts: ["graph.microsoft.com"],
  docs: ["https://learn.microsoft.com/en-us/graph/throttling"],
  interpret: interpretGeneric,
};
