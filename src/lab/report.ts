/**
 * Output: a text table per scenario (terminal and BENCHMARKS.md) and report/index.html with,
 * per scenario and strategy, a timeline of requests and throttled answers as inline SVG (no
 * network, no script) and the table.
 */
import type { Scenario, StrategyResult, StrategyRun } from "./types";

export interface ScenarioReport {
  scenario: Scenario;
  runs: StrategyRun[];
}

const seconds = (ms: number): string => (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);

function percent(part: number, whole: number): string {
  return whole === 0 ? "0%" : `${((100 * part) / whole).toFixed(part === 0 ? 0 : 1)}%`;
}

export const TABLE_HEADERS = ["strategy", "ok", "failed", "deferred", "calls", "calls/job", "throttled", "makespan s", "ideal s", "x ideal", "dup", "herd"];

export function tableRows(results: readonly StrategyResult[], jobs: number): string[][] {
  return results.map((r) => [
    r.strategy,
    String(r.ok),
    String(r.failed),
    String(r.deferred),
    String(r.calls),
    (r.calls / Math.max(1, jobs)).toFixed(2),
    `${r.throttled} (${percent(r.throttled, r.calls)})`,
    seconds(r.makespanMs),
    seconds(r.idealMs),
    r.idealMs > 0 ? (r.makespanMs / r.idealMs).toFixed(2) : "-",
    String(r.duplicates),
    String(r.herdPeak),
  ]);
}

/** A plain-text table, columns padded. */
export function textTable(results: readonly StrategyResult[], jobs: number): string {
  const rows = [TABLE_HEADERS, ...tableRows(results, jobs)];
  const widths = TABLE_HEADERS.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  return rows.map((row) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ")).join("\n");
}

/** A Markdown table for BENCHMARKS.md. */
export function markdownTable(results: readonly StrategyResult[], jobs: number): string {
  const rows = tableRows(results, jobs);
  const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
  return [line(TABLE_HEADERS), line(TABLE_HEADERS.map((_, c) => (c === 0 ? "---" : "---:"))), ...rows.map(line)].join("\n");
}

/** One sentence on how ours did against the goals of issue 4, for the terminal and the report. */
export function verdictOnOurs(report: ScenarioReport): string | null {
  const ours = report.runs.find((r) => r.result.strategy === "ours")?.result;
  if (!ours) return null;
  const jobs = report.scenario.workload.jobs;
  const notes: string[] = [];
  const quota = report.scenario.server.limiter === "daily-quota";
  if (ours.failed > 0) notes.push(`${ours.failed} job(s) failed`);
  if (!quota && ours.deferred > 0) notes.push(`${ours.deferred} job(s) deferred with no quota spent`);
  if (ours.throttled > 0.02 * ours.calls) notes.push(`throttled ${percent(ours.throttled, ours.calls)} of calls (goal <= 2%)`);
  if (ours.idealMs > 0 && ours.makespanMs > 1.1 * ours.idealMs) notes.push(`makespan ${(ours.makespanMs / ours.idealMs).toFixed(2)} x ideal (goal <= 1.10)`);
  if (ours.duplicates > 0) notes.push(`${ours.duplicates} duplicate write(s)`);
  const peers = report.runs.map((r) => r.result).filter((r) => r.strategy !== "ours" && r.ok + r.deferred === jobs);
  for (const peer of peers) {
    if (peer.calls < ours.calls / 1.02) notes.push(`${peer.strategy} used fewer calls (${peer.calls} vs ${ours.calls})`);
    if (peer.makespanMs < ours.makespanMs / 1.02) notes.push(`${peer.strategy} finished sooner (${seconds(peer.makespanMs)} s vs ${seconds(ours.makespanMs)} s)`);
  }
  return notes.length === 0 ? "ours: all goals met" : `ours: ${notes.join("; ")}`;
}

const escapeHtml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const ROW_HEIGHT = 26;
const LABEL_WIDTH = 170;
const PLOT_WIDTH = 760;

/** One SVG per scenario: a row per strategy, a tick per request (grey ok, red throttled, amber fault). */
export function timelineSvg(report: ScenarioReport): string {
  const spanMs = Math.max(1, ...report.runs.map((r) => Math.max(r.result.makespanMs, ...r.requests.map((q) => q.atMs))));
  const x = (ms: number): number => LABEL_WIDTH + (ms / spanMs) * PLOT_WIDTH;
  const height = ROW_HEIGHT * report.runs.length + 30;
  const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${LABEL_WIDTH + PLOT_WIDTH + 20}" height="${height}" role="img" aria-label="request timelines">`];
  report.runs.forEach((run, i) => {
    const y = i * ROW_HEIGHT + 4;
    parts.push(`<text x="4" y="${y + 15}" font-size="12" font-family="monospace">${escapeHtml(run.result.strategy)}</text>`);
    parts.push(`<line x1="${LABEL_WIDTH}" y1="${y + ROW_HEIGHT - 4}" x2="${LABEL_WIDTH + PLOT_WIDTH}" y2="${y + ROW_HEIGHT - 4}" stroke="#ddd"/>`);
    const path = (filter: (q: StrategyRun["requests"][number]) => boolean, top: number, bottom: number): string =>
      run.requests
        .filter(filter)
        .map((q) => `M${x(q.atMs).toFixed(1)} ${y + top}V${y + bottom}`)
        .join("");
    const okPath = path((q) => !q.throttled && q.fault === "none", 8, 20);
    const faultPath = path((q) => q.fault !== "none", 4, 22);
    const throttledPath = path((q) => q.throttled, 2, 22);
    if (okPath) parts.push(`<path d="${okPath}" stroke="#6b8" stroke-width="1"/>`);
    if (faultPath) parts.push(`<path d="${faultPath}" stroke="#d90" stroke-width="1"/>`);
    if (throttledPath) parts.push(`<path d="${throttledPath}" stroke="#d22" stroke-width="1"/>`);
    parts.push(`<line x1="${x(run.result.makespanMs).toFixed(1)}" y1="${y}" x2="${x(run.result.makespanMs).toFixed(1)}" y2="${y + 22}" stroke="#000" stroke-width="2"/>`);
  });
  const axisY = report.runs.length * ROW_HEIGHT + 18;
  for (let k = 0; k <= 4; k++) {
    const ms = (spanMs * k) / 4;
    parts.push(`<text x="${x(ms).toFixed(1)}" y="${axisY}" font-size="11" font-family="monospace" text-anchor="middle">${seconds(ms)} s</text>`);
  }
  parts.push("</svg>");
  return parts.join("");
}

function htmlTable(results: readonly StrategyResult[], jobs: number): string {
  const head = `<tr>${TABLE_HEADERS.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr>`;
  const rows = tableRows(results, jobs)
    .map((row) => `<tr${row[0] === "ours" ? ' class="ours"' : ""}>${row.map((c, i) => (i === 0 ? `<td>${escapeHtml(c)}</td>` : `<td class="n">${escapeHtml(c)}</td>`)).join("")}</tr>`)
    .join("\n");
  return `<table>${head}\n${rows}</table>`;
}

export function renderHtml(reports: readonly ScenarioReport[], meta: { command: string; generatedAt: string }): string {
  const sections = reports
    .map((report) => {
      const s = report.scenario;
      const verdict = verdictOnOurs(report);
      const errors = report.runs.filter((r) => r.error).map((r) => `<li>${escapeHtml(r.result.strategy)}: ${escapeHtml(r.error ?? "")}</li>`);
      return `<section>
<h2>${escapeHtml(s.name)}</h2>
<p>${escapeHtml(s.description)}</p>
<p class="spec">${escapeHtml(`${s.server.limiter} ${s.server.limit} per ${s.server.windowMs} ms, dialect ${s.server.dialect}, Retry-After ${s.server.retryAfter}, budget headers ${s.server.budgetHeaders ? "on" : "off"}, latency ${s.server.latencyMs} ms; ${s.workload.jobs} ${s.workload.method} jobs, ${s.workload.workers} workers, coordination ${s.workload.coordination}; ${s.clock} clock, seed ${s.seed}`)}</p>
${timelineSvg(report)}
${htmlTable(
  report.runs.map((r) => r.result),
  s.workload.jobs,
)}
${verdict ? `<p class="verdict">${escapeHtml(verdict)}</p>` : ""}
${errors.length > 0 ? `<ul class="errors">${errors.join("")}</ul>` : ""}
</section>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Throttle lab report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;max-width:1000px}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:2px 6px}
td.n{text-align:right;font-family:monospace}
tr.ours{background:#eef6ff;font-weight:bold}
.spec{font-family:monospace;font-size:12px;color:#444}
.verdict{font-weight:bold}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
</style></head><body>
<h1>Throttle lab</h1>
<p>Generated ${escapeHtml(meta.generatedAt)} by <code>${escapeHtml(meta.command)}</code>.</p>
<p class="legend">Each row is one strategy; each tick one request as the server saw it:<span style="background:#6b8"></span>answered<span style="background:#d22"></span>throttled<span style="background:#d90"></span>fault (503, dropped, slow)<span style="background:#000"></span>last job done. Columns: calls/job is calls per job; x ideal is makespan over the server's minimum time for those jobs; dup counts POSTs executed twice for one job; herd is the most requests in any 100 ms after the first throttle.</p>
${sections}
</body></html>
`;
}
