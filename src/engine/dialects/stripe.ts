/**
 * Stripe. STUB: reads the generic signals only until its own rules are written.
 * https://docs.stripe.com/rate-limits
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const stripe: Dialect = {
  id: "stripe",
  label: "Stripe",
  hosts: ["api.stripe.com"],
  docs: ["https://docs.stripe.com/rate-limits"],
  interpret: interpretGeneric,
};
