/**
 * Output: a text table per scenario (terminal and BENCHMARKS.md) and report/index.html: a summary
 * of every scenario by strategy against GOALS at the top, then per scenario a timeline of
 * requests, throttled answers and deferred jobs as inline SVG (no network, no script) and the
 * table.
 */
import type { DialectId, Scenario, StrategyResult, StrategyRun } from "./types";

export interface ScenarioReport {
  scenario: Scenario;
  runs: StrategyRun[];
}

/**
 * What "good" means for a strategy on a scenario; the report marks each one pass or miss by these.
 * - every job done; deferred only when a quota runs out (a daily-quota scenario);
 * - throttled answers at most `maxThrottledShareWithBudget` of calls where the server shows what is
 *   left of its budget, `maxThrottledShareWithoutBudget` where it shows none (a client can only
 *   learn such a limit by hitting it);
 * - makespan at most `maxMakespanOverIdeal` times the server's own minimum;
 * - no duplicate write;
 * - no other strategy that finished every job with fewer calls or a shorter makespan, beyond
 *   `peerTolerance` (run-to-run noise).
 */
export const GOALS = Object.freeze({
  maxThrottledShareWithBudget: 0.01,
  maxThrottledShareWithoutBudget: 0.02,
  maxMakespanOverIdeal: 1.05,
  maxDuplicates: 0,
  peerTolerance: 0.02,
});

/**
 * Dialects whose successes show the budget whatever `budgetHeaders` says (Shopify GraphQL puts
 * extensions.cost in every body), and those that never show one (the lab speaks Stripe, Slack and
 * Marketo without budget headers, as those APIs do): see renderOk in src/lab/dialects.ts.
 */
const ALWAYS_SHOWS_BUDGET: readonly DialectId[] = ["shopify-graphql"];
const NEVER_SHOWS_BUDGET: readonly DialectId[] = ["stripe", "slack", "marketo"];

export function serverShowsBudget(scenario: Scenario): boolean {
  const { dialect, budgetHeaders } = scenario.server;
  return ALWAYS_SHOWS_BUDGET.includes(dialect) || (budgetHeaders && !NEVER_SHOWS_BUDGET.includes(dialect));
}

const isQuota = (scenario: Scenario): boolean => scenario.server.limiter === "daily-quota";

/** Every job done, or deferred because a quota ran out: its makespan compares with the ideal. */
export function finishedEveryJob(result: StrategyResult, scenario: Scenario): boolean {
  const deferredAllowed = isQuota(scenario) ? result.deferred : 0;
  return result.failed === 0 && result.ok + deferredAllowed === scenario.workload.jobs;
}

const seconds = (ms: number): string => (ms / 1000).toFixed(ms < 10_000 ? 2 : 1);

function percent(part: number, whole: number): string {
  return whole === 0 ? "0%" : `${((100 * part) / whole).toFixed(part === 0 ? 0 : 1)}%`;
}

/** A goal's share as written (0.01 -> "1%"). */
const share = (fraction: number): string => `${Number((100 * fraction).toFixed(2))}%`;

/** One goal missed: `short` fits a summary cell, `long` says it in full. */
export interface GoalMiss {
  short: string;
  long: string;
}

/** The goals `result` misses on `report`'s scenario, compared with the other strategies run there. */
export function goalMisses(result: StrategyResult, report: ScenarioReport): GoalMiss[] {
  const { scenario } = report;
  const misses: GoalMiss[] = [];
  if (result.failed > 0) misses.push({ short: `${result.failed} failed`, long: `${result.failed} job(s) failed` });
  if (!isQuota(scenario) && result.deferred > 0) misses.push({ short: `${result.deferred} deferred`, long: `${result.deferred} job(s) deferred with no quota spent` });
  const maxShare = serverShowsBudget(scenario) ? GOALS.maxThrottledShareWithBudget : GOALS.maxThrottledShareWithoutBudget;
  if (result.throttled > maxShare * result.calls) {
    misses.push({ short: `${percent(result.throttled, result.calls)} throttled`, long: `throttled ${percent(result.throttled, result.calls)} of calls (goal <= ${share(maxShare)}${serverShowsBudget(scenario) ? ", the server shows its budget" : ""})` });
  }
  const overIdeal = result.idealMs > 0 ? result.makespanMs / result.idealMs : 0;
  if (finishedEveryJob(result, scenario) && overIdeal > GOALS.maxMakespanOverIdeal) {
    misses.push({ short: `${overIdeal.toFixed(2)}x ideal`, long: `makespan ${overIdeal.toFixed(2)} x ideal (goal <= ${GOALS.maxMakespanOverIdeal.toFixed(2)})` });
  }
  if (result.duplicates > GOALS.maxDuplicates) misses.push({ short: `${result.duplicates} dup`, long: `${result.duplicates} duplicate write(s)` });
  const slack = 1 + GOALS.peerTolerance;
  const finishers = report.runs.map((r) => r.result).filter((r) => r.strategy !== result.strategy && finishedEveryJob(r, scenario));
  for (const other of finishers) {
    if (other.calls < result.calls / slack) misses.push({ short: `${other.strategy}: fewer calls`, long: `${other.strategy} finished every job with fewer calls (${other.calls} vs ${result.calls})` });
    if (other.makespanMs < result.makespanMs / slack) misses.push({ short: `${other.strategy}: sooner`, long: `${other.strategy} finished every job sooner (${seconds(other.makespanMs)} s vs ${seconds(result.makespanMs)} s)` });
  }
  return misses;
}

/** One sentence on how ours did against GOALS, for the terminal and the report. */
export function verdictOnOurs(report: ScenarioReport): string | null {
  const ours = report.runs.find((r) => r.result.strategy === "ours")?.result;
  if (!ours) return null;
  const misses = goalMisses(ours, report);
  return misses.length === 0 ? "ours: all goals met" : `ours: missed ${misses.length} goal(s): ${misses.map((m) => m.long).join("; ")}`;
}

export const TABLE_HEADERS = ["strategy", "ok", "failed", "deferred", "calls", "calls/job", "throttled", "makespan s", "ideal s", "x ideal", "dup", "herd"];

/** What the x ideal column shows for a strategy that did not finish every job. */
export const NOT_COMPARABLE = "—";
const NOT_COMPARABLE_NOTE = `x ideal ${NOT_COMPARABLE}: the strategy did not finish every job (a job failed, or was deferred with no quota spent), so its makespan is not comparable with the ideal.`;

export function tableRows(results: readonly StrategyResult[], scenario: Scenario): string[][] {
  const jobs = scenario.workload.jobs;
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
    r.idealMs <= 0 ? "-" : finishedEveryJob(r, scenario) ? (r.makespanMs / r.idealMs).toFixed(2) : NOT_COMPARABLE,
    String(r.duplicates),
    String(r.herdPeak),
  ]);
}

const footnote = (rows: readonly string[][]): string => (rows.some((row) => row[9] === NOT_COMPARABLE) ? `\n${NOT_COMPARABLE_NOTE}` : "");

/** A plain-text table, columns padded. */
export function textTable(results: readonly StrategyResult[], scenario: Scenario): string {
  const body = tableRows(results, scenario);
  const rows = [TABLE_HEADERS, ...body];
  const widths = TABLE_HEADERS.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  return rows.map((row) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ")).join("\n") + footnote(body);
}

/** A Markdown table for BENCHMARKS.md. */
export function markdownTable(results: readonly StrategyResult[], scenario: Scenario): string {
  const rows = tableRows(results, scenario);
  const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
  return [line(TABLE_HEADERS), line(TABLE_HEADERS.map((_, c) => (c === 0 ? "---" : "---:"))), ...rows.map(line)].join("\n") + (footnote(rows) ? `\n${footnote(rows)}` : "");
}

const SWEEP_HEADERS = ["scenario", "ours x ideal", "ours throttled", "ours", "peers that met every goal"];

/** One sweep row: ours's figures and verdict on a scenario, and the peers that met every goal there. */
function sweepRow(report: ScenarioReport): { cells: string[]; met: boolean } {
  const ours = report.runs.find((r) => r.result.strategy === "ours")?.result;
  const passing = report.runs.filter((r) => r.result.strategy !== "ours" && goalMisses(r.result, report).length === 0).map((r) => r.result.strategy);
  const peers = passing.length > 0 ? passing.join(", ") : "none";
  if (!ours) return { cells: [report.scenario.name, "-", "-", "not run", peers], met: false };
  const misses = goalMisses(ours, report);
  const overIdeal = ours.idealMs <= 0 ? "-" : finishedEveryJob(ours, report.scenario) ? (ours.makespanMs / ours.idealMs).toFixed(2) : NOT_COMPARABLE;
  const verdict = misses.length === 0 ? "met every goal" : `missed: ${misses.map((m) => m.short).join(", ")}`;
  return { cells: [report.scenario.name, overIdeal, `${ours.throttled} of ${ours.calls} (${percent(ours.throttled, ours.calls)})`, verdict, peers], met: misses.length === 0 };
}

/**
 * Several scenarios at a glance (bench with more than one --scenario): a row per scenario, then how
 * many of them ours met every goal in. Markdown for BENCHMARKS.md, or padded text.
 */
export function sweepTable(reports: readonly ScenarioReport[], markdown: boolean): string {
  const rows = reports.map(sweepRow);
  const met = rows.filter((row) => row.met).length;
  const count = `ours met every goal in ${met} of ${reports.length} scenarios`;
  const cells = rows.map((row) => row.cells);
  if (markdown) {
    const line = (row: readonly string[]): string => `| ${row.map((cell) => cell.replaceAll("|", "\\|")).join(" | ")} |`;
    return [line(SWEEP_HEADERS), line(SWEEP_HEADERS.map((_, c) => (c === 1 || c === 2 ? "---:" : "---"))), ...cells.map(line), "", count].join("\n");
  }
  const all = [SWEEP_HEADERS, ...cells];
  const widths = SWEEP_HEADERS.map((_, c) => Math.max(...all.map((row) => row[c]!.length)));
  const pad = (row: readonly string[]): string => row.map((cell, c) => (c === 1 || c === 2 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join("  ").trimEnd();
  return [pad(SWEEP_HEADERS), ...cells.map(pad), count].join("\n");
}

/** The terminal's closing summary: one line per scenario, ours first, then the peers that met every goal. */
export function summaryText(reports: readonly ScenarioReport[]): string {
  const lines = reports.map((report) => {
    const ours = report.runs.find((r) => r.result.strategy === "ours")?.result;
    const misses = ours ? goalMisses(ours, report) : [];
    const mark = !ours ? " " : misses.length === 0 ? "✓" : "✗";
    const oursText = !ours ? "ours not run" : misses.length === 0 ? "ours met every goal" : `ours missed ${misses.length} (${misses.map((m) => m.short).join(", ")})`;
    const passing = report.runs.filter((r) => r.result.strategy !== "ours" && goalMisses(r.result, report).length === 0).map((r) => r.result.strategy);
    return `${mark} ${report.scenario.name}: ${oursText}; peers that met every goal: ${passing.length > 0 ? passing.join(", ") : "none"}`;
  });
  return ["Summary against the goals (report/index.html has every strategy):", ...lines].join("\n");
}

const escapeHtml = (text: string): string => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const ROW_HEIGHT = 26;
const LABEL_WIDTH = 170;
const PLOT_WIDTH = 900;
const RIGHT_MARGIN = 30;
const COLOURS = { ok: "#6b8", throttled: "#d22", fault: "#d90", deferred: "#73c", done: "#000" } as const;

/** Axis ticks at round values (1, 2 or 5 x 10^k) in a unit that suits the span: s, min or h. */
export function axisTicks(spanMs: number, maxTicks = 6): { atMs: number; label: string }[] {
  const unit = spanMs >= 2 * 3_600_000 ? { ms: 3_600_000, name: "h" } : spanMs >= 5 * 60_000 ? { ms: 60_000, name: "min" } : { ms: 1000, name: "s" };
  const span = spanMs / unit.ms;
  const rough = span / maxTicks;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((candidate) => candidate >= rough) ?? 10 * magnitude;
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const ticks: { atMs: number; label: string }[] = [];
  for (let k = 0; k * step <= span * (1 + 1e-9); k++) ticks.push({ atMs: k * step * unit.ms, label: `${(k * step).toFixed(decimals)} ${unit.name}` });
  return ticks;
}

/** The marks of one strategy's row: requests, deferred jobs, the last job done. */
function timelineRow(run: StrategyRun, y: number, x: (ms: number) => number): string[] {
  const parts: string[] = [`<text x="4" y="${y + 15}" font-size="12" font-family="monospace">${escapeHtml(run.result.strategy)}</text>`];
  parts.push(`<line x1="${LABEL_WIDTH}" y1="${y + ROW_HEIGHT - 4}" x2="${LABEL_WIDTH + PLOT_WIDTH}" y2="${y + ROW_HEIGHT - 4}" stroke="#ddd"/>`);
  const ticks = (filter: (q: StrategyRun["requests"][number]) => boolean, top: number, bottom: number): string =>
    run.requests
      .filter(filter)
      .map((q) => `M${x(q.atMs).toFixed(1)} ${y + top}V${y + bottom}`)
      .join("");
  const okPath = ticks((q) => !q.throttled && q.fault === "none", 8, 20);
  const faultPath = ticks((q) => q.fault !== "none", 4, 22);
  const throttledPath = ticks((q) => q.throttled, 2, 22);
  if (okPath) parts.push(`<path d="${okPath}" stroke="${COLOURS.ok}" stroke-width="1"/>`);
  if (faultPath) parts.push(`<path d="${faultPath}" stroke="${COLOURS.fault}" stroke-width="1"/>`);
  if (throttledPath) parts.push(`<path d="${throttledPath}" stroke="${COLOURS.throttled}" stroke-width="1"/>`);
  const doneX = x(run.result.makespanMs).toFixed(1);
  parts.push(`<line x1="${doneX}" y1="${y}" x2="${doneX}" y2="${y + 22}" stroke="${COLOURS.done}" stroke-width="2"/>`);
  parts.push(...deferredMarks(run, y, x));
  return parts;
}

/**
 * Deferred jobs: a triangle where each was deferred and their count beside the last one, so that
 * jobs handed to a later run show even when they all fall in the first pixel of a long axis.
 */
function deferredMarks(run: StrategyRun, y: number, x: (ms: number) => number): string[] {
  const deferredAt = run.jobs.filter((job) => job.outcome === "deferred").map((job) => Math.round(x(job.endMs)));
  if (deferredAt.length === 0) return [];
  const pixels = [...new Set(deferredAt)].sort((a, b) => a - b);
  const triangles = pixels.map((px) => `M${px - 4} ${y + 1}h8l-4 7z`).join("");
  const last = pixels[pixels.length - 1]!;
  const nearEnd = last > LABEL_WIDTH + PLOT_WIDTH - 110;
  const label = `${deferredAt.length} deferred`;
  return [
    `<path d="${triangles}" fill="${COLOURS.deferred}"/>`,
    `<text x="${nearEnd ? last - 7 : last + 7}" y="${y + 9}" font-size="11" font-family="monospace" fill="${COLOURS.deferred}" text-anchor="${nearEnd ? "end" : "start"}">${escapeHtml(label)}</text>`,
  ];
}

/** One SVG per scenario: a row per strategy on a shared time axis. */
export function timelineSvg(report: ScenarioReport): string {
  const spanMs = Math.max(1, ...report.runs.map((r) => Math.max(r.result.makespanMs, ...r.requests.map((q) => q.atMs), ...r.jobs.map((j) => j.endMs))));
  const x = (ms: number): number => LABEL_WIDTH + (ms / spanMs) * PLOT_WIDTH;
  const height = ROW_HEIGHT * report.runs.length + 30;
  const width = LABEL_WIDTH + PLOT_WIDTH + RIGHT_MARGIN;
  const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="request timelines">`];
  report.runs.forEach((run, i) => parts.push(...timelineRow(run, i * ROW_HEIGHT + 4, x)));
  const axisY = report.runs.length * ROW_HEIGHT + 18;
  for (const tick of axisTicks(spanMs)) {
    // The last label ends at its tick rather than centring on it, so it never runs off the edge.
    const anchor = x(tick.atMs) > LABEL_WIDTH + PLOT_WIDTH - 30 ? "end" : "middle";
    parts.push(`<line x1="${x(tick.atMs).toFixed(1)}" y1="${axisY - 18}" x2="${x(tick.atMs).toFixed(1)}" y2="${axisY - 13}" stroke="#888"/>`);
    parts.push(`<text x="${x(tick.atMs).toFixed(1)}" y="${axisY}" font-size="11" font-family="monospace" text-anchor="${anchor}">${escapeHtml(tick.label)}</text>`);
  }
  parts.push("</svg>");
  return parts.join("");
}

function htmlTable(results: readonly StrategyResult[], scenario: Scenario): string {
  const head = `<tr>${TABLE_HEADERS.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr>`;
  const cell = (text: string, column: number): string => {
    if (column === 0) return `<td>${escapeHtml(text)}</td>`;
    const why = text === NOT_COMPARABLE ? ` title="${escapeHtml(NOT_COMPARABLE_NOTE)}"` : "";
    return `<td class="n"${why}>${escapeHtml(text)}</td>`;
  };
  const rows = tableRows(results, scenario)
    .map((row) => `<tr${row[0] === "ours" ? ' class="ours"' : ""}>${row.map(cell).join("")}</tr>`)
    .join("\n");
  return `<table>${head}\n${rows}</table>`;
}

/** Strategies in the order the summary shows them: ours first, then as they first appear. */
function summaryColumns(reports: readonly ScenarioReport[]): string[] {
  const names = [...new Set(reports.flatMap((report) => report.runs.map((r) => r.result.strategy)))];
  return names.includes("ours") ? ["ours", ...names.filter((name) => name !== "ours")] : names;
}

/** The first screen: every scenario by every strategy, pass or miss against GOALS. */
export function summaryHtml(reports: readonly ScenarioReport[]): string {
  const columns = summaryColumns(reports);
  const head = `<tr><th>scenario</th>${columns.map((name) => `<th${name === "ours" ? ' class="ours"' : ""}>${escapeHtml(name).replace(/-/g, "-<wbr>")}</th>`).join("")}</tr>`;
  const rows = reports.map((report, i) => {
    const cells = columns.map((name) => {
      const run = report.runs.find((r) => r.result.strategy === name);
      if (!run) return `<td class="notrun" title="not run in this scenario">·</td>`;
      const misses = goalMisses(run.result, report);
      if (misses.length === 0) return `<td class="pass" title="every goal met"><b>✓</b> pass</td>`;
      const more = misses.length > 1 ? ` <span class="more">+${misses.length - 1}</span>` : "";
      return `<td class="miss" title="${escapeHtml(misses.map((m) => m.long).join("; "))}"><b>✗</b> ${escapeHtml(misses[0]!.short)}${more}</td>`;
    });
    const clock = report.scenario.clock === "real" ? ' <span class="clock">real clock</span>' : "";
    return `<tr><th class="scenario"><a href="#scenario-${i + 1}">${escapeHtml(report.scenario.name)}</a>${clock}</th>${cells.join("")}</tr>`;
  });
  const goals = `every job done (deferred only when a quota runs out); throttled ≤ ${share(GOALS.maxThrottledShareWithBudget)} of calls where the server shows its budget, ≤ ${share(GOALS.maxThrottledShareWithoutBudget)} where it shows none; makespan ≤ ${GOALS.maxMakespanOverIdeal.toFixed(2)} × ideal; no duplicate write; no other strategy that finished every job with fewer calls or sooner (${share(GOALS.peerTolerance)} tolerance)`;
  const widths = `<colgroup><col class="scenario">${columns.map(() => "<col>").join("")}</colgroup>`;
  return `<h2 id="summary">Summary</h2>
<table class="summary">${widths}${head}\n${rows.join("\n")}</table>
<p class="goals"><b>✓ pass</b>: every goal met. <b>✗ miss</b>: the first goal missed, +N more (hover a cell for all of them). Goals: ${escapeHtml(goals)}.</p>`;
}

function scenarioSection(report: ScenarioReport, index: number): string {
  const s = report.scenario;
  const verdict = verdictOnOurs(report);
  const verdictClass = verdict === "ours: all goals met" ? "pass" : "miss";
  const errors = report.runs.filter((r) => r.error).map((r) => `<li>${escapeHtml(r.result.strategy)}: ${escapeHtml(r.error ?? "")}</li>`);
  const spec = `${s.server.limiter} ${s.server.limit} per ${s.server.windowMs} ms, dialect ${s.server.dialect}, Retry-After ${s.server.retryAfter}, budget ${serverShowsBudget(s) ? "shown" : "not shown"}, latency ${s.server.latencyMs} ms; ${s.workload.jobs} ${s.workload.method} jobs, ${s.workload.workers} workers, coordination ${s.workload.coordination}; ${s.clock} clock, seed ${s.seed}`;
  return `<section id="scenario-${index + 1}">
<h2>${escapeHtml(s.name)}</h2>
<p>${escapeHtml(s.description)}</p>
<p class="spec">${escapeHtml(spec)}</p>
${verdict ? `<p class="verdict ${verdictClass}">${verdictClass === "pass" ? "✓" : "✗"} ${escapeHtml(verdict)}</p>` : ""}
${timelineSvg(report)}
${htmlTable(
  report.runs.map((r) => r.result),
  s,
)}
${errors.length > 0 ? `<ul class="errors">${errors.join("")}</ul>` : ""}
</section>`;
}

const STYLE = `body{font-family:system-ui,sans-serif;margin:1.5em 2em;max-width:1320px}
h1{margin:0 0 .2em}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:2px 6px}
td.n{text-align:right;font-family:monospace}
tr.ours{background:#eef6ff;font-weight:bold}
table.summary{font-size:12px;table-layout:fixed;width:100%;margin:.5em 0}
table.summary col.scenario{width:290px}
table.summary th{font-weight:600;vertical-align:bottom;font-size:11px}
table.summary th.scenario{text-align:left;font-weight:normal;font-size:12px;vertical-align:middle}
table.summary th.ours{background:#dcebff;font-size:13px}
table.summary td{text-align:left;vertical-align:middle;line-height:1.25}
td.pass{background:#dff2e3;color:#17602a}
td.miss{background:#fbe3e0;color:#9d1f16}
td.notrun{color:#aaa;text-align:center}
.more{color:#b9665e;font-size:11px}
.clock{font-size:11px;color:#555;border:1px solid #bbb;border-radius:3px;padding:0 3px}
.spec{font-family:monospace;font-size:12px;color:#444}
.goals{font-size:12px;color:#333;margin:.2em 0 1em}
.verdict{font-weight:600;padding:4px 8px;border-radius:4px;width:fit-content}
svg{display:block}
.verdict.pass{background:#e2f3e5;color:#17602a}
.verdict.miss{background:#fbe3e0;color:#9d1f16}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}`;

export function renderHtml(reports: readonly ScenarioReport[], meta: { command: string; generatedAt: string }): string {
  const swatch = (colour: string): string => `<span style="background:${colour}"></span>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Throttle lab report</title>
<style>
${STYLE}
</style></head><body>
<h1>Throttle lab</h1>
<p>Generated ${escapeHtml(meta.generatedAt)} by <code>${escapeHtml(meta.command)}</code>.</p>
${summaryHtml(reports)}
<p class="legend">Timelines: each row is one strategy; each tick one request as the server saw it:${swatch(COLOURS.ok)}answered${swatch(COLOURS.throttled)}throttled${swatch(COLOURS.fault)}fault (503, dropped, slow)${swatch(COLOURS.deferred)}job deferred (count beside)${swatch(COLOURS.done)}last job done. Columns: calls/job is calls per job; x ideal is makespan over the server's minimum time for those jobs, shown only for a strategy that finished every job (${NOT_COMPARABLE} otherwise); dup counts POSTs executed twice for one job; herd is the most requests in any 100 ms after the first throttle.</p>
${reports.map(scenarioSection).join("\n")}
</body></html>
`;
}
