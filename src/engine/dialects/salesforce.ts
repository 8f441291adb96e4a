/**
 * Salesforce REST. STUB: reads the generic signals only until its own rules are written.
 * https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/headers_api_usage.htm
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const salesforce: Dialect = {
  id: "salesforce",
  label: "Salesforce REST",
  hosts: [".salesforce.com", ".force.com"],
  docs: ["https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/headers_api_usage.htm"],
  interpret: interpretGeneric,
};
