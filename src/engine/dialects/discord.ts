/**
 * Discord. STUB: reads the generic signals only until its own rules are written.
 * https://discord.com/developers/docs/topics/rate-limits
 */
import type { Dialect } from "../dialect";
import { interpretGeneric } from "./generic";

export const discord: Dialect = {
  id: "discord",
  label: "Discord",
  hosts: ["discord.com", "discordapp.com"],
  docs: ["https://discord.com/developers/docs/topics/rate-limits"],
  interpret: interpretGeneric,
};
