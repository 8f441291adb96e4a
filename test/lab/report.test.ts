import { describe, expect, it } from "vitest";
import { axisTicks, goalMisses, GOALS, NOT_COMPARABLE, renderHtml, summaryText, tableRows, textTable, timelineSvg, verdictOnOurs, type ScenarioReport } from "../../src/lab/report";
import { parseScenario } from "../../src/lab/scenario";
import { STRATEGY_NAMES } from "../../src/lab/strategies";
import type { JobOutcome, StrategyResult, StrategyRun } from "../../src/lab/types";

const JOBS = 100;

function scenario(server: Record<string, unknown> = {}, jobs = JOBS) {
  return parseScenario({ name: "goal check", server: { limiter: "fixed-window", limit: 10, windowMs: 1000, ...server }, workload: { jobs, workers: 4 } }, STRATEGY_NAMES);
}

/** A strategy that did every job once, unthrottled, in exactly the ideal time; `over` changes that. */
function result(strategy: string, over: Partial<StrategyResult> = {}): StrategyResult {
  return { strategy, ok: JOBS, failed: 0, deferred: 0, calls: JOBS, throttled: 0, makespanMs: 10_000, idealMs: 10_000, duplicates: 0, herdPeak: 0, ...over };
}

function run(res: StrategyResult, outcomes: Partial<Record<JobOutcome, number>> = {}, endMs = 1000): StrategyRun {
  const jobs = Object.entries(outcomes).flatMap(([outcome, count]) => Array.from({ length: count }, (_, i) => ({ jobId: `${outcome}-${i}`, endMs, outcome: outcome as JobOutcome })));
  return { result: res, requests: [{ atMs: 0, jobId: "j", method: "GET", status: 200, throttled: false, executed: true, fault: "none" }], jobs, wallMs: 1, error: null };
}

const report = (s: ReturnType<typeof scenario>, ...results: StrategyResult[]): ScenarioReport => ({ scenario: s, runs: results.map((r) => run(r)) });
const missesOf = (rep: ScenarioReport, name = "ours"): string[] => goalMisses(rep.runs.find((r) => r.result.strategy === name)!.result, rep).map((m) => m.long);

describe("the goals the report marks", () => {
  it("passes a strategy that did every job once, unthrottled, at the ideal time", () => {
    expect(missesOf(report(scenario(), result("ours")))).toEqual([]);
  });

  it("makespan: up to 1.05 x ideal passes, beyond misses", () => {
    expect(missesOf(report(scenario(), result("ours", { makespanMs: 10_500 })))).toEqual([]);
    expect(missesOf(report(scenario(), result("ours", { makespanMs: 10_600 })))).toEqual(["makespan 1.06 x ideal (goal <= 1.05)"]);
  });

  it("throttled: 1% where the server shows a budget (budget headers, or Shopify GraphQL always), 2% where it shows none", () => {
    const twoOfHundred = result("ours", { calls: 100, throttled: 2 });
    const oneAndAHalf = result("ours", { calls: 200, throttled: 3 });
    expect(missesOf(report(scenario({ budgetHeaders: true }), oneAndAHalf))).toEqual([expect.stringMatching(/^throttled 1\.5% of calls \(goal <= 1%, the server shows its budget\)$/)]);
    expect(missesOf(report(scenario({ budgetHeaders: false }), oneAndAHalf))).toEqual([]);
    expect(missesOf(report(scenario({ budgetHeaders: false }), twoOfHundred))).toEqual([]);
    expect(missesOf(report(scenario({ budgetHeaders: false }), result("ours", { calls: 100, throttled: 3 })))).toEqual([expect.stringMatching(/goal <= 2%\)$/)]);
    expect(missesOf(report(scenario({ limiter: "cost-bucket", dialect: "shopify-graphql", budgetHeaders: false }), oneAndAHalf))).toHaveLength(1);
    expect(missesOf(report(scenario({ dialect: "stripe", budgetHeaders: true }), oneAndAHalf))).toEqual([]);
    expect(GOALS).toMatchObject({ maxThrottledShareWithBudget: 0.01, maxThrottledShareWithoutBudget: 0.02 });
  });

  it("jobs: a failure always misses; a deferral misses unless a quota ran out", () => {
    expect(missesOf(report(scenario(), result("ours", { ok: 99, failed: 1 })))).toEqual(["1 job(s) failed"]);
    expect(missesOf(report(scenario(), result("ours", { ok: 90, deferred: 10 })))).toEqual(["10 job(s) deferred with no quota spent"]);
    const quota = scenario({ limiter: "daily-quota", limit: 90, windowMs: undefined });
    expect(missesOf(report(quota, result("ours", { ok: 90, deferred: 10, calls: 90 })))).toEqual([]);
    expect(missesOf(report(quota, result("ours", { ok: 90, failed: 10, calls: 90 })))).toEqual(["10 job(s) failed"]);
  });

  it("duplicates: one duplicate write misses", () => {
    expect(missesOf(report(scenario(), result("ours", { duplicates: 1 })))).toEqual(["1 duplicate write(s)"]);
  });

  it("peers: one that finished every job with more than 2% fewer calls or sooner is named; one that failed jobs is not", () => {
    const ours = result("ours", { calls: 110, makespanMs: 10_400 });
    const closePeer = result("close", { calls: 108, makespanMs: 10_200 });
    const betterPeer = result("better", { calls: 100, makespanMs: 10_000 });
    const fastButFailing = result("failing", { ok: 10, failed: 90, calls: 100, makespanMs: 100 });
    expect(missesOf(report(scenario(), ours, closePeer, fastButFailing))).toEqual([]);
    expect(missesOf(report(scenario(), ours, betterPeer))).toEqual(["better finished every job with fewer calls (100 vs 110)", "better finished every job sooner (10.0 s vs 10.4 s)"]);
    expect(verdictOnOurs(report(scenario(), ours, betterPeer))).toMatch(/^ours: missed 2 goal\(s\): better finished/);
    expect(verdictOnOurs(report(scenario(), ours, closePeer))).toBe("ours: all goals met");
  });
});

describe("the tables", () => {
  it("show x ideal only for a strategy that finished every job, with a note saying why", () => {
    const quota = scenario({ limiter: "daily-quota", limit: 90, windowMs: undefined });
    const rows = tableRows([result("ours", { ok: 90, deferred: 10, makespanMs: 12_000 }), result("peer", { ok: 90, failed: 10, makespanMs: 5000 })], quota);
    expect(rows.map((row) => row[9])).toEqual(["1.20", NOT_COMPARABLE]);
    const text = textTable([result("ours"), result("peer", { ok: 90, failed: 10, makespanMs: 5000 })], scenario());
    expect(text).toMatch(/\npeer .* — /);
    expect(text.split("\n").at(-1)).toMatch(/^x ideal —: the strategy did not finish every job/);
    expect(textTable([result("ours")], scenario())).not.toContain("x ideal —");
  });
});

describe("the HTML report", () => {
  const quotaScenario = scenario({ limiter: "daily-quota", limit: 90, windowMs: undefined });
  // The daily-quota shape: ours defers 10 jobs at 2.1 s; a peer keeps retrying for 3.5 hours.
  const quotaReport: ScenarioReport = {
    scenario: quotaScenario,
    runs: [run(result("slow-peer", { ok: 90, failed: 10, makespanMs: 12_602_000 }), { ok: 90, failed: 10 }, 12_602_000), run(result("ours", { ok: 90, deferred: 10, makespanMs: 2100, idealMs: 2100 }), { ok: 90, deferred: 10 }, 2100)],
  };

  it("draws deferred jobs, with their count, even when they all sit in the first pixel of a long axis", () => {
    const svg = timelineSvg(quotaReport);
    expect(svg).toContain(">10 deferred</text>");
    expect(svg).toMatch(/<path d="M\d+ \d+h8l-4 7z" fill="#73c"\/>/);
  });

  it("labels the axis in a unit that suits the span, with no label past the drawing's edge", () => {
    expect(axisTicks(12_602_000).map((t) => t.label)).toEqual(["0 h", "1 h", "2 h", "3 h"]);
    expect(axisTicks(2930).map((t) => t.label)).toEqual(["0.0 s", "0.5 s", "1.0 s", "1.5 s", "2.0 s", "2.5 s"]);
    expect(axisTicks(540_000).map((t) => t.label)).toEqual(["0 min", "2 min", "4 min", "6 min", "8 min"]);
    for (const span of [1, 999, 2930, 90_000, 540_000, 12_602_000]) expect(axisTicks(span).at(-1)!.atMs).toBeLessThanOrEqual(span);
    // At 6.6 px per monospace character (11 px), every label ends inside the SVG.
    const svg = timelineSvg({ scenario: scenario(), runs: [run(result("ours", { makespanMs: 10_000 }), { ok: 100 }, 10_000)] });
    const width = Number(/width="(\d+)"/.exec(svg)![1]);
    for (const [, x, anchor, label] of svg.matchAll(/<text x="([\d.]+)" y="\d+" font-size="11" font-family="monospace" text-anchor="(\w+)">([^<]+)<\/text>/g)) {
      const right = Number(x) + (anchor === "end" ? 0 : anchor === "middle" ? (label!.length * 6.6) / 2 : label!.length * 6.6);
      expect(right).toBeLessThanOrEqual(width);
    }
  });

  it("opens with the summary: a row per scenario, ours first, pass and miss marked differently", () => {
    const passing = report(scenario(), result("ours"), result("naive", { ok: 10, failed: 90 }));
    const html = renderHtml([passing, quotaReport], { command: "test", generatedAt: "2026-03-02T09:00:00Z" });
    expect(html.indexOf('<h2 id="summary">')).toBeLessThan(html.indexOf('<section id="scenario-1">'));
    const summary = html.slice(html.indexOf('<table class="summary">'), html.indexOf("</table>"));
    const headRow = summary.slice(0, summary.indexOf("</tr>"));
    expect([...headRow.matchAll(/<th[^>]*>(.*?)<\/th>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ""))).toEqual(["scenario", "ours", "naive", "slow-peer"]);
    expect(summary).toContain('<td class="pass" title="every goal met"><b>✓</b> pass</td>');
    expect(summary).toMatch(/<td class="miss" title="90 job\(s\) failed[^"]*"><b>✗<\/b> 90 failed/);
    expect(summary).toContain('<td class="notrun"');
  });

  it("says in the terminal summary which scenarios ours met every goal on", () => {
    const text = summaryText([report(scenario(), result("ours"), result("naive", { ok: 10, failed: 90 })), report(scenario(), result("ours", { duplicates: 2 }))]);
    expect(text.split("\n").slice(1)).toEqual(["✓ goal check: ours met every goal; peers that met every goal: none", "✗ goal check: ours missed 1 (2 dup); peers that met every goal: none"]);
  });
});
