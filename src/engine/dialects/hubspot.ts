/**
 * HubSpot. STUB: reads the generic signals only until its own rules are written.
 * https://developers.hubspot.com/docs/api/usage-details
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const hubspot: Dialect = {
  id: "hubspot",
  label: "HubSpot",
  hosts: ["api.hubapi.com", "api.hubspot.com"],
  docs: ["https://developers.hubspot.com/docs/api/usage-details"],
  interpret: interpretGeneric,
};
