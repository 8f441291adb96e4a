/**
 * HTTP-date per RFC 9110 §5.6.7: a recipient MUST accept IMF-fixdate, the obsolete RFC 850
 * form and asctime. Always GMT: Date.parse is not used because it reads asctime (which has no
 * zone) in the machine's time zone. https://www.rfc-editor.org/rfc/rfc9110#section-5.6.7
 *
 * The same section asks recipients to be "robust in parsing timestamps"; with `tolerant` set,
 * the near-misses servers really send are read too (letter case, extra spaces, a one-digit day,
 * UTC/UT/Z or a numeric offset instead of GMT, no weekday, a two-digit year in the IMF shape, a
 * four-digit year in the RFC 850 shape). Each reading says what was off, for the verdict's
 * deviations. Nothing is guessed that could shorten a wait: a date without a zone (other than
 * asctime, which is GMT by definition) or with a named zone such as EST is still refused.
 */

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const SHORT_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const LONG_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const LONG_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const SHORT_DAY = `(?:${SHORT_DAYS.join("|")})`;
const LONG_DAY = `(?:${LONG_DAYS.join("|")})`;
const MONTH = `(${MONTHS.join("|")})`;
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";

const IMF_FIXDATE = new RegExp(`^${SHORT_DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC_850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${SHORT_DAY} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

// The tolerant shapes run on text whose whitespace runs were collapsed to one space, so no
// two quantifiers ever compete for the same characters (no super-linear backtracking).
const TOLERANT_DAY_FIRST = /^(?:([a-z]+),? )?(\d{1,2})([ -])([a-z]+)[ -](\d{4}|\d{2}) (\d{1,2}):(\d{2}):(\d{2}) ?(gmt|utc|ut|z|[+-]\d{4})$/i;
const TOLERANT_ASCTIME = /^(?:([a-z]+) )?([a-z]+) (\d{1,2}) (\d{1,2}):(\d{2}):(\d{2}) (\d{4})$/i;

/** No HTTP-date is longer than 38 characters; anything far longer is not one (and is not scanned). */
const MAX_DATE_TEXT = 64;

export type HttpDateForm = "imf-fixdate" | "rfc850" | "asctime" | "tolerant";

export interface ParsedHttpDate {
  epochMs: number;
  form: HttpDateForm;
  /** For the tolerant form: what departed from the RFC's three forms. */
  notes?: string[];
}

export interface HttpDateOptions {
  /** Also read the near-misses described above (each reported in `notes`). Default false. */
  tolerant?: boolean;
}

/**
 * Epoch ms of a UTC calendar time, or null when the fields do not name a real instant.
 * Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not, so a four-digit "0026" stays
 * year 26. A leap second (second 60, allowed by the grammar) is read as the next minute's :00:
 * reading it as :59 would end the wait one second early.
 */
function utcEpochMs(year: number, month: number, day: number, hour: number, minute: number, second: number): number | null {
  if (month < 0 || hour > 23 || minute > 59 || second > 60 || day < 1 || day > 31) return null;
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  date.setUTCHours(hour, minute, Math.min(second, 59), 0);
  // Reject 31 Feb and friends: the Date would silently roll them over.
  if (date.getUTCDate() !== day || date.getUTCMonth() !== month) return null;
  return date.getTime() + (second === 60 ? 1000 : 0);
}

/**
 * RFC 9110: a two-digit year that appears to be more than 50 years in the future is the most
 * recent year in the past with the same last two digits.
 */
export function expandTwoDigitYear(twoDigitYear: number, nowMs: number): number {
  const currentYear = new Date(Math.min(8.64e15, Math.max(-8.64e15, nowMs))).getUTCFullYear();
  let year = Math.floor(currentYear / 100) * 100 + twoDigitYear;
  if (year > currentYear + 50) year -= 100;
  return year;
}

function strictForms(value: string, nowMs: number): ParsedHttpDate | null {
  let m = IMF_FIXDATE.exec(value);
  if (m) {
    const epochMs = utcEpochMs(Number(m[3]), MONTHS.indexOf(m[2]!), Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
    return epochMs === null ? null : { epochMs, form: "imf-fixdate" };
  }
  m = RFC_850.exec(value);
  if (m) {
    const year = expandTwoDigitYear(Number(m[3]), nowMs);
    const epochMs = utcEpochMs(year, MONTHS.indexOf(m[2]!), Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
    return epochMs === null ? null : { epochMs, form: "rfc850" };
  }
  m = ASCTIME.exec(value);
  if (m) {
    const epochMs = utcEpochMs(Number(m[6]), MONTHS.indexOf(m[1]!), Number(m[2]!.trim()), Number(m[3]), Number(m[4]), Number(m[5]));
    return epochMs === null ? null : { epochMs, form: "asctime" };
  }
  return null;
}

/** A month by its short or long English name, any letter case; -1 when it is not one. */
function monthIndex(name: string): number {
  const lower = name.toLowerCase();
  const index = MONTHS.findIndex((m) => m.toLowerCase() === lower);
  return index >= 0 ? index : LONG_MONTHS.findIndex((m) => m.toLowerCase() === lower);
}

function isWeekday(name: string): boolean {
  const lower = name.toLowerCase();
  return [...SHORT_DAYS, ...LONG_DAYS].some((d) => d.toLowerCase() === lower);
}

/** Minutes east of UTC for GMT/UTC/UT/Z or ±hhmm (RFC 5322 §3.3); null when out of range. */
function zoneOffsetMinutes(zone: string): number | null {
  if (/^(?:gmt|utc|ut|z)$/i.test(zone)) return 0;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(3, 5));
  if (hours > 23 || minutes > 59) return null;
  return (zone.startsWith("-") ? -1 : 1) * (hours * 60 + minutes);
}

function tolerantDayFirst(text: string, nowMs: number, notes: string[]): number | null {
  const m = TOLERANT_DAY_FIRST.exec(text);
  if (!m) return null;
  const [, weekday, dayText, separator, monthText, yearText, hourText, minuteText, secondText] = m;
  const zone = m[9] ?? "";
  const month = monthIndex(monthText!);
  if (month < 0 || (weekday !== undefined && !isWeekday(weekday))) return null;
  const offset = zoneOffsetMinutes(zone);
  if (offset === null) return null;
  if (weekday === undefined) notes.push("no weekday");
  if (dayText!.length === 1) notes.push("a one-digit day");
  if (hourText!.length === 1) notes.push("a one-digit hour");
  if (zone !== "GMT") notes.push(`zone "${zone}" instead of GMT`);
  const dashed = separator === "-";
  if (yearText!.length === 2 && !dashed) notes.push("a two-digit year");
  if (yearText!.length === 4 && dashed) notes.push("a four-digit year in the RFC 850 shape");
  const year = yearText!.length === 2 ? expandTwoDigitYear(Number(yearText), nowMs) : Number(yearText);
  const local = utcEpochMs(year, month, Number(dayText), Number(hourText), Number(minuteText), Number(secondText));
  return local === null ? null : local - offset * 60_000;
}

function tolerantAsctime(text: string, notes: string[]): number | null {
  const m = TOLERANT_ASCTIME.exec(text);
  if (!m) return null;
  const [, weekday, monthText, dayText, hourText, minuteText, secondText, yearText] = m;
  const month = monthIndex(monthText!);
  if (month < 0 || (weekday !== undefined && !isWeekday(weekday))) return null;
  if (weekday === undefined) notes.push("no weekday");
  if (dayText!.length === 1) notes.push("a one-digit day without asctime's padding space");
  if (hourText!.length === 1) notes.push("a one-digit hour");
  // asctime carries no zone: RFC 9110 §5.6.7 says it is GMT, so reading it as GMT is no guess.
  return utcEpochMs(Number(yearText), month, Number(dayText), Number(hourText), Number(minuteText), Number(secondText));
}

function tolerantForm(value: string, nowMs: number): ParsedHttpDate | null {
  const trimmed = value.trim();
  const text = trimmed.replace(/\s+/g, " ");
  const notes: string[] = [];
  const epochMs = tolerantDayFirst(text, nowMs, notes) ?? tolerantAsctime(text, notes);
  if (epochMs === null) return null;
  if (text !== value) notes.unshift("extra whitespace");
  if (strictCaseDiffers(text)) notes.unshift("letter case differs from the RFC's");
  if (notes.length === 0) notes.push("a near-miss of the RFC's forms");
  return { epochMs, form: "tolerant", notes };
}

/** True when a name token's letter case differs from the RFC's (Mon, Nov, GMT). */
function strictCaseDiffers(text: string): boolean {
  const names = [...SHORT_DAYS, ...LONG_DAYS, ...MONTHS, ...LONG_MONTHS, "GMT"];
  return text.split(/[ ,-]/).some((token) => /^[a-z]+$/i.test(token) && !names.includes(token) && names.some((n) => n.toLowerCase() === token.toLowerCase()));
}

/** Parses an HTTP-date (case-sensitive, as the RFC says, unless `tolerant`); null when it is not one. */
export function parseHttpDate(value: string, nowMs: number, options: HttpDateOptions = {}): ParsedHttpDate | null {
  if (value.length > MAX_DATE_TEXT) return null;
  // A server's Date changes once a second and is read on every answer that speaks of a limit
  // (twice: for the wait and for the server's clock). An IMF-fixdate reads the same whatever
  // nowMs is (only RFC 850's two-digit year depends on it), so the last one is kept.
  if (value === lastFixdate.value) return { epochMs: lastFixdate.epochMs, form: "imf-fixdate" };
  const strict = strictForms(value, nowMs);
  if (strict?.form === "imf-fixdate") lastFixdate = { value, epochMs: strict.epochMs };
  if (strict || !options.tolerant) return strict;
  return tolerantForm(value, nowMs);
}

let lastFixdate: { value: string; epochMs: number } = { value: "", epochMs: 0 };
