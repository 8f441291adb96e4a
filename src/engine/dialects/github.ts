/**
 * GitHub REST and GraphQL. STUB: reads the generic signals only until its own rules are written.
 * https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const github: Dialect = {
  id: "github",
  label: "GitHub REST and GraphQL",
  hosts: ["api.github.com"],
  docs: ["https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api"],
  interpret: interpretGeneric,
};
