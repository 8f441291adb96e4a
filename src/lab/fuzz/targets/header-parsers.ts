/**
 * The header parsers on their own: HTTP-dates (strict and tolerant), Retry-After, resets in every
 * documented unit, the IETF RateLimit fields, Go durations and used/limit pairs. Beyond "never
 * throws", each generated value whose meaning is known must be read back exactly: a tolerant date
 * variant to the same instant (a misread could shorten a wait), delay-seconds to the same ms.
 */
import { createContext } from "../../../engine/context";
import { parseHttpDate } from "../../../engine/http-date";
import { parseGoDuration, parseUsedOfLimit, readIetfRateLimit, readReset, readRetryAfter, type ResetKind } from "../../../engine/signals";
import { Gen } from "../random";
import { isValidIso, isWholeWait, Tally } from "../tally";
import type { FuzzResult, FuzzTarget } from "../types";

const NOW_MS = Date.UTC(2026, 10, 30, 12);
const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

const ctxWith = (headers: Record<string, string>) => createContext({ response: { status: 429, headers } }, NOW_MS);

/** An IMF-fixdate for a whole-second instant in years 0-9999, and near-miss variants of it that name the same instant. */
function dateVariants(gen: Gen): { instantMs: number; text: string } {
  const instantMs = Math.floor(Math.max(-62_167_219_200_000, Math.min(253_402_300_799_000, gen.instantMs())) / 1000) * 1000;
  const d = new Date(instantMs);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const [day, month, year] = [d.getUTCDate(), MONTHS[d.getUTCMonth()]!, pad(d.getUTCFullYear(), 4)];
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const weekday = DAYS[d.getUTCDay()]!;
  const forms = [
    `${weekday}, ${pad(day)} ${month} ${year} ${time} GMT`,
    `${weekday}, ${pad(day)} ${month} ${year} ${time} GMT`.toLowerCase(),
    `${weekday},  ${pad(day)} ${month}  ${year} ${time}   GMT`,
    `${weekday}, ${day} ${month} ${year} ${time} GMT`,
    `${weekday}, ${pad(day)} ${month} ${year} ${time} UTC`,
    `${pad(day)} ${month} ${year} ${time} GMT`,
    `${weekday}, ${pad(day)}-${month}-${year} ${time} GMT`,
    `${weekday} ${month} ${String(day).padStart(2, " ")} ${time} ${year}`,
  ];
  return { instantMs, text: gen.pick(forms) };
}

function checkDate(gen: Gen, tally: Tally): void {
  if (gen.chance(0.6)) {
    const { instantMs, text } = dateVariants(gen);
    tally.attempt(text, () => {
      const parsed = parseHttpDate(text, NOW_MS, { tolerant: true });
      return parsed?.epochMs === instantMs ? [] : [`read ${parsed?.epochMs ?? "nothing"}, expected ${instantMs}`];
    });
    return;
  }
  const text = gen.chance(0.05) ? gen.longRun() : gen.text(40);
  tally.attempt(text, () => {
    const parsed = parseHttpDate(text, NOW_MS, { tolerant: gen.chance(0.5) });
    return parsed === null || (Number.isInteger(parsed.epochMs) && Math.abs(parsed.epochMs) <= 8.64e15) ? [] : [`epochMs ${parsed.epochMs}`];
  });
}

function checkRetryAfter(gen: Gen, tally: Tally): void {
  const value = gen.chance(0.02) ? gen.longRun() : gen.chance(0.3) ? dateVariants(gen).text : gen.numberText();
  tally.attempt({ "retry-after": value }, () => {
    const wait = readRetryAfter(ctxWith({ "retry-after": value }));
    if (wait === null) return [];
    if (!isWholeWait(wait.waitMs)) return [`waitMs ${wait.waitMs}`];
    const exact = /^\s*\d{1,12}\s*$/.test(value) ? Number(value) * 1000 : null;
    return exact !== null && wait.waitMs !== exact ? [`delay-seconds ${value} read as ${wait.waitMs} ms`] : [];
  });
}

function checkReset(gen: Gen, tally: Tally): void {
  const kind = gen.pick<ResetKind>(["epoch-seconds", "epoch-ms", "delta-seconds", "iso", "duration", "auto"]);
  const value = gen.chance(0.02) ? gen.longRun() : gen.chance(0.2) ? new Date(Math.max(-8.64e15, Math.min(8.64e15, gen.instantMs()))).toISOString() : gen.numberText();
  tally.attempt({ kind, value }, () => {
    const wait = readReset(ctxWith({ "x-ratelimit-reset": value }), "x-ratelimit-reset", kind);
    if (wait === null) return [];
    if (!isWholeWait(wait.waitMs)) return [`waitMs ${wait.waitMs}`];
    if (kind === "epoch-seconds" && /^\d{1,12}$/.test(value) && wait.waitMs !== Math.max(0, Number(value) * 1000 - NOW_MS)) return [`epoch ${value} read as ${wait.waitMs} ms`];
    if (kind === "delta-seconds" && /^\d{1,12}$/.test(value) && wait.waitMs !== Number(value) * 1000) return [`delta ${value} read as ${wait.waitMs} ms`];
    return [];
  });
}

function checkIetf(gen: Gen, tally: Tally): void {
  const r = gen.numberText();
  const t = gen.numberText();
  const headers: Record<string, string> = gen.chance(0.05)
    ? { ratelimit: gen.longRun(), "ratelimit-policy": gen.longRun() }
    : { ratelimit: `"${gen.pick(["default", "burst", "a b", ""])}";r=${r};t=${t}`, "ratelimit-policy": `"default";q=${gen.numberText()};w=60` };
  if (gen.chance(0.3)) headers["ratelimit-reset"] = gen.numberText();
  tally.attempt(headers, () => {
    const { budget, reset } = readIetfRateLimit(ctxWith(headers));
    const broken: string[] = [];
    if (reset && !isWholeWait(reset.waitMs)) broken.push(`reset ${reset.waitMs}`);
    if (budget && budget.resetAt !== null && !isValidIso(budget.resetAt)) broken.push(`resetAt ${budget.resetAt}`);
    if (/^\d{1,9}$/.test(r) && /^\d{1,9}$/.test(t) && headers.ratelimit?.startsWith('"default"') && (budget?.remaining !== Number(r) || reset?.waitMs !== Number(t) * 1000)) {
      broken.push(`r=${r};t=${t} read as remaining ${budget?.remaining}, reset ${reset?.waitMs}`);
    }
    return broken;
  });
}

function checkDuration(gen: Gen, tally: Tally): void {
  const parts: [number, string, number][] = [];
  const units: [string, number][] = [["h", 3_600_000], ["m", 60_000], ["s", 1000], ["ms", 1]];
  for (const [unit, ms] of units) if (gen.chance(0.5)) parts.push([gen.int(0, 99), unit, ms]);
  const known = parts.length > 0 && gen.chance(0.7);
  const value = known ? parts.map(([n, unit]) => `${n}${unit}`).join("") : gen.chance(0.05) ? gen.longRun() : gen.text(16);
  tally.attempt(value, () => {
    const ms = parseGoDuration(value);
    if (ms !== null && !(Number.isFinite(ms) && ms >= 0)) return [`read ${ms}`];
    const expected = parts.reduce((sum, [n, , unitMs]) => sum + n * unitMs, 0);
    return known && ms !== expected ? [`read ${ms}, expected ${expected}`] : [];
  });
}

function checkUsedOfLimit(gen: Gen, tally: Tally): void {
  const known = gen.chance(0.5);
  const [used, limit] = [gen.int(0, 100_000), gen.int(1, 100_000)];
  const value = known ? `${used}/${limit}` : gen.chance(0.05) ? gen.longRun() : gen.text(20);
  tally.attempt(value, () => {
    const parsed = parseUsedOfLimit(value);
    if (parsed && !(Number.isSafeInteger(parsed.used) && Number.isSafeInteger(parsed.limit) && parsed.limit > 0)) return [`read ${JSON.stringify(parsed)}`];
    return known && (parsed?.used !== used || parsed.limit !== limit) ? [`read ${JSON.stringify(parsed)}`] : [];
  });
}

const CHECKS = [checkDate, checkRetryAfter, checkReset, checkIetf, checkDuration, checkUsedOfLimit];

export const headerParsersTarget: FuzzTarget = {
  name: "header parsers",
  run(seed: number, count: number): FuzzResult {
    const gen = new Gen(seed);
    const tally = new Tally(false);
    for (let i = 0; i < count; i++) CHECKS[i % CHECKS.length]!(gen, tally);
    return tally.result();
  },
};
