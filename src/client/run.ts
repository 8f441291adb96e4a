/**
 * One request's life, attempt by attempt. axios-retry drives the attempts (spectral's
 * createClient installs it); this class holds the request's own state and answers its callbacks:
 *
 *   beforeAttempt   the request interceptor: sit out our own retry wait, claim a slot from the
 *                   scope's governor (and sleep until it), arm the whole-attempt timeout
 *   validateResponse for dialects that throttle inside a 2xx (Shopify THROTTLED): is this one?
 *   retryCondition  a failed attempt: classify, plan, check write safety, tell the governor
 *   afterSuccess    a final answer: classify, tell the governor
 */
import axios, { isAxiosError, isCancel, type AxiosError, type AxiosRequestConfig, type AxiosResponse, type InternalAxiosRequestConfig } from "axios";
import { applyWriteSafety, classify, dialectById, epochOfIso, observeServerDate, parseHttpDate, plan, serverClockOffsetMs, throttleTookAttempts, writeRetrySafety, type ClaimRequest, type ClaimResult, type Decision, type HeaderInput, type ObservedBudget, type Observation, type Verdict } from "../engine";
import { abortError, cappedSleep, MAX_TIMER_MS } from "./clock";
import type { ClientContext } from "./options";
import { logPath, type PreparedRequest } from "./prepare";
import { spansWholeApi } from "./scope";
import type { ClaimScopes, StoreClaim } from "../store";
import type { AttemptRecord } from "./types";


/** A granted start missed by more than this is claimed again (normal timer lateness is a few ms). */
const LATE_START_MS = 100;
/** How many times one attempt claims again after starting late, before it goes anyway. */
const MAX_LATE_RECLAIMS = 3;
/** A probe's start, or one laid from a reading the answers may revise (ClaimResult revisable), further ahead than this is claimed again when the scope's state changes. */
const REVISIT_AHEAD_MS = 100;
/** At most this many such claims per grant: a busy scope changes with every answer. */
const MAX_REVISITS = 16;
/** Thrown before sending when the earliest slot is too far: nothing was sent. */
export class LongWait extends Error {
  constructor(
    readonly notBeforeMs: number,
    readonly why: string,
  ) {
    super("long wait");
  }
}

export type FinalState =
  | { kind: "long_wait"; notBeforeMs: number; reason: string }
  | { kind: "gave_up"; notBefore: string | null; reason: string }
  | { kind: "write_unknown"; code: string }
  | { kind: "too_large" };

declare module "axios" {
  interface AxiosRequestConfig {
    /** This request's run (a class instance, so axios's config merge keeps the reference). */
    throttleRun?: RequestRun;
  }
}

/** The verdict for an attempt that got no answer: transient for reads, unknown outcome for writes. */
function noAnswerVerdict(provider: string, code: string): Verdict {
  return {
    provider,
    status: 0,
    throttled: false,
    retryable: true,
    limitType: "server",
    minWaitMs: null,
    waitSource: null,
    retryAllowed: null,
    writeNotProcessed: false,
    scope: {},
    budget: null,
    ignored: [],
    deviations: [],
    reason: `No response (${code}): a timeout or dropped connection; retry with backoff if the request is safe to repeat.`,
  };
}

/** Whether an object has an own enumerable key (without building the array of them). */
function hasKeys(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return true;
  return false;
}

/** axios's Canceler, given the attempt's config (axios-retry only considers an error that carries it). */
type AttemptCancel = (message: string, config: InternalAxiosRequestConfig) => void;

/** An attempt's timeout: a module-level callback given its run, so no closure is kept per attempt (see armAttempt). */
function attemptTimedOut(run: RequestRun): void {
  run.timeOutAttempt();
}

/** The signal of a request whose caller gave none. */
const NEVER_ABORTED = new AbortController().signal;

export class RequestRun {
  readonly attempts: AttemptRecord[] = [];
  slotWaitMs = 0;
  lastVerdict: Verdict | null = null;
  final: FinalState | null = null;
  private retryWaitMs = 0;
  /** The retry wait is our own backoff after a throttle (the server told no wait). */
  private retryWaitIsBackoff = false;
  private previousWaitMs: number | null = null;
  private throttledAttempts = 0;
  private claimSeq: number | null = null;
  /** The claim whose answer was the last throttle reported (its retry's backoff may be cut: sitOutRetryWait). */
  private throttledSeq: number | null = null;
  private sentAtMs = 0;
  private timedOut = false;
  /** The armed attempt's timeout timer, its cancel, and whether the caller's signal listens for it (see armAttempt). */
  private attemptTimer: ReturnType<typeof setTimeout> | null = null;
  private cancelAttempt: AttemptCancel | null = null;
  private attemptConfig: InternalAxiosRequestConfig | null = null;
  private listensForAbort = false;
  /** The latest answer and its verdict, read once (validateResponse, the retry path and the result all need it). */
  private answer: { response: AxiosResponse; verdict: Verdict } | null = null;

  /** Stripe marks an answer replayed for an idempotency key seen before (https://docs.stripe.com/api/idempotent_requests): its budget is the original's. */
  private isReplay(response: AxiosResponse): boolean {
    return String((response.headers as Record<string, unknown>)["idempotent-replayed"] ?? "").toLowerCase() === "true";
  }
  private readonly unlinkSignals: Array<() => void> = [];
  private readonly claimScopes: ClaimScopes;

  constructor(
    readonly ctx: ClientContext,
    readonly req: PreparedRequest,
    clientSignal: AbortSignal | undefined,
    requestSignal: AbortSignal | undefined,
  ) {
    // The governor's scope, and the API's base scope too when the governor is a part of it.
    this.claimScopes = { governor: req.governorScope, holds: req.governorScope === req.baseScope ? [] : [req.baseScope] };
    if (!clientSignal || !requestSignal) {
      this.signal = clientSignal ?? requestSignal ?? NEVER_ABORTED;
    } else {
      const given = [clientSignal, requestSignal];
      // One controller per request, linked by listeners that are removed at the end (AbortSignal.any
      // keeps every combined signal alive in Node 20: nodejs/node#55351).
      const controller = new AbortController();
      for (const signal of given) {
        if (signal.aborted) controller.abort(signal.reason);
        const onAbort = () => controller.abort(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        this.unlinkSignals.push(() => signal.removeEventListener("abort", onAbort));
      }
      this.signal = controller.signal;
    }
  }

  /** The caller's signal(s): abort every wait and attempt of this request. */
  readonly signal: AbortSignal;

  /** The caller's signal for waits, or none (no listener is added to the shared never-aborted one). */
  private get callerSignal(): AbortSignal | undefined {
    return this.signal === NEVER_ABORTED ? undefined : this.signal;
  }

  axiosConfig(): AxiosRequestConfig {
    const { req } = this;
    // Only dialects that read a 2xx (a throttle can hide in a success body) check every answer
    // before axios resolves it: for the others a 2xx stays on axios's fast path.
    const checksSuccess = dialectById(req.provider)?.readsSuccesses === true;
    const config: AxiosRequestConfig = { url: req.url.href, method: req.method, responseType: req.responseType, throttleRun: this };
    // Empty parts are left out rather than passed empty: axios merges and serialises whatever it is
    // given (an empty params object still goes through its URL builder), about 2 % of a loopback
    // request in npm run bench:client.
    if (req.data !== undefined) config.data = req.data;
    if (hasKeys(req.headers)) config.headers = req.headers;
    if (hasKeys(req.params)) config.params = req.params;
    // Credentials never follow a redirect to another origin (axios strips these names then).
    if (req.sensitiveHeaderNames.length > 0) (config as AxiosRequestConfig & { sensitiveHeaders: string[] }).sensitiveHeaders = req.sensitiveHeaderNames;
    // The retry options are the client's (createHttp); only a success check is per request.
    if (checksSuccess) config["axios-retry"] = { validateResponse: (response: AxiosResponse) => this.validateResponse(response) };
    return config;
  }

  dispose(): void {
    this.disarm();
    for (const unlink of this.unlinkSignals) unlink();
  }

  // ---------------------------------------------------------------- before each attempt

  /**
   * The request's own wait before its next attempt. Our backoff after a throttle the server gave no
   * wait for ends as soon as the scope is known to limit requests in flight: a place frees when an
   * answer comes, not at a time, and the governor's in-flight cap holds the attempt until one does.
   * Slept out, it held a request throttled in the slow start's wave for half a second after the
   * answers had shown a concurrency limit (10 in flight behind Stripe's silence, 12 workers, faults:
   * 1.54 -> 1.17 x ideal, test/lab/governor-scenarios.test.ts). A wait the server told is always
   * slept out: it is a floor; so is a backoff after a throttle under a limit already known.
   */
  private async sitOutRetryWait(): Promise<void> {
    const { ctx, req } = this;
    if (!this.retryWaitIsBackoff || !ctx.store.sleepUntilConcurrencyLearned) return cappedSleep(ctx.clock, this.retryWaitMs, this.callerSignal);
    await ctx.store.sleepUntilConcurrencyLearned(req.governorScope, this.retryWaitMs, this.callerSignal, this.throttledSeq ?? undefined);
  }

  /**
   * The request interceptor. A store in this process (claimNow) that has a free slot now answers
   * at once, and the attempt goes without a promise in between; anything else (our own retry wait,
   * a start ahead, a shared store) goes through takeSlot.
   */
  beforeAttempt(config: InternalAxiosRequestConfig): InternalAxiosRequestConfig | Promise<InternalAxiosRequestConfig> {
    const { ctx } = this;
    if (this.retryWaitMs > 0 || !ctx.store.claimNow || this.signal.aborted) return this.attemptAfterWaits(config, null);
    const askedAtMs = ctx.clock.nowMs();
    const claimed = ctx.store.claimNow(this.claimScopes, this.claimRequest(askedAtMs, askedAtMs));
    const { result } = claimed;
    if (result.kind !== "go" || result.atMs > claimed.nowMs) return this.attemptAfterWaits(config, { claimed, askedAtMs });
    this.claimSeq = result.seq;
    this.sentAtMs = askedAtMs;
    this.armAttempt(config);
    return config;
  }

  private async attemptAfterWaits(config: InternalAxiosRequestConfig, first: { claimed: StoreClaim; askedAtMs: number } | null): Promise<InternalAxiosRequestConfig> {
    if (this.retryWaitMs > 0) {
      await this.sitOutRetryWait();
      this.retryWaitMs = 0;
    }
    await this.takeSlot(first);
    this.armAttempt(config);
    return config;
  }

  /**
   * What a claim asks: a start no later than the inline-wait cap where the API holds the scope, and
   * than the request's latest start where the scope's own pacing sets it; one draw of the random source.
   */
  private claimRequest(nowMs: number, firstAskedAtMs: number): ClaimRequest {
    const waitedMs = nowMs - firstAskedAtMs;
    // One literal (waitedMs undefined when none): a trailing conditional spread takes V8's slower copy path, per attempt.
    return { nowMs, ...this.latestStarts(nowMs), random: this.ctx.random(), waitedMs: waitedMs > 0 ? waitedMs : undefined };
  }

  /**
   * The two latest starts a claim asks for (ClaimRequest): Max Inline Wait bounds only a wait the API
   * imposes. Where the deadline leaves less than an attempt's timeout, the latest start is the
   * request's own start (prepare.ts latestStartBefore: the first attempt may always start), and the
   * first attempt may start now, not later: claimed a few ms after the request began, it was
   * deferred without a call, its not_before now.
   */
  private latestStarts(nowMs: number): { latestStartMs: number; latestPacedStartMs: number } {
    const { latestStartMs, startedAtMs } = this.req;
    const latestMs = this.attempts.length === 0 && latestStartMs === startedAtMs ? Math.max(latestStartMs, nowMs) : latestStartMs;
    return { latestStartMs: Math.min(nowMs + this.ctx.policy.maxInlineWaitMs, latestMs), latestPacedStartMs: latestMs };
  }

  /**
   * Claims the next start from the scope's governor and sleeps until it; a start too far away is a
   * LongWait. `first` is a claim already made (beforeAttempt's), answered before anything else.
   */
  private async takeSlot(first: { claimed: StoreClaim; askedAtMs: number } | null): Promise<void> {
    const { ctx, req } = this;
    let lateReclaims = 0;
    const firstAskedAtMs = first?.askedAtMs ?? ctx.clock.nowMs();
    let pending = first?.claimed ?? null;
    for (;;) {
      if (pending === null && this.signal.aborted) throw abortError(this.signal);
      const nowMs = ctx.clock.nowMs();
      const { result, nowMs: storeNowMs } = pending ?? (await ctx.store.claim(this.claimScopes, this.claimRequest(nowMs, firstAskedAtMs)));
      pending = null;
      if (result.kind === "defer") {
        this.log({ attempt: this.attempts.length + 1, status: null, waitMs: Math.max(0, result.notBeforeMs - storeNowMs), waitSource: "governor", decision: "defer_before_call", reason: result.why });
        throw new LongWait(result.notBeforeMs, result.why);
      }
      if (result.kind === "wait") {
        const waitMs = Math.max(1, result.untilMs - storeNowMs);
        await ctx.store.changed(req.governorScope, waitMs, this.callerSignal);
        this.slotWaitMs += Math.max(0, ctx.clock.nowMs() - nowMs);
        continue;
      }
      this.claimSeq = result.seq;
      const waitMs = Math.max(0, result.atMs - storeNowMs);
      if (waitMs > 0) this.log({ attempt: this.attempts.length + 1, status: null, waitMs, waitSource: "governor", decision: "wait_before_call", reason: result.why });
      let startAtMs: number | null;
      try {
        startAtMs = await this.waitForStart(result, storeNowMs);
      } catch (error) {
        if (this.claimSeq !== null) await ctx.store.release(req.governorScope, this.claimSeq);
        throw error;
      }
      // The grant held was given up for a claim again that found no start: claim afresh.
      if (startAtMs === null) continue;
      // A start taken long after the one granted (an event loop stalled by other work) would break
      // the spacing the governor promised: late starts bunch up, and the server counts the unit
      // later than the log does. Give the slot back and claim again (a few times at most).
      if (ctx.clock.nowMs() - startAtMs > LATE_START_MS && lateReclaims < MAX_LATE_RECLAIMS) {
        lateReclaims += 1;
        // The grant held now (claimed again while it waited, it may be another than the first).
        const heldSeq = this.claimSeq ?? result.seq;
        this.claimSeq = null;
        await ctx.store.release(req.governorScope, heldSeq);
        continue;
      }
      this.sentAtMs = ctx.clock.nowMs();
      return;
    }
  }

  /**
   * Sleeps until a granted start; returns it on the local clock, or null where the grant was given
   * up (claim again). Lateness counts from the grant's answer: a slow store (Redis busy with many
   * executions' claims) delays the answer, not the start it granted. A probe's start far ahead (a
   * budget's reset), or one laid from a reading the answers may revise (an estimated bucket rate, a
   * fixed window not yet told from a concurrency limit), is claimed again each time the scope's
   * state changes meanwhile: the answers still coming in may show that an earlier start is
   * allowed (a concurrency limit has no reset to wait for; a count may prove the rate faster), and a
   * grant never moves by itself. Each such claim keeps the grant unless it finds an earlier start.
   */
  private async waitForStart(granted: Extract<ClaimResult, { kind: "go" }>, storeNowMs: number): Promise<number | null> {
    const { ctx, req } = this;
    let held = granted;
    let startAtMs = ctx.clock.nowMs() + Math.max(0, granted.atMs - storeNowMs);
    for (let revisits = 0; (held.probe || held.revisable) && startAtMs - ctx.clock.nowMs() > REVISIT_AHEAD_MS && revisits < MAX_REVISITS; revisits++) {
      const sleptFromMs = ctx.clock.nowMs();
      await ctx.store.changed(req.governorScope, startAtMs - sleptFromMs, this.callerSignal);
      const nowMs = ctx.clock.nowMs();
      this.slotWaitMs += nowMs - sleptFromMs;
      // Woken by the timer: the start is due. Woken by a change, even one just before the start:
      // the grant may have been dropped (a concurrency limit learned from the answers).
      if (startAtMs - nowMs <= 0) break;
      // No draw from the random source: asking again must not move where other requests' draws fall.
      const again = await ctx.store.claim(this.claimScopes, { nowMs, ...this.latestStarts(nowMs), holding: { seq: held.seq, atMs: held.atMs } });
      if (again.result.kind !== "go") {
        this.claimSeq = null;
        return null;
      }
      held = again.result;
      this.claimSeq = held.seq;
      startAtMs = ctx.clock.nowMs() + Math.max(0, held.atMs - again.nowMs);
    }
    const waitMs = startAtMs - ctx.clock.nowMs();
    if (waitMs > 0) {
      await cappedSleep(ctx.clock, Math.min(waitMs, MAX_TIMER_MS), this.callerSignal);
      this.slotWaitMs += waitMs;
    }
    return startAtMs;
  }

  /**
   * A fresh cancel token per attempt: the whole attempt (connect, headers and body) within its
   * timeout and the deadline, and the caller's signal. axios's CancelToken rather than an
   * AbortSignal: on Node 20 an AbortSignal costs axios about 24 us per request against 5 us for
   * a token (measured side by side on loopback), a quarter of this client's whole overhead.
   *
   * What the attempt needs to be cancelled is kept in fields, with a module-level timer callback
   * and the run itself as the signal's listener (handleEvent), not in a closure stored on the run:
   * with a per-attempt disarm closure on the run, V8 promoted every request's objects to the old
   * generation (1.2 MB per scavenge against 8 KB, `node --trace-gc-nvp`), and a request on the
   * in-process adapter took 43 us instead of 35.
   */
  private armAttempt(config: InternalAxiosRequestConfig): void {
    this.disarm();
    // The cancel is given the config: axios-retry only considers an error that carries it.
    config.cancelToken = new axios.CancelToken((cancel) => {
      this.cancelAttempt = cancel as AttemptCancel;
    });
    this.attemptConfig = config;
    if (this.signal !== NEVER_ABORTED) {
      this.signal.addEventListener("abort", this, { once: true });
      this.listensForAbort = true;
    }
    const timeoutMs = Math.max(1, Math.min(this.req.attemptTimeoutMs, this.req.deadlineMs - this.ctx.clock.nowMs()));
    this.timedOut = false;
    this.attemptTimer = setTimeout(attemptTimedOut, Math.min(timeoutMs, MAX_TIMER_MS), this);
    config.timeout = 0;
  }

  /** The caller's signal aborted: cancel the attempt under way (EventTarget calls a listener object's handleEvent). */
  handleEvent(): void {
    this.listensForAbort = false;
    this.cancel("aborted by the caller");
  }

  /** The armed attempt ran out of time: cancel it, marked as a timeout (retried as one, not taken for the caller's abort). */
  timeOutAttempt(): void {
    this.timedOut = true;
    this.cancel("attempt timeout");
  }

  /** Cancels the armed attempt (its timeout, or the caller's abort). */
  private cancel(message: string): void {
    if (this.attemptConfig) this.cancelAttempt?.(message, this.attemptConfig);
  }

  private disarm(): void {
    if (this.attemptTimer !== null) {
      clearTimeout(this.attemptTimer);
      this.attemptTimer = null;
    }
    if (this.listensForAbort) {
      this.signal.removeEventListener("abort", this);
      this.listensForAbort = false;
    }
    this.cancelAttempt = null;
    this.attemptConfig = null;
  }

  // ---------------------------------------------------------------- answers

  private classifyResponse(response: AxiosResponse): Verdict {
    if (this.answer?.response === response) return this.answer.verdict;
    // axios' headers object holds the names as own properties (arrays for repeated ones), which is
    // the shape classify reads; no copy is made.
    const headers = response.headers as HeaderInput;
    const host = this.req.url.host;
    const nowMs = this.ctx.clock.nowMs();
    const known = this.ctx.serverClocks.has(host);
    let verdict = this.classifyAt(response, headers, nowMs, host);
    // Answers that speak of a limit also teach the server's clock (their instants are read against it).
    if (verdict.budget !== null || verdict.throttled) {
      this.learnServerClock(host, headers, nowMs);
      // The first such answer is read again against what its own Date taught: read against the
      // truncated Date alone, its reset is up to a second late (a window of 1 s then looks like
      // the same window as the next one, whose count is back up: a concurrency limit, wrongly).
      if (!known && this.ctx.serverClocks.has(host)) verdict = this.classifyAt(response, headers, nowMs, host);
    }
    this.answer = { response, verdict };
    return verdict;
  }

  private classifyAt(response: AxiosResponse, headers: HeaderInput, nowMs: number, host: string): Verdict {
    const offset = serverClockOffsetMs(this.ctx.serverClocks.get(host) ?? null);
    return classify(
      { request: { method: this.req.method, url: this.req.url.href }, response: { status: response.status, headers, body: response.data as unknown }, provider: this.req.hostFacts.classifyProvider },
      { nowMs, requestUrlParts: this.req.urlParts, serverClockOffsetMs: offset ?? undefined },
    );
  }

  private learnServerClock(host: string, headers: HeaderInput, receivedAtMs: number): void {
    const date = headers.date ?? headers.Date;
    if (typeof date !== "string") return;
    // A Date names a whole second, so most answers repeat the last one seen: parsed once.
    let last = this.ctx.lastServerDate;
    if (last === null || last.text !== date) {
      const parsed = parseHttpDate(date, receivedAtMs);
      if (!parsed) return;
      last = this.ctx.lastServerDate = { text: date, epochMs: parsed.epochMs };
    }
    const clocks = this.ctx.serverClocks;
    const next = observeServerDate(clocks.get(host) ?? null, last.epochMs, this.sentAtMs, receivedAtMs);
    if (next === null) return;
    // A client talks to few hosts; bounded so a crawler of many hosts cannot grow it.
    if (!clocks.has(host) && clocks.size >= 256) clocks.clear();
    clocks.set(host, next);
  }

  /** Only for dialects that throttle inside a 2xx: such an answer goes down the retry path like a 429. */
  validateResponse(response: AxiosResponse): boolean {
    const verdict = this.classifyResponse(response);
    if (verdict.throttled) return false;
    return response.status < 400 || !verdict.retryable;
  }

  /** A final answer: classified and told to the governor (without a promise when the store is in this process). */
  afterSuccess(response: AxiosResponse): Verdict | Promise<Verdict> {
    this.disarm();
    const verdict = this.classifyResponse(response);
    this.lastVerdict = verdict;
    const reported = this.report(verdict, null, true, this.isReplay(response));
    return reported ? reported.then(() => this.recordSuccess(response, verdict)) : this.recordSuccess(response, verdict);
  }

  private recordSuccess(response: AxiosResponse, verdict: Verdict): Verdict {
    this.attempts.push({ status: response.status, waitMs: 0, waitSource: null });
    this.log({ attempt: this.attempts.length, status: response.status, waitMs: 0, waitSource: null, decision: "done", remaining: verdict.budget?.remaining ?? null, reason: verdict.reason });
    return verdict;
  }

  private failureVerdict(error: AxiosError): Verdict {
    if (error.response) return this.classifyResponse(error.response);
    const code = this.timedOut ? "ETIMEDOUT" : (error.code ?? "ERR_NETWORK");
    return noAnswerVerdict(this.req.provider, code);
  }

  /** axios-retry's retryCondition: should this failed attempt be repeated? */
  async afterFailure(error: AxiosError): Promise<boolean> {
    this.disarm();
    const aborted = this.signal.aborted || (isCancel(error) && !this.timedOut);
    if (aborted) {
      await this.reportLost();
      return false;
    }
    if (/maxContentLength/.test(error.message)) {
      this.final = { kind: "too_large" };
      await this.reportLost();
      return false;
    }
    const verdict = this.failureVerdict(error);
    this.lastVerdict = verdict;
    const nowMs = this.ctx.clock.nowMs();
    if (verdict.throttled) this.throttledAttempts += 1;
    const history = {
      attempts: this.attempts.length + 1,
      throttledAttempts: this.throttledAttempts,
      firstAttemptAtMs: this.req.startedAtMs,
      previousWaitMs: this.previousWaitMs,
      method: this.req.method,
      othersUnseen: (this.ctx.store.backing?.() ?? this.ctx.store.kind) === "cross-flow",
      placesFreeOnAnswer: this.ctx.store.freesOnAnswerNow?.(this.req.governorScope) === true,
      claimsAllSeen: this.ctx.store.seesEveryClaimNow?.(this.req.governorScope) === true,
    };
    const planned = plan(verdict, history, { ...this.ctx.policy, deadlineMs: Number.isFinite(this.req.latestStartMs) ? this.req.latestStartMs : null }, { nowMs, random: this.ctx.random });
    const safety = writeRetrySafety({ method: this.req.method, idempotencyKey: this.req.idempotencyKey, body: this.req.data }, error.response ? verdict : null, { retryWritesAfterThrottle: this.ctx.retryWritesAfterThrottle });
    const decision = applyWriteSafety(planned, safety);
    const unsafe = decision !== planned;
    if (!error.response && !safety.repeatable) this.final = { kind: "write_unknown", code: this.timedOut ? "ETIMEDOUT" : (error.code ?? "ERR_NETWORK") };
    await this.report(verdict, decision, Boolean(error.response), error.response ? this.isReplay(error.response) : false);
    this.recordAttempt(error.response?.status ?? null, verdict, decision);
    return this.settle(decision, verdict, nowMs, unsafe);
  }

  private settle(decision: Decision, verdict: Verdict, nowMs: number, unsafe: boolean): boolean {
    if (decision.decision === "retry") {
      this.retryWaitMs = decision.waitMs;
      this.retryWaitIsBackoff = verdict.throttled && decision.waitSource.startsWith("backoff");
      this.previousWaitMs = decision.waitMs;
      return true;
    }
    if (decision.decision === "defer") this.final = { kind: "long_wait", notBeforeMs: nowMs + decision.waitMs, reason: decision.reason };
    else if (decision.decision === "fail" && decision.notBefore !== null && throttleTookAttempts(verdict, this.throttledAttempts) && !unsafe) {
      // The attempts went to a rate limit (plan.ts resumeAfterThrottle): deferred with the time to resume, not given up.
      this.final = { kind: "long_wait", notBeforeMs: Date.parse(decision.notBefore), reason: decision.reason };
    }
    else if (this.final === null) this.final = { kind: "gave_up", notBefore: decision.decision === "fail" ? decision.notBefore : null, reason: decision.reason };
    return false;
  }

  private recordAttempt(status: number | null, verdict: Verdict, decision: Decision): void {
    const retrying = decision.decision === "retry";
    const waitMs = decision.decision === "retry" || decision.decision === "defer" ? decision.waitMs : 0;
    this.attempts.push({ status, waitMs: retrying ? waitMs : 0, waitSource: retrying ? decision.waitSource : null });
    this.log({ attempt: this.attempts.length, status, waitMs, waitSource: retrying ? decision.waitSource : verdict.waitSource, decision: decision.decision, remaining: verdict.budget?.remaining ?? null, reason: decision.reason });
  }

  // ---------------------------------------------------------------- the governor

  /**
   * The window's length as the governor is told it. Beside a reset (the IETF policy's w=) only where
   * the host shows its count on throttles alone: there it is all a pacer has between them (a bucket
   * of 60 per s behind the fields on its 429s only went at 20 per s without it, 2.59 -> 1.13 x
   * ideal). Where successes show the count and its reset, those teach the window and its kind
   * (observe.ts learnFromReset); with the length shown, a fixed window is told from a sliding one only
   * by units of ours a sliding window would still count, and read as sliding, the log frees units
   * the fixed window has not: blind cross-flow executions (the suite's fan-out of 50 cross-flow,
   * 0 -> 60 throttled), and on real sockets even one process's 8 workers (the suite's IETF fan-out
   * throttled in 8 of 14 runs, 1.34 x ideal). A length with no reset (HubSpot's rolling window) is
   * always told.
   */
  private shownWindowMs(budget: NonNullable<Verdict["budget"]>, throttled: boolean): number | null {
    if (budget.windowMs === undefined) return null;
    return budget.resetAt === null || (throttled && !this.req.hostFacts.budgetOnSuccess) ? budget.windowMs : null;
  }

  private observedBudget(verdict: Verdict, replayed: boolean): ObservedBudget | null {
    const budget = verdict.budget;
    // A replayed answer (an idempotency key seen before) carries the original request's budget.
    if (!budget || replayed) return null;
    const resetAtMs = budget.resetAt === null ? null : epochOfIso(budget.resetAt);
    return {
      remaining: Math.max(0, budget.remaining - this.ctx.budgetThreshold),
      limit: budget.limit,
      resetAtMs: resetAtMs !== null && Number.isFinite(resetAtMs) ? resetAtMs : null,
      windowMs: this.shownWindowMs(budget, verdict.throttled),
      // Not told as the window where the resets teach it (shownWindowMs), but its length all the same.
      policyWindowMs: budget.windowMs ?? null,
      restorePerSecond: budget.restorePerSecond ?? null,
      restoreEstimated: budget.restoreEstimated === true,
      restoreFloorPerSecond: budget.restoreFloorPerSecond ?? null,
      unitsPerRequest: budget.requestUnits ?? null,
      concurrent: budget.concurrent === true,
      resetCountsDown: budget.resetCountsDown === true,
    };
  }

  /**
   * Tells the governor what this attempt's answer showed; a limit that spans the whole API holds its
   * base scope too. Returns a promise only when the store had to be waited for (observeNow absent,
   * or a base-scope hold to write).
   */
  private report(verdict: Verdict, decision: Decision | null, answered: boolean, replayed = false): Promise<void> | undefined {
    const seq = this.claimSeq;
    if (seq === null) return undefined;
    this.claimSeq = null;
    this.throttledSeq = verdict.throttled ? seq : null;
    const { ctx, req } = this;
    const nowMs = ctx.clock.nowMs();
    const planned = decision && (decision.decision === "retry" || decision.decision === "defer") ? decision.waitMs : null;
    const waitMs = verdict.throttled ? (verdict.minWaitMs ?? planned) : null;
    // The host shows its count on successes, not only on throttles (shownWindowMs).
    if (verdict.budget !== null && !verdict.throttled && !replayed) req.hostFacts.budgetOnSuccess = true;
    const observation: Observation = {
      seq,
      sentAtMs: this.sentAtMs,
      nowMs,
      kind: verdict.throttled ? "throttled" : answered ? "ok" : "lost",
      limitType: verdict.limitType,
      waitMs,
      waitFromServer: verdict.throttled && verdict.minWaitMs !== null,
      // Retry-After is whole seconds (delay-seconds or an HTTP-date, RFC 9110 §10.2.3): rounded up.
      // Always present, so the object keeps one shape (a spread here put every report on V8's slow path).
      waitResolutionMs: verdict.throttled && verdict.waitSource === "retry-after" ? 1000 : undefined,
      budget: this.observedBudget(verdict, replayed),
      reason: req.redactor.text(verdict.reason),
      counted: !replayed,
    };
    const holdBaseUntilMs = verdict.throttled && waitMs !== null && req.governorScope !== req.baseScope && spansWholeApi(req.requestParts, verdict.scope) ? nowMs + waitMs : null;
    if (ctx.store.observeNow && holdBaseUntilMs === null) {
      ctx.store.observeNow(req.governorScope, observation);
      return undefined;
    }
    return this.reportToStore(observation, holdBaseUntilMs, verdict);
  }

  private async reportToStore(observation: Observation, holdBaseUntilMs: number | null, verdict: Verdict): Promise<void> {
    const { ctx, req } = this;
    await ctx.store.observe(req.governorScope, observation);
    if (holdBaseUntilMs !== null) await ctx.store.holdUntil(req.baseScope, holdBaseUntilMs, req.redactor.text(verdict.reason), verdict.limitType);
  }

  private async reportLost(): Promise<void> {
    const seq = this.claimSeq;
    if (seq === null) return;
    this.claimSeq = null;
    const nowMs = this.ctx.clock.nowMs();
    await this.ctx.store.observe(this.req.governorScope, { seq, sentAtMs: this.sentAtMs, nowMs, kind: "lost", limitType: "none", waitMs: null, waitFromServer: false, budget: null, reason: "no answer" });
  }

  log(fields: Record<string, unknown>): void {
    const { ctx, req } = this;
    if (!ctx.logger) return;
    const line = JSON.stringify({ event: "throttle_decision", provider: req.provider, method: req.method, path: logPath(req), scope: req.governorScope, ...fields });
    ctx.logger.info(req.redactor.text(line));
  }
}

export { isAxiosError };
