/**
 * Mailchimp Marketing. STUB: reads the generic signals only until its own rules are written.
 * https://mailchimp.com/developer/marketing/docs/errors/
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const mailchimp: Dialect = {
  id: "mailchimp",
  label: "Mailchimp Marketing",
  hosts: [".api.mailchimp.com"],
  docs: ["https://mailchimp.com/developer/marketing/docs/errors/"],
  interpret: interpretGeneric,
};
