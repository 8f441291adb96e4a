/**
 * Pasted responses (what curl -i prints) read into classify's response shape: RFC 9112's message
 * syntax, read as leniently as a paste needs (bare LF, HTTP/2 status lines, several responses).
 */
import { describe, expect, it } from "vitest";
import { classify, headerLinesOf, looksLikeRawResponse, parseRawResponse } from "../../src/engine";

const CRLF = (lines: string[]): string => lines.join("\r\n");

describe("parseRawResponse", () => {
  const cases: { name: string; text: string; status: number; headers: Record<string, string>; body: unknown }[] = [
    {
      name: "curl -i with CRLF and a JSON body",
      text: CRLF(["HTTP/1.1 429 Too Many Requests", "Retry-After: 30", "X-RateLimit-Remaining: 0", "", '{"message":"slow down"}']),
      status: 429,
      headers: { "retry-after": "30", "x-ratelimit-remaining": "0" },
      body: { message: "slow down" },
    },
    {
      name: "bare LF, HTTP/2 status line without a reason, no body",
      text: "HTTP/2 503\nretry-after: 120\n",
      status: 503,
      headers: { "retry-after": "120" },
      body: undefined,
    },
    {
      name: "a 100 Continue before the answer: the last response is read",
      text: CRLF(["HTTP/1.1 100 Continue", "", "HTTP/1.1 429 Too Many Requests", "Retry-After: 2", "", "slow down"]),
      status: 429,
      headers: { "retry-after": "2" },
      body: "slow down",
    },
    {
      name: "a field named twice is combined (RFC 9110 §5.3); a folded line is joined",
      text: CRLF(["HTTP/1.1 200 OK", "Link: <a>", "link: <b>", "X-Note: one", "  two", ""]),
      status: 200,
      headers: { link: "<a>, <b>", "x-note": "one two" },
      body: undefined,
    },
    {
      name: "a body that starts like JSON but is not stays text",
      text: CRLF(["HTTP/1.1 429 Too Many Requests", "", "{not json"]),
      status: 429,
      headers: {},
      body: "{not json",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(parseRawResponse(c.text)).toEqual({ status: c.status, headers: c.headers, body: c.body });
    });
  }

  it("says which line is not a header, and that a paste needs a status line", () => {
    expect(parseRawResponse("HTTP/1.1 429 Too Many Requests\nRetry-After 30\n")).toEqual({ error: 'line 2 is not a header line "Name: value": "Retry-After 30"' });
    expect(parseRawResponse("Retry-After: 30")).toMatchObject({ error: expect.stringMatching(/^no status line/) });
  });

  it("tells a paste from JSON by its first line", () => {
    expect(looksLikeRawResponse("  HTTP/1.1 429 Too Many Requests\n")).toBe(true);
    expect(looksLikeRawResponse('{"response":{"status":429}}')).toBe(false);
    expect(looksLikeRawResponse("HTTP is a protocol")).toBe(false);
    // A file saved with a byte order mark.
    expect(parseRawResponse("\uFEFFHTTP/1.1 429 Too Many Requests\r\n")).toMatchObject({ status: 429 });
  });

  it("gives classify what it reads: a pasted GitHub secondary limit is a throttle with its wait", () => {
    const pasted = parseRawResponse(CRLF(["HTTP/2 403", "retry-after: 60", "x-ratelimit-remaining: 4000", "", '{"message":"You have exceeded a secondary rate limit."}']));
    if ("error" in pasted) throw new Error(pasted.error);
    const verdict = classify({ request: { method: "GET", url: "https://api.github.com/repos/o/r" }, response: pasted }, { nowMs: Date.UTC(2026, 0, 1) });
    expect(verdict).toMatchObject({ provider: "github", throttled: true, minWaitMs: 60_000, waitSource: "retry-after" });
  });
});

describe("headerLinesOf", () => {
  it("reads header lines, and is null for text that is not all header lines", () => {
    expect(headerLinesOf("Retry-After: 30\r\nX-RateLimit-Remaining: 0\r\n")).toEqual({ "retry-after": "30", "x-ratelimit-remaining": "0" });
    expect(headerLinesOf("rate limited, try later")).toBeNull();
    expect(headerLinesOf("")).toBeNull();
  });
});
