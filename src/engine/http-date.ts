/**
 * HTTP-date per RFC 9110 §5.6.7: a recipient MUST accept IMF-fixdate, the obsolete RFC 850
 * form and asctime. Always GMT: Date.parse is not used because it reads asctime (which has no
 * zone) in the machine's time zone. https://www.rfc-editor.org/rfc/rfc9110#section-5.6.7
 */

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const SHORT_DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTH = `(${MONTHS.join("|")})`;
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";

const IMF_FIXDATE = new RegExp(`^${SHORT_DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC_850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${SHORT_DAY} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

export type HttpDateForm = "imf-fixdate" | "rfc850" | "asctime";

export interface ParsedHttpDate {
  epochMs: number;
  form: HttpDateForm;
}

function build(year: number, monthName: string, day: number, hh: string, mm: string, ss: string): number | null {
  const month = MONTHS.indexOf(monthName);
  const hour = Number(hh);
  const minute = Number(mm);
  // A leap second (60) is legal in the grammar; read it as :59 so the date stays valid.
  const second = Math.min(Number(ss), 59);
  if (hour > 23 || minute > 59 || Number(ss) > 60 || day < 1) return null;
  const epochMs = Date.UTC(year, month, day, hour, minute, second);
  // Reject 31 Feb and friends: Date.UTC would silently roll them over.
  if (new Date(epochMs).getUTCDate() !== day) return null;
  return epochMs;
}

/**
 * RFC 9110: a two-digit year that appears to be more than 50 years in the future is the most
 * recent year in the past with the same last two digits.
 */
export function expandTwoDigitYear(twoDigitYear: number, nowMs: number): number {
  const currentYear = new Date(nowMs).getUTCFullYear();
  let year = Math.floor(currentYear / 100) * 100 + twoDigitYear;
  if (year > currentYear + 50) year -= 100;
  return year;
}

/** Parses an HTTP-date (case-sensitive, as the RFC says); null when it is not one. */
export function parseHttpDate(value: string, nowMs: number): ParsedHttpDate | null {
  let m = IMF_FIXDATE.exec(value);
  if (m) {
    const epochMs = build(Number(m[3]), m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
    return epochMs === null ? null : { epochMs, form: "imf-fixdate" };
  }
  m = RFC_850.exec(value);
  if (m) {
    const year = expandTwoDigitYear(Number(m[3]), nowMs);
    const epochMs = build(year, m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
    return epochMs === null ? null : { epochMs, form: "rfc850" };
  }
  m = ASCTIME.exec(value);
  if (m) {
    const epochMs = build(Number(m[6]), m[1]!, Number(m[2]!.trim()), m[3]!, m[4]!, m[5]!);
    return epochMs === null ? null : { epochMs, form: "asctime" };
  }
  return null;
}
