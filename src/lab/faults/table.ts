/** The fault table (text or Markdown) and the one-line summary against the issue's goals. */
import type { FaultRow } from "./runner";
import { PEAK_RSS_GOAL_MB } from "./scenarios";

export const FAULT_HEADERS = ["scenario", "outcome", "ms", "budget", "hang", "calls", "dup", "peak MB", "heap MB", "at target", "leaks", "goals"];

export function faultCells(row: FaultRow): string[] {
  return [
    row.scenario.title,
    row.outcome,
    String(row.elapsedMs),
    String(row.budgetMs),
    String(row.hang),
    String(row.calls),
    String(row.duplicates),
    String(row.peakRssMb),
    row.retainedHeapMb === null ? "-" : `+${row.retainedHeapMb}`,
    String(row.secretsAtTarget),
    String(row.leaksInOutput),
    row.failures.length === 0 ? "ok" : `FAIL: ${row.failures.join("; ")}`,
  ];
}

/** Column widths for a text table; the last column is not padded. */
export function textWidths(rows: readonly FaultRow[]): number[] {
  const all = [FAULT_HEADERS, ...rows.map(faultCells)];
  return FAULT_HEADERS.map((_, c) => Math.max(...all.map((cells) => cells[c]!.length)));
}

export function textLine(cells: readonly string[], widths: readonly number[]): string {
  return cells.map((cell, c) => (c === cells.length - 1 ? cell : c <= 1 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ");
}

export function textTable(rows: readonly FaultRow[]): string {
  const widths = textWidths(rows);
  return [FAULT_HEADERS, ...rows.map(faultCells)].map((cells) => textLine(cells, widths)).join("\n");
}

export function markdownTable(rows: readonly FaultRow[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`;
  return [line(FAULT_HEADERS), line(FAULT_HEADERS.map((_, c) => (c <= 1 || c === FAULT_HEADERS.length - 1 ? "---" : "---:"))), ...rows.map((r) => line(faultCells(r)))].join("\n");
}

/** The issue's goals, counted over the rows. */
export function goalSummary(rows: readonly FaultRow[]): string {
  const sum = (f: (r: FaultRow) => number) => rows.reduce((n, r) => n + f(r), 0);
  const peak = Math.max(0, ...rows.map((r) => r.peakRssMb));
  const failing = rows.filter((r) => r.failures.length > 0).map((r) => r.scenario.id);
  return [
    `hangs past the budget: ${sum((r) => r.hang)} (goal 0)`,
    `duplicate executions: ${sum((r) => r.duplicates)} (goal 0)`,
    `peak RSS: ${peak} MB at most (goal < ${PEAK_RSS_GOAL_MB} MB per scenario)`,
    `heap retained by repeated requests: ${rows.filter((r) => r.retainedHeapMb !== null).map((r) => `${r.retainedHeapMb} MB (${r.scenario.repeat} requests)`).join(", ") || "not measured"}`,
    `calls beyond what the server allowed: ${rows.filter((r) => r.calls > r.scenario.maxCalls).length} row(s) (goal 0)`,
    `untyped errors: ${sum((r) => (r.untyped ? 1 : 0))} (goal 0)`,
    `secrets at the redirect target: ${sum((r) => r.secretsAtTarget)} (goal 0); in results, errors and logs: ${sum((r) => r.leaksInOutput)} (goal 0)`,
    failing.length === 0 ? "every row meets its goals" : `rows missing a goal: ${failing.length} of ${rows.length} (${failing.join(", ")})`,
  ].join("\n");
}
