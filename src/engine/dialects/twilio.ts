/**
 * Twilio. STUB: reads the generic signals only until its own rules are written.
 * https://www.twilio.com/docs/api/errors/20429
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const twilio: Dialect = {
  id: "twilio",
  label: "Twilio",
  hosts: [".twilio.com"],
  docs: ["https://www.twilio.com/docs/api/errors/20429"],
  interpret: interpretGeneric,
};
