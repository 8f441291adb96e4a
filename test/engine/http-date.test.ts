import { describe, expect, it } from "vitest";
import { expandTwoDigitYear, parseHttpDate } from "../../src/engine/http-date";

const NOW_MS = Date.parse("2026-11-30T12:00:00Z");

describe("parseHttpDate (RFC 9110 §5.6.7)", () => {
  it.each([
    ["IMF-fixdate", "Sun, 06 Nov 1994 08:49:37 GMT", "1994-11-06T08:49:37.000Z", "imf-fixdate"],
    ["RFC 850", "Sunday, 06-Nov-94 08:49:37 GMT", "1994-11-06T08:49:37.000Z", "rfc850"],
    ["asctime, space-padded day", "Sun Nov  6 08:49:37 1994", "1994-11-06T08:49:37.000Z", "asctime"],
    ["asctime, two-digit day", "Mon Nov 30 12:00:45 2026", "2026-11-30T12:00:45.000Z", "asctime"],
    // A leap second never shortens the wait: 23:59:60 is read as the next minute's :00, not :59.
    ["leap second read as the next minute's :00", "Wed, 31 Dec 2025 23:59:60 GMT", "2026-01-01T00:00:00.000Z", "imf-fixdate"],
    ["29 Feb in a leap year", "Thu, 29 Feb 2024 00:00:00 GMT", "2024-02-29T00:00:00.000Z", "imf-fixdate"],
  ])("reads %s", (_label, value, iso, form) => {
    expect(parseHttpDate(value, NOW_MS)).toEqual({ epochMs: Date.parse(iso), form });
  });

  it.each([
    ["lower-case zone (HTTP-date is case-sensitive)", "Sun, 06 Nov 1994 08:49:37 gmt"],
    ["a zone other than GMT", "Sun, 06 Nov 1994 08:49:37 UTC"],
    ["a one-digit day in IMF-fixdate", "Sun, 6 Nov 1994 08:49:37 GMT"],
    ["31 February", "Tue, 31 Feb 2026 00:00:00 GMT"],
    ["29 Feb in a common year", "Sun, 29 Feb 2026 00:00:00 GMT"],
    ["hour 24", "Sun, 06 Nov 1994 24:00:00 GMT"],
    ["minute 60", "Sun, 06 Nov 1994 08:60:00 GMT"],
    ["an ISO timestamp", "2026-11-30T12:00:00Z"],
    ["a number", "120"],
    ["empty", ""],
    ["trailing junk", "Sun, 06 Nov 1994 08:49:37 GMT extra"],
  ])("rejects %s", (_label, value) => {
    expect(parseHttpDate(value, NOW_MS)).toBeNull();
  });

  it("reads a two-digit year more than 50 years ahead as the most recent past year", () => {
    expect(expandTwoDigitYear(94, NOW_MS)).toBe(1994);
    expect(expandTwoDigitYear(26, NOW_MS)).toBe(2026);
    expect(expandTwoDigitYear(76, NOW_MS)).toBe(2076); // exactly 50 years ahead is still the future
    expect(expandTwoDigitYear(77, NOW_MS)).toBe(1977);
    expect(parseHttpDate("Monday, 30-Nov-26 12:01:00 GMT", NOW_MS)?.epochMs).toBe(Date.parse("2026-11-30T12:01:00Z"));
  });
});
