/**
 * `npm run faults`: the fault suite (issue 11). Starts the fault server on 127.0.0.1 (and its
 * landing server on another host), runs each scenario in its own process through the client's
 * public API, and prints one row per scenario as it finishes, then the goals. Exits 1 when a row
 * misses a goal.
 *
 *   npm run faults                      every scenario
 *   npm run faults -- --only flap,silent
 *   npm run faults -- --markdown        a Markdown table at the end
 */
import { parseArgs } from "node:util";
import { runFaultScenario, type FaultRow } from "./runner";
import { FAULT_HEADERS, faultCells, goalSummary, markdownTable, textLine } from "./table";
import { FAULT_SCENARIOS, scenarioById } from "./scenarios";
import { startFaultServer } from "./server";

/** Fixed widths for rows printed as they come (the text table proper is not known until the end). */
const LIVE_WIDTHS = [44, 28, 6, 6, 4, 5, 3, 7, 7, 9, 5, 0];

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { only: { type: "string" }, markdown: { type: "boolean" } }, strict: true });
  const scenarios = values.only ? values.only.split(",").map((id) => scenarioById(id.trim())) : FAULT_SCENARIOS;
  const server = await startFaultServer();
  process.stdout.write(`fault server ${server.url}, other host ${server.landingUrl}; ${scenarios.length} scenario(s), one process each\n\n`);
  process.stdout.write(`${textLine(FAULT_HEADERS, LIVE_WIDTHS)}\n`);
  const rows: FaultRow[] = [];
  try {
    for (const scenario of scenarios) {
      const row = await runFaultScenario(scenario, server);
      rows.push(row);
      process.stdout.write(`${textLine(faultCells(row), LIVE_WIDTHS)}\n`);
      if (row.failures.length > 0 && row.message) process.stdout.write(`${" ".repeat(4)}${row.message.slice(0, 160)}\n`);
    }
  } finally {
    await server.close();
  }
  if (values.markdown) process.stdout.write(`\n${markdownTable(rows)}\n`);
  process.stdout.write(`\n${goalSummary(rows)}\n`);
  return rows.some((r) => r.failures.length > 0) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`faults: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
