/**
 * QuickBooks Online. STUB: reads the generic signals only until its own rules are written.
 * https://developer.intuit.com/app/developer/qbo/docs/learn/limits-and-throttles
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const quickbooks: Dialect = {
  id: "quickbooks",
  label: "QuickBooks Online",
  hosts: ["quickbooks.api.intuit.com", "sandbox-quickbooks.api.intuit.com"],
  docs: ["https://developer.intuit.com/app/developer/qbo/docs/learn/limits-and-throttles"],
  interpret: interpretGeneric,
};
