/**
 * A Prismatic execution emulator on a fake clock, modelling the platform rules this component
 * depends on (https://prismatic.io/docs/components/persist-data and
 * https://prismatic.io/docs/monitor-instances/retry-and-replay/automatic-retry):
 *   - an execution loads persisted (cross-flow) state when it starts;
 *   - steps run in order; a step's returned crossFlowState replaces the execution's working copy,
 *     which later steps of the same execution see;
 *   - state is written when the execution ends, and only if it succeeded; last writer wins
 *     (the whole object, the stricter of the two documented readings);
 *   - a failed asynchronous execution is re-run by Flow retry from its first step, whole minutes
 *     later (attempts <= 10, minutes 0-60, optional doubling), with the same trigger payload.
 */

export interface FlowRetryConfig {
  attempts: number;
  minutesBetween: number;
  exponential?: boolean;
}

export interface StepContext {
  crossFlowState: Record<string, unknown>;
  startedAt: string;
  executionId: string;
  /** 0 for the triggered run, n for the n-th Flow retry. */
  retryAttempt: number;
}

export interface StepOutcome {
  branch?: string;
  data?: unknown;
  crossFlowState?: Record<string, unknown>;
}

export type Step = (ctx: StepContext) => Promise<StepOutcome | undefined>;

export interface ExecutionRecord {
  id: string;
  retryAttempt: number;
  startedAtMs: number;
  endedAtMs: number;
  status: "succeeded" | "failed";
  error?: unknown;
  branches: Array<string | undefined>;
  wroteState: boolean;
}

export interface EmulatorClock {
  nowMs(): number;
  setMs(ms: number): void;
}

const MINUTE_MS = 60_000;

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value ?? {})) as T;
}

export class Execution {
  private working: Record<string, unknown>;
  private failed: unknown = undefined;
  private didFail = false;
  readonly branches: Array<string | undefined> = [];
  readonly startedAtMs: number;

  constructor(
    private readonly emulator: PrismaticEmulator,
    readonly id: string,
    readonly retryAttempt: number,
  ) {
    this.startedAtMs = emulator.clock.nowMs();
    // Loaded once, at the start: later writes by other executions are not seen.
    this.working = copy(emulator.storedCrossFlowState);
  }

  async run(steps: readonly Step[]): Promise<void> {
    for (const step of steps) {
      try {
        const outcome = await step({ crossFlowState: copy(this.working), startedAt: new Date(this.startedAtMs).toISOString(), executionId: this.id, retryAttempt: this.retryAttempt });
        this.branches.push(outcome?.branch);
        if (outcome?.crossFlowState) this.working = copy(outcome.crossFlowState);
      } catch (error) {
        // "If one step throws an error, the integration stops running."
        this.didFail = true;
        this.failed = error;
        return;
      }
    }
  }

  end(): ExecutionRecord {
    const wroteState = !this.didFail;
    if (wroteState) this.emulator.storedCrossFlowState = copy(this.working);
    const record: ExecutionRecord = {
      id: this.id,
      retryAttempt: this.retryAttempt,
      startedAtMs: this.startedAtMs,
      endedAtMs: this.emulator.clock.nowMs(),
      status: this.didFail ? "failed" : "succeeded",
      error: this.failed,
      branches: this.branches,
      wroteState,
    };
    this.emulator.executions.push(record);
    return record;
  }
}

interface Pending {
  atMs: number;
  retryAttempt: number;
  steps: readonly Step[];
  seq: number;
}

export class PrismaticEmulator {
  storedCrossFlowState: Record<string, unknown> = {};
  readonly executions: ExecutionRecord[] = [];
  private queue: Pending[] = [];
  private seq = 0;
  private nextId = 1;

  constructor(
    readonly clock: EmulatorClock,
    private readonly flowRetry: FlowRetryConfig | null = null,
  ) {
    if (flowRetry && (flowRetry.attempts < 0 || flowRetry.attempts > 10 || flowRetry.minutesBetween < 0 || flowRetry.minutesBetween > 60)) {
      throw new Error("Flow retry allows 0-10 attempts and 0-60 minutes between attempts");
    }
  }

  /** Starts an execution now (state loaded now); call end() on it to write state. */
  begin(retryAttempt = 0): Execution {
    return new Execution(this, `exec-${this.nextId++}`, retryAttempt);
  }

  /** An asynchronous trigger at a given time. */
  trigger(atMs: number, steps: readonly Step[]): void {
    this.queue.push({ atMs, retryAttempt: 0, steps, seq: this.seq++ });
  }

  /** When Flow retry re-runs a failure: whole minutes after it ended (Prismatic's precision is a minute). */
  retryAtMs(endedAtMs: number, retryAttempt: number): number {
    const minutes = (this.flowRetry?.minutesBetween ?? 0) * (this.flowRetry?.exponential ? 2 ** (retryAttempt - 1) : 1);
    const delayMs = Math.min(minutes * MINUTE_MS, 24 * 60 * MINUTE_MS);
    return Math.ceil((endedAtMs + delayMs) / MINUTE_MS) * MINUTE_MS;
  }

  /** Runs every queued execution (and the Flow retries they cause) in time order, up to untilMs. */
  async runUntil(untilMs: number): Promise<ExecutionRecord[]> {
    const done: ExecutionRecord[] = [];
    for (;;) {
      this.queue.sort((a, b) => a.atMs - b.atMs || a.seq - b.seq);
      const next = this.queue[0];
      if (!next || next.atMs > untilMs) break;
      this.queue.shift();
      if (next.atMs > this.clock.nowMs()) this.clock.setMs(next.atMs);
      const execution = this.begin(next.retryAttempt);
      await execution.run(next.steps);
      const record = execution.end();
      done.push(record);
      if (record.status === "failed" && this.flowRetry && next.retryAttempt < this.flowRetry.attempts) {
        const retryAttempt = next.retryAttempt + 1;
        this.queue.push({ atMs: this.retryAtMs(record.endedAtMs, retryAttempt), retryAttempt, steps: next.steps, seq: this.seq++ });
      }
    }
    return done;
  }
}
