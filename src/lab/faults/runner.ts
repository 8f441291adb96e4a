/**
 * Runs one fault scenario in a child process against the fault server and turns what happened
 * into a table row. The child is killed at a hard deadline (the budget plus a grace period) and
 * above a memory ceiling, so the suite itself never hangs or takes the machine down; either is
 * reported, never hidden.
 */
import { fork } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { ChildInput, ChildMessage } from "./child";
import { countSecretsIn } from "./encodings";
import { BUDGET_MS, FAULT_SECRETS, PEAK_RSS_GOAL_MB, RETAINED_HEAP_GOAL_MB, type FaultScenario } from "./scenarios";
import type { FaultServer } from "./server";

/** The child is killed this long after its budget: it hung. */
export const GRACE_MS = 3000;
/** The child is killed above this RSS: it would not have stopped by itself. */
export const MEMORY_CEILING_MB = 768;
const SAMPLE_EVERY_MS = 20;

export interface FaultRow {
  scenario: FaultScenario;
  outcome: string;
  message: string;
  elapsedMs: number;
  budgetMs: number;
  /** 1 when the scenario ran past its budget or was killed at the deadline. */
  hang: 0 | 1;
  calls: number;
  duplicates: number;
  peakRssMb: number;
  /** Repeat scenarios: heap retained after the run and a full GC; null for single requests. */
  retainedHeapMb: number | null;
  /** Secrets (in any form) in what arrived at the redirect target (another host). */
  secretsAtTarget: number;
  leaksInOutput: number;
  /** A thrown error that is not a class the client exports. */
  untyped: boolean;
  /** Goals this row misses, in words; empty when it meets all of them. */
  failures: string[];
}

const MB = 1024 * 1024;
const REPO_ROOT = path.resolve(__dirname, "../../..");

/** VmRSS and VmHWM (peak) of a live process, from /proc (Linux); null elsewhere or once it is gone. */
function procMemory(pid: number): { rssBytes: number; peakBytes: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN) * 1024;
    const rssBytes = kib("VmRSS");
    return Number.isFinite(rssBytes) ? { rssBytes, peakBytes: kib("VmHWM") } : null;
  } catch {
    return null;
  }
}

interface ChildRun {
  done: Extract<ChildMessage, { kind: "done" }> | null;
  killedFor: "deadline" | "memory" | null;
  elapsedMs: number;
  peakBytes: number;
  stderr: string;
  exitCode: number | null;
}

function runChild(input: ChildInput, deadlineMs: number): Promise<ChildRun> {
  return new Promise((resolve) => {
    const child = fork(path.join(__dirname, "child.ts"), [JSON.stringify(input)], { cwd: REPO_ROOT, execArgv: ["--import", "tsx", "--expose-gc"], stdio: ["ignore", "ignore", "pipe", "ipc"] });
    const state: ChildRun = { done: null, killedFor: null, elapsedMs: 0, peakBytes: 0, stderr: "", exitCode: null };
    let readyAtMs: number | null = null;
    let deadline: NodeJS.Timeout | undefined;
    const kill = (why: "deadline" | "memory") => {
      if (state.done || state.killedFor) return;
      state.killedFor = why;
      state.elapsedMs = readyAtMs === null ? 0 : Math.round(performance.now() - readyAtMs);
      child.kill("SIGKILL");
    };
    const sampler = setInterval(() => {
      const memory = child.pid === undefined ? null : procMemory(child.pid);
      if (!memory) return;
      state.peakBytes = Math.max(state.peakBytes, memory.peakBytes, memory.rssBytes);
      if (memory.rssBytes > MEMORY_CEILING_MB * MB) kill("memory");
    }, SAMPLE_EVERY_MS);
    child.stderr?.on("data", (chunk: Buffer) => {
      if (state.stderr.length < 4000) state.stderr += chunk.toString("utf8");
    });
    child.on("message", (message: ChildMessage) => {
      if (message.kind === "ready") {
        readyAtMs = performance.now();
        deadline = setTimeout(() => kill("deadline"), deadlineMs);
      } else {
        state.done = message;
        state.elapsedMs = message.elapsedMs;
        state.peakBytes = Math.max(state.peakBytes, message.peakRssBytes);
      }
    });
    child.on("exit", (code) => {
      clearInterval(sampler);
      clearTimeout(deadline);
      state.exitCode = code;
      resolve(state);
    });
  });
}

function outcomeOf(run: ChildRun, budgetMs: number): { outcome: string; message: string } {
  if (run.done) return { outcome: run.done.outcome, message: run.done.message };
  if (run.killedFor === "deadline") return { outcome: "hang (killed)", message: `still running ${GRACE_MS} ms after its ${budgetMs} ms budget` };
  if (run.killedFor === "memory") return { outcome: `killed: RSS > ${MEMORY_CEILING_MB} MB`, message: "memory grew without bound" };
  return { outcome: `crashed (exit ${String(run.exitCode)})`, message: run.stderr.split("\n").find((l) => l.trim() !== "") ?? "" };
}

function failuresOf(row: Omit<FaultRow, "failures">): string[] {
  const failures: string[] = [];
  const s = row.scenario;
  if (row.hang) failures.push(`ran ${row.elapsedMs} ms, budget ${row.budgetMs} ms`);
  if (row.duplicates > 0) failures.push(`${row.duplicates} duplicate execution(s)`);
  if (row.calls > s.maxCalls) failures.push(`${row.calls} calls, at most ${s.maxCalls} expected`);
  if (row.retainedHeapMb !== null && row.retainedHeapMb >= RETAINED_HEAP_GOAL_MB) failures.push(`heap retained ${row.retainedHeapMb} MB >= ${RETAINED_HEAP_GOAL_MB} MB`);
  if (row.peakRssMb >= PEAK_RSS_GOAL_MB) failures.push(`peak RSS ${row.peakRssMb} MB >= ${PEAK_RSS_GOAL_MB} MB`);
  if (row.untyped) failures.push(`untyped error ${row.outcome}`);
  if (row.secretsAtTarget > 0) failures.push(`${row.secretsAtTarget} secret(s) reached the other host`);
  if (row.leaksInOutput > 0) failures.push(`${row.leaksInOutput} secret(s) in result/error/logs`);
  const typedError = !row.untyped && !["success", "gave_up", "deferred", "http_error"].includes(row.outcome) && !row.outcome.startsWith("hang") && !row.outcome.startsWith("killed") && !row.outcome.startsWith("crashed");
  const expected = s.expect.includes(row.outcome) || (typedError && s.expect.includes("typed error"));
  if (!expected) failures.push(`expected ${s.expect.join(" or ")}`);
  return failures;
}

let runCounter = 0;

export async function runFaultScenario(scenario: FaultScenario, server: FaultServer): Promise<FaultRow> {
  runCounter += 1;
  const run = `${scenario.id}-${process.pid}-${runCounter}`;
  const budgetMs = scenario.budgetMs ?? BUDGET_MS;
  const child = await runChild({ scenarioId: scenario.id, baseUrl: server.url, run }, budgetMs + GRACE_MS);
  const stats = server.stats(run);
  const landedText = stats.landed.map((l) => `${l.url}\n${JSON.stringify(l.headers)}`).join("\n");
  const { outcome, message } = outcomeOf(child, budgetMs);
  const row: Omit<FaultRow, "failures"> = {
    scenario,
    outcome,
    message,
    elapsedMs: child.elapsedMs,
    budgetMs,
    hang: child.killedFor === "deadline" || child.elapsedMs > budgetMs ? 1 : 0,
    calls: stats.calls,
    duplicates: Object.values(stats.executions).reduce((sum, n) => sum + Math.max(0, n - 1), 0),
    peakRssMb: Math.round(child.peakBytes / MB),
    retainedHeapMb: child.done?.retainedHeapBytes == null ? null : Math.round((10 * child.done.retainedHeapBytes) / MB) / 10,
    secretsAtTarget: countSecretsIn(landedText, FAULT_SECRETS),
    leaksInOutput: child.done?.leaksInOutput ?? 0,
    untyped: child.done ? child.done.threw && !child.done.typed : child.killedFor === null,
  };
  return { ...row, failures: failuresOf(row) };
}
