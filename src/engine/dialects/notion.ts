/**
 * Notion. STUB: reads the generic signals only until its own rules are written.
 * https://developers.notion.com/reference/request-limits
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const notion: Dialect = {
  id: "notion",
  label: "Notion",
  hosts: ["api.notion.com"],
  docs: ["https://developers.notion.com/reference/request-limits"],
  interpret: interpretGeneric,
};
