/**
 * Google APIs. STUB: reads the generic signals only until its own rules are written.
 * https://developers.google.com/workspace/drive/api/guides/handle-errors
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const google: Dialect = {
  id: "google",
  label: "Google APIs",
  hosts: [".googleapis.com"],
  docs: ["https://developers.google.com/workspace/drive/api/guides/handle-errors"],
  interpret: interpretGeneric,
};
