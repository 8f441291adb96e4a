/**
 * Shopify REST and GraphQL Admin. STUB: reads the generic signals only until its own rules are written.
 * https://shopify.dev/docs/api/usage/limits
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const shopify: Dialect = {
  id: "shopify",
  label: "Shopify REST and GraphQL Admin",
  hosts: [".myshopify.com"],
  docs: ["https://shopify.dev/docs/api/usage/limits"],
  interpret: interpretGeneric,
};
