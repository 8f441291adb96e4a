/**
 * The governor state: a fresh one, a checked copy of one read from outside (cross-flow state or
 * Redis may hold a state written by another version, or tampered with), and the bound that keeps
 * it small.
 */
import { MAX_EPOCH_MS } from "../time";
import type { LimitType } from "../types";
import type { Anchor, Concurrency, GovernorState, InFlightTuple, Refill, SlotTuple } from "./types";

/** At most this many slots are kept; past it, the neighbours sent closest together are merged (their count kept, at the later of their times). */
export const MAX_SLOTS = 256;
/** At most this many claims are tracked in flight. */
export const MAX_IN_FLIGHT = 1000;
/** How long a slot is kept when the window length is unknown. */
export const UNKNOWN_WINDOW_RETAIN_MS = 60_000;
/** Readings of one reset through whole-second rounding (epoch or delta seconds) differ by less than this. */
export const ROUNDING_MS = 1000;
/**
 * How close before a reset a request may have been counted after it: resets are read against the
 * server's Date, whose offset estimate drifts by some tens of ms as answers narrow it.
 */
export const RESET_DRIFT_MARGIN_MS = ROUNDING_MS / 4;
/**
 * A claim started this long before a reading's own request reached the server before it did,
 * though its answer is still out: two round trips, and at least this many ms.
 */
export const LATE_CLAIM_MIN_MS = 100;
/** A window nothing showed: assumed (one second) when a throttle told no wait, or lengthened since by a throttle (outlasted). */
export function windowIsGuessed(state: Pick<GovernorState, "windowSource">): boolean {
  return state.windowSource === "assumed" || state.windowSource === "outlasted";
}
/** The window in which a bucket of `units` refills at `perSecond` units a second, whole ms (at least 1). */
export function windowAtRateMs(units: number, perSecond: number): number {
  return Math.max(1, Math.round((units / perSecond) * 1000));
}

/** A bucket whose rate is an estimate (documented for its size, or bounded from whole-second resets): its own count may prove it faster. */
export function bucketRateEstimated(state: Pick<GovernorState, "refill" | "windowSource">): boolean {
  return state.refill === "bucket" && state.windowSource === "inferred";
}

/** A reset that brought back all but this share of the limit refills in full (a fixed window). */
const FULL_REFILL_TOLERANCE = 0.02;

/** The units a count may fall short of the limit and still read as back in full (at least one: the count is shown rounded). */
export function fullRefillToleranceUnits(limit: number): number {
  return Math.max(1, Math.ceil(limit * FULL_REFILL_TOLERANCE));
}

/** How far from a whole number of seconds a distance between two resets is still read as one: the Date's drift. */
const SNAP_MS = RESET_DRIFT_MARGIN_MS;

/**
 * A distance between two resets read from whole-second fields (epoch or delta seconds, measured
 * against the server's Date, whose offset estimate moves as answers narrow it) is a whole number of
 * seconds give or take that drift: 920 ms between two readings of a 1 s window's resets. Taken as
 * it is, windows laid end to end from it run early, a little more each window, until a start lands
 * before the server's reset. Just short of a whole number of seconds, it is that number; never
 * shorter than read (10,078 ms read as 10 s lays the next window 78 ms before the server's, which
 * cost five processes sharing Redis a throttle, and so a fourth window, in about one run in four).
 */
export function wholeSecondsNear(distanceMs: number): number {
  const seconds = Math.round(distanceMs / ROUNDING_MS);
  return seconds >= 1 && Math.abs(distanceMs - seconds * ROUNDING_MS) <= SNAP_MS ? Math.max(distanceMs, seconds * ROUNDING_MS) : distanceMs;
}

/** The largest limit, window (ms), unit count or reserve a state keeps: a figure beyond it is not a budget. */
export const MAX_FIGURE = 1e12;
/** The most units per ms others are taken to spend. */
export const MAX_OTHERS_PER_MS = 1e6;
/**
 * The largest seq or streak a state is read with: each operation adds at most one, so a state
 * read below it stays a safe integer (and readable) for longer than any scope lives.
 */
const MAX_COUNT = 2 ** 52;
const MAX_TEXT = 300;

const CONCURRENCY: readonly string[] = ["unknown", "shown", "testing", "inferred", "silent", "ruled-out"];
const LIMIT_TYPES: readonly string[] = ["burst", "quota", "concurrency", "cost", "contention", "server", "permission", "validation", "none", "unknown"];

export function emptyState(nowMs: number): GovernorState {
  return {
    v: 1,
    seq: 0,
    lastGrantMs: 0,
    notBeforeMs: 0,
    notBeforeReason: "",
    notBeforeType: "unknown",
    limit: null,
    windowMs: null,
    windowSource: null,
    refill: "window",
    unitsPerRequest: 1,
    slots: [],
    anchor: null,
    probe: null,
    inFlight: [],
    inFlightCap: null,
    inFlightCapGrows: false,
    throttleStreak: 0,
    breakerOpen: false,
    okInWindow: 0,
    windowStartMs: 0,
    learnedAtSeq: 0,
    lessonSentAtMs: 0,
    lessonSeq: 0,
    rttMs: 0,
    othersPerMs: 0,
    reserveUnits: 0,
    concurrency: "unknown",
    refillSinceMs: 0,
    refillSeenUnits: 0,
    budgetOnSuccess: false,
    probedFromWindowMs: 0,
    pacedCleanUnits: 0,
    estimateProbeFailed: false,
    estimateFloorSeq: 0,
    lastAnsweredAtMs: 0,
    windowFloorMs: 0,
    trialSeq: 0,
    countResetAtMs: 0,
    updatedAtMs: clampTime(nowMs),
  };
}

/** Every instant the governor keeps is a whole ms within what a Date can hold (ECMA-262 §21.4.1.1). */
export function clampTime(ms: number): number {
  if (!Number.isFinite(ms)) return ms > 0 ? MAX_EPOCH_MS : 0;
  return Math.min(MAX_EPOCH_MS, Math.max(0, Math.round(ms)));
}

export function clip(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
}

/** A deep copy (the state is plain JSON data; structuredClone is slower for small objects). */
export function copyState(state: GovernorState): GovernorState {
  return {
    ...state,
    slots: state.slots.map((s) => [s[0], s[1], s[2]] as SlotTuple),
    anchor: state.anchor ? { ...state.anchor } : null,
    probe: state.probe ? { ...state.probe } : null,
    inFlight: state.inFlight.map((f): InFlightTuple => [f[0], f[1], f[2]]),
  };
}

const isTime = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= MAX_EPOCH_MS;
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isSmallCount = (v: unknown): v is number => isCount(v) && v <= MAX_COUNT;
/** Units (a GraphQL query's cost can be a fraction): finite and not negative. */
const isUnits = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;
export const isPositive = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v > 0 && v <= MAX_FIGURE;
/** Instants are kept in whole ms (a fraction written elsewhere is rounded, as clampTime does). */
const wholeMs = Math.round;

function readSlots(value: unknown): SlotTuple[] | null {
  if (!Array.isArray(value) || value.length > MAX_SLOTS * 4) return null;
  const slots: SlotTuple[] = [];
  for (const item of value) {
    if (!Array.isArray(item) || item.length !== 3 || !isTime(item[0]) || !isCount(item[1]) || !isPositive(item[2])) return null;
    slots.push([wholeMs(item[0]), item[1], item[2]]);
  }
  slots.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return slots;
}

function readAnchor(value: unknown): Anchor | null | undefined {
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) return undefined;
  const a = value as Record<string, unknown>;
  if (!(typeof a.remaining === "number" && Number.isFinite(a.remaining)) || !isCount(a.seq) || !isTime(a.atMs) || !isTime(a.resetAtMs)) return undefined;
  const lateUnits = typeof a.lateUnits === "number" && Number.isFinite(a.lateUnits) && a.lateUnits >= 0 ? a.lateUnits : 0;
  // A state written before answers were timed: the send is the earliest the answer can have come.
  const answeredAtMs = isTime(a.answeredAtMs) ? wholeMs(a.answeredAtMs) : wholeMs(a.atMs);
  // Unknown: none, which no count fits (the next reading gives it).
  const ownOutAtSend = isSmallCount(a.ownOutAtSend) ? a.ownOutAtSend : 0;
  const anchor: Anchor = { remaining: Math.max(0, a.remaining), seq: a.seq, atMs: wholeMs(a.atMs), resetAtMs: wholeMs(a.resetAtMs), lateUnits, answeredAtMs, ownOutAtSend };
  // Absent (a state written before it was kept, or the same as resetAtMs): the merged reset stands for it.
  if (isTime(a.shownResetAtMs) && wholeMs(a.shownResetAtMs) !== anchor.resetAtMs) anchor.shownResetAtMs = wholeMs(a.shownResetAtMs);
  return anchor;
}

/** A value in a few characters for an error line; JSON.stringify throws on a BigInt or a cycle, this does not. */
function shortText(value: unknown): string {
  try {
    return String(JSON.stringify(value)).slice(0, 20);
  } catch {
    return typeof value;
  }
}

/**
 * Reads a state written elsewhere. Anything malformed gives null with the reason, never an
 * exception: the caller starts the scope afresh (waiting too little is corrected by the next
 * throttle; a broken store must not fail a step).
 */
export function readState(value: unknown): { state: GovernorState } | { error: string } {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: "not an object" };
  const v = value as Record<string, unknown>;
  if (v.v !== 1) return { error: `unknown version ${shortText(v.v)}` };
  const slots = readSlots(v.slots);
  if (slots === null) return { error: "slots are malformed" };
  const anchor = readAnchor(v.anchor ?? null);
  if (anchor === undefined) return { error: "anchor is malformed" };
  const numbers: Array<[string, (x: unknown) => boolean]> = [
    ["seq", isSmallCount],
    ["lastGrantMs", isTime],
    ["notBeforeMs", isTime],
    ["throttleStreak", isSmallCount],
    ["okInWindow", isUnits],
    ["windowStartMs", isTime],
    ["learnedAtSeq", isCount],
    ["rttMs", isTime],
    ["updatedAtMs", isTime],
    ["unitsPerRequest", isPositive],
  ];
  for (const [name, check] of numbers) if (!check(v[name])) return { error: `${name} is not a valid number` };
  for (const name of ["limit", "windowMs", "inFlightCap"]) if (v[name] !== null && !isPositive(v[name])) return { error: `${name} is not a positive number or null` };
  const refill = v.refill as Refill;
  if (refill !== "window" && refill !== "fixed" && refill !== "bucket") return { error: "refill is not window, fixed or bucket" };
  const windowSource = v.windowSource;
  if (windowSource !== null && windowSource !== "shown" && windowSource !== "inferred" && windowSource !== "assumed" && windowSource !== "outlasted") return { error: "windowSource is malformed" };
  const probe = v.probe === null ? null : readProbe(v.probe);
  if (probe === undefined) return { error: "probe is malformed" };
  const inFlight = readInFlight(v.inFlight);
  if (inFlight === null) return { error: "inFlight is malformed" };
  // A state written before the refill was counted (or with a count out of range): not counting.
  const refillCounted = isTime(v.refillSinceMs) && typeof v.refillSeenUnits === "number" && Number.isFinite(v.refillSeenUnits) && Math.abs(v.refillSeenUnits) <= MAX_FIGURE;
  const state: GovernorState = {
    v: 1,
    seq: v.seq as number,
    lastGrantMs: wholeMs(v.lastGrantMs as number),
    notBeforeMs: wholeMs(v.notBeforeMs as number),
    notBeforeReason: typeof v.notBeforeReason === "string" ? clip(v.notBeforeReason) : "",
    notBeforeType: typeof v.notBeforeType === "string" && LIMIT_TYPES.includes(v.notBeforeType) ? (v.notBeforeType as LimitType) : "unknown",
    limit: v.limit as number | null,
    windowMs: v.windowMs as number | null,
    windowSource,
    refill,
    unitsPerRequest: v.unitsPerRequest as number,
    slots,
    anchor,
    probe,
    inFlight,
    inFlightCap: v.inFlightCap as number | null,
    inFlightCapGrows: v.inFlightCapGrows === true,
    throttleStreak: v.throttleStreak as number,
    breakerOpen: v.breakerOpen === true,
    okInWindow: v.okInWindow as number,
    windowStartMs: wholeMs(v.windowStartMs as number),
    learnedAtSeq: v.learnedAtSeq as number,
    lessonSentAtMs: isTime(v.lessonSentAtMs) ? wholeMs(v.lessonSentAtMs) : 0,
    lessonSeq: isCount(v.lessonSeq) ? (v.lessonSeq as number) : 0,
    rttMs: v.rttMs as number,
    othersPerMs: isUnits(v.othersPerMs) && v.othersPerMs <= MAX_OTHERS_PER_MS ? v.othersPerMs : 0,
    reserveUnits: isUnits(v.reserveUnits) && v.reserveUnits <= MAX_FIGURE ? v.reserveUnits : 0,
    concurrency: typeof v.concurrency === "string" && CONCURRENCY.includes(v.concurrency) ? (v.concurrency as Concurrency) : "unknown",
    refillSinceMs: refillCounted ? wholeMs(v.refillSinceMs as number) : 0,
    refillSeenUnits: refillCounted ? (v.refillSeenUnits as number) : 0,
    budgetOnSuccess: v.budgetOnSuccess === true,
    // A state written before estimated rates were probed (or with figures out of range): not probing.
    probedFromWindowMs: isPositive(v.probedFromWindowMs) ? Math.round(v.probedFromWindowMs) : 0,
    pacedCleanUnits: isUnits(v.pacedCleanUnits) && v.pacedCleanUnits <= MAX_FIGURE ? v.pacedCleanUnits : 0,
    estimateProbeFailed: v.estimateProbeFailed === true,
    estimateFloorSeq: isSmallCount(v.estimateFloorSeq) ? v.estimateFloorSeq : 0,
    lastAnsweredAtMs: isTime(v.lastAnsweredAtMs) ? wholeMs(v.lastAnsweredAtMs) : 0,
    // A state written before windows were tried shorter (or with figures out of range): no floor, no trial out.
    windowFloorMs: isPositive(v.windowFloorMs) ? Math.round(v.windowFloorMs) : 0,
    trialSeq: isSmallCount(v.trialSeq) ? v.trialSeq : 0,
    // A state written before counts with no reset were read as windows: none read.
    countResetAtMs: isTime(v.countResetAtMs) ? wholeMs(v.countResetAtMs) : 0,
    updatedAtMs: wholeMs(v.updatedAtMs as number),
  };
  return { state };
}

function readProbe(value: unknown): { seq: number; atMs: number; untilMs: number } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const p = value as Record<string, unknown>;
  return isCount(p.seq) && isTime(p.atMs) && isTime(p.untilMs) ? { seq: p.seq, atMs: wholeMs(p.atMs), untilMs: wholeMs(p.untilMs) } : undefined;
}

function readInFlight(value: unknown): InFlightTuple[] | null {
  if (!Array.isArray(value) || value.length > MAX_IN_FLIGHT) return null;
  const out: InFlightTuple[] = [];
  for (const item of value) {
    if (!Array.isArray(item) || (item.length !== 2 && item.length !== 3) || !isCount(item[0]) || !isTime(item[1])) return null;
    // A state written before the count at grant was kept has pairs: the count is unknown (0).
    const outAtGrant = item.length === 3 && isCount(item[2]) && item[2] <= MAX_IN_FLIGHT + 1 ? item[2] : 0;
    out.push([item[0], wholeMs(item[1]), outAtGrant]);
  }
  return out;
}

/**
 * Merges slots until at most MAX_SLOTS remain: counts are kept, and each merged slot takes the later
 * of its two times (it frees later: never early). Each merge takes the two neighbours sent closest
 * together (a burst's slots share one instant: merged, they lose nothing), the smaller pair where
 * gaps tie, the oldest where those tie too. Merging the two oldest at every grant past the bound made the oldest
 * slot gather the whole log before it, at the time of the last slot it took: a burst from the
 * previous window, merged with this one's claims, was counted as sent now, and a silent 600 per
 * 60 s was paced at 256 per window (Visma's probe, 20 workers: 1.93 x ideal).
 */
export function boundSlots(slots: SlotTuple[]): SlotTuple[] {
  return slots.length > MAX_SLOTS ? boundSlotsInPlace(slots.slice()) : slots;
}

/**
 * boundSlots on an array the caller owns (a state's own log): merged where it stands. A log at its
 * bound is one over at each grant, and a new array of MAX_SLOTS per grant was most of a claim's time
 * in a slow start (npm run bench:client).
 */
export function boundSlotsInPlace(slots: SlotTuple[]): SlotTuple[] {
  while (slots.length > MAX_SLOTS) {
    let best = 0;
    let bestGapMs = Number.POSITIVE_INFINITY;
    let bestUnits = Number.POSITIVE_INFINITY;
    for (let i = 0; i + 1 < slots.length; i++) {
      // A claim laid ahead can be logged before one granted sooner: the gap either way.
      const gapMs = Math.abs(slots[i + 1]![0] - slots[i]![0]);
      const units = slots[i]![2] + slots[i + 1]![2];
      if (gapMs < bestGapMs || (gapMs === bestGapMs && units < bestUnits)) {
        best = i;
        bestGapMs = gapMs;
        bestUnits = units;
        // Two single claims of one instant: no pair merges with less.
        if (gapMs === 0 && units <= 2) break;
      }
    }
    const earlier = slots[best]!;
    const later = slots[best + 1]!;
    slots[best] = [Math.max(earlier[0], later[0]), later[1], bestUnits];
    slots.splice(best + 1, 1);
  }
  return slots;
}

/**
 * A bucket whose reset is the time until it is full: the units missing come back by the reset. A
 * shown remaining is its tokens rounded down, so more than (limit - remaining - 1) are missing, and a
 * whole bucket (the window) takes less than (reset - send) * limit / (limit - remaining - 1). The
 * reset is rounded up (whole seconds) too, so each reading is an upper bound; the tightest is kept.
 */
export function bucketWindowBoundMs(limit: number, remaining: number, sentAtMs: number, resetAtMs: number): number | null {
  if (remaining >= limit - 1 || resetAtMs <= sentAtMs) return null;
  return Math.min(MAX_FIGURE, Math.ceil(((resetAtMs - sentAtMs) * limit) / (limit - remaining - 1)));
}
