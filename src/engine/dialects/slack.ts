/**
 * Slack Web API. STUB: reads the generic signals only until its own rules are written.
 * https://docs.slack.dev/apis/web-api/rate-limits
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const slack: Dialect = {
  id: "slack",
  label: "Slack Web API",
  hosts: ["slack.com", "api.slack.com"],
  docs: ["https://docs.slack.dev/apis/web-api/rate-limits"],
  interpret: interpretGeneric,
};
