import { describe, expect, it } from "vitest";
import { classify } from "../../src/engine";

const NOW_MS = Date.parse("2026-11-30T12:00:00Z");

function readAt(headers: Record<string, string>) {
  return classify(
    { request: { method: "GET", url: "http://api.example.test/x" }, response: { status: 429, headers } },
    { nowMs: NOW_MS },
  );
}

describe("Retry-After per RFC 9110 §10.2.3, table-driven", () => {
  it.each([
    ["delay-seconds", "120", 120_000],
    ["zero", "0", 0],
    ["leading zeros", "007", 7000],
    ["surrounding spaces", " 3 ", 3000],
    ["IMF-fixdate in the future", "Mon, 30 Nov 2026 12:00:10 GMT", 10_000],
    ["IMF-fixdate in the past means 0", "Sun, 06 Nov 1994 08:49:37 GMT", 0],
    ["RFC 850", "Monday, 30-Nov-26 12:00:20 GMT", 20_000],
    ["asctime", "Mon Nov 30 12:00:30 2026", 30_000],
  ])("reads %s (%s)", (_label, value, waitMs) => {
    const verdict = readAt({ "Retry-After": value });
    expect(verdict.minWaitMs).toBe(waitMs);
    expect(verdict.waitSource).toBe("retry-after");
    expect(verdict.ignored).toEqual([]);
  });

  it.each([
    ["Shopify decimal seconds", "2.0", 2000, /decimal seconds/],
    ["decimal with a fraction, rounded up", "1.5", 1500, /decimal seconds/],
    ["Zoom ISO 8601 instant", "2026-12-01T00:00:00Z", 12 * 3_600_000, /ISO 8601/],
  ])("reads the deviation %s and says so", (_label, value, waitMs, note) => {
    const verdict = readAt({ "Retry-After": value });
    expect(verdict.minWaitMs).toBe(waitMs);
    expect(verdict.deviations.join(" ")).toMatch(note);
  });

  it.each([
    ["a word", "soon"],
    ["a negative number", "-5"],
    ["an exponent that JavaScript reads as Infinity", "1e400"],
    ["an empty value", ""],
    ["an ISO time without a zone (ambiguous)", "2026-12-01T00:00:00"],
    ["an HTTP-date with a named zone that could be misread", "Mon, 30 Nov 2026 12:00:10 EST"],
  ])("ignores %s with a recorded reason, never 0 or Infinity", (_label, value) => {
    const verdict = readAt({ "Retry-After": value });
    expect(verdict.minWaitMs).toBeNull();
    expect(verdict.throttled).toBe(true);
    expect(verdict.ignored).toEqual([expect.objectContaining({ signal: "retry-after", value })]);
  });

  it("measures an HTTP-date against the response's Date header, not the local clock", () => {
    // The server's clock is 5 minutes behind ours; its Retry-After is 30 s after its own Date.
    const verdict = readAt({ Date: "Mon, 30 Nov 2026 11:55:00 GMT", "Retry-After": "Mon, 30 Nov 2026 11:55:30 GMT" });
    expect(verdict.minWaitMs).toBe(30_000);
  });

  it("falls back to the local clock when Date is malformed, and records it", () => {
    const verdict = readAt({ Date: "yesterday", "Retry-After": "Mon, 30 Nov 2026 12:00:30 GMT" });
    expect(verdict.minWaitMs).toBe(30_000);
    expect(verdict.ignored).toEqual([expect.objectContaining({ signal: "date" })]);
  });

  it("reads retry-after-ms when no Retry-After is sent", () => {
    expect(readAt({ "retry-after-ms": "250" }).minWaitMs).toBe(250);
  });

  it("gives Retry-After precedence over the IETF RateLimit reset", () => {
    const verdict = readAt({ "Retry-After": "5", RateLimit: '"default";r=0;t=30' });
    expect(verdict.minWaitMs).toBe(5000);
    expect(verdict.budget).toMatchObject({ remaining: 0, resetAt: "2026-11-30T12:00:30.000Z" });
  });

  it("reads a spent X-RateLimit budget by magnitude on an unknown host and says it guessed", () => {
    const epoch = readAt({ "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": String(NOW_MS / 1000 + 40) });
    expect(epoch.minWaitMs).toBe(40_000);
    const delta = readAt({ "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "12" });
    expect(delta.minWaitMs).toBe(12_000);
    expect(delta.deviations.join(" ")).toMatch(/by magnitude/);
  });

  it("ignores a malformed RateLimit structured field, as the draft requires", () => {
    const verdict = readAt({ RateLimit: '"default";r=0;t=' });
    expect(verdict.minWaitMs).toBeNull();
    expect(verdict.ignored).toEqual([expect.objectContaining({ signal: "ratelimit" })]);
  });

  it("reads the older RateLimit-Limit/-Remaining/-Reset (delta seconds)", () => {
    const verdict = readAt({ "RateLimit-Limit": "10, 10;w=1", "RateLimit-Remaining": "0", "RateLimit-Reset": "7" });
    expect(verdict).toMatchObject({ minWaitMs: 7000, budget: { remaining: 0, limit: 10 } });
  });
});
