/**
 * `workload.processes: K`: the scenario's workers split over K child processes (process-child.ts),
 * each building its own strategy runners (its own clients and stores), sharing only what separate
 * Prismatic runners share: the API (a real loopback socket), Redis, and cross-flow state as
 * Prismatic keeps it (here in the parent: each job loads it from the parent when it starts and
 * hands it back when it ends, last finisher wins). Jobs come from one queue in the parent, so a
 * worker takes the next job whichever process it lives in.
 */
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import type { Job } from "./strategies/common";
import type { JobOutcome, Scenario } from "./types";
import type { JobRecord } from "./workers";

/** What a child says. */
export type ChildSays =
  | { kind: "ready" }
  | { kind: "next"; worker: number }
  | { kind: "state"; crossFlowState: Record<string, unknown> }
  | { kind: "done"; jobId: string; outcome: JobOutcome; endAtMs: number }
  | { kind: "finished" }
  | { kind: "error"; message: string };

/** What the parent says. */
export type ParentSays =
  | { kind: "start"; scenario: Scenario; strategy: string; baseUrl: string; redis: { url: string; keyPrefix: string } | undefined; workers: number[] }
  | { kind: "job"; worker: number; job: Job | null; crossFlowState: Record<string, unknown> };

const REPO_ROOT = path.resolve(__dirname, "..", "..");

/** Children forked before the run (tsx takes a while to start), waiting for their start message. */
export interface ProcessPool {
  /** Runs the jobs on the children's workers; resolves when every child has finished. */
  run(input: { scenario: Scenario; strategy: string; baseUrl: string; redis?: { url: string; keyPrefix: string }; jobs: readonly Job[]; signal?: AbortSignal }): Promise<JobRecord[]>;
  kill(): void;
}

export async function forkPool(processes: number): Promise<ProcessPool> {
  const children: ChildProcess[] = [];
  const ready: Promise<void>[] = [];
  for (let i = 0; i < processes; i++) {
    const child = fork(path.join(__dirname, "process-child.ts"), [], { cwd: REPO_ROOT, execArgv: ["--import", "tsx"], stdio: ["ignore", "ignore", "inherit", "ipc"] });
    children.push(child);
    ready.push(
      new Promise<void>((resolve, reject) => {
        child.once("message", (message: ChildSays) => (message.kind === "ready" ? resolve() : reject(new Error(`child ${i} did not start`))));
        child.once("exit", (code) => reject(new Error(`child ${i} exited with code ${code} before it was ready`)));
      }),
    );
  }
  const kill = () => children.forEach((c) => c.exitCode === null && c.kill("SIGKILL"));
  try {
    await Promise.all(ready);
  } catch (error) {
    kill();
    throw error;
  }
  return { run: (input) => runOnChildren(children, input), kill };
}

function runOnChildren(children: ChildProcess[], input: Parameters<ProcessPool["run"]>[0]): Promise<JobRecord[]> {
  const records: JobRecord[] = [];
  let next = 0;
  let crossFlowState: Record<string, unknown> = {};
  // Workers dealt out round-robin: 50 over 5 processes is 10 each.
  const workersOf = children.map((_, p) => Array.from({ length: input.scenario.workload.workers }, (_, w) => w).filter((w) => w % children.length === p));
  return new Promise<JobRecord[]>((resolve, reject) => {
    let finished = 0;
    const done = children.map(() => false);
    const onAbort = () => {
      next = input.jobs.length;
    };
    input.signal?.addEventListener("abort", onAbort, { once: true });
    children.forEach((child, p) => {
      child.on("message", (message: ChildSays) => {
        if (message.kind === "next") {
          const job = next < input.jobs.length ? input.jobs[next++]! : null;
          child.send({ kind: "job", worker: message.worker, job, crossFlowState } satisfies ParentSays);
        } else if (message.kind === "state") {
          crossFlowState = message.crossFlowState;
        } else if (message.kind === "done") {
          records.push({ jobId: message.jobId, outcome: message.outcome, endAtMs: message.endAtMs });
        } else if (message.kind === "error") {
          reject(new Error(`child ${p}: ${message.message}`));
        } else if (message.kind === "finished") {
          done[p] = true;
          if (++finished < children.length) return;
          input.signal?.removeEventListener("abort", onAbort);
          resolve(records);
        }
      });
      // "close" comes after the child's last message (its IPC channel is drained).
      child.once("close", (code) => {
        if (!done[p]) reject(new Error(`child ${p} exited with code ${code} before its workers finished`));
      });
      child.send({ kind: "start", scenario: input.scenario, strategy: input.strategy, baseUrl: input.baseUrl, redis: input.redis, workers: workersOf[p]! } satisfies ParentSays);
    });
  });
}
