/**
 * Interpretation fixes of issue 11, one block per finding, each naming the RFC section or the
 * provider document that says what the right reading is.
 */
import { describe, expect, it } from "vitest";
import { classify, DEFAULT_POLICY, dialects, plan, requestScopeFor } from "../../src/engine";
import type { ClassifyInput, Verdict } from "../../src/engine";

const NOW = Date.parse("2026-11-30T12:00:00Z");
const NOW_S = NOW / 1000;

function read(url: string, status: number, headers: Record<string, string> = {}, body: unknown = undefined, method = "GET"): Verdict {
  return classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW });
}

const firstPlan = (verdict: Verdict) => plan(verdict, { attempts: 1, firstAttemptAtMs: NOW }, DEFAULT_POLICY, { nowMs: NOW, random: () => 0.5 });

describe("RFC 9110 §15.5.14: a 413 with Retry-After is temporary", () => {
  it("413 + Retry-After is retryable after the wait; 413 alone stays final (validation)", () => {
    const temporary = read("https://api.example.test/upload", 413, { "Retry-After": "20" });
    expect(temporary).toMatchObject({ throttled: true, retryable: true, limitType: "server", minWaitMs: 20_000, waitSource: "retry-after" });
    expect(firstPlan(temporary)).toMatchObject({ decision: "retry", waitMs: expect.any(Number) });
    const final = read("https://api.example.test/upload", 413);
    expect(final).toMatchObject({ throttled: false, retryable: false, limitType: "validation", minWaitMs: null });
    expect(firstPlan(final).decision).toBe("fail");
  });

  it("holds for a provider dialect that falls back to the status rules (Notion)", () => {
    expect(read("https://api.notion.com/v1/pages", 413, { "Retry-After": "5" })).toMatchObject({ retryable: true, minWaitMs: 5000 });
  });
});

describe("RFC 9110 §5.6.7: a leap second never shortens the wait", () => {
  it("Retry-After 23:59:60 is read as the next minute's :00 (60 s from 23:59:00), not :59", () => {
    const nowMs = Date.parse("2026-12-31T23:59:00Z");
    const verdict = classify({ request: { url: "https://api.example.test/" }, response: { status: 429, headers: { "Retry-After": "Thu, 31 Dec 2026 23:59:60 GMT" } } }, { nowMs });
    expect(verdict.minWaitMs).toBe(60_000);
  });
});

describe("GitHub x-ratelimit-reset is epoch seconds, however small (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api)", () => {
  const github = (headers: Record<string, string>, status = 403) =>
    read("https://api.github.com/repos/o/r", status, headers, { message: "API rate limit exceeded for user ID 1." });

  it("a tiny reset (60) is an instant in 1970, already past: wait 0, not 60 s, and said so", () => {
    const verdict = github({ "x-ratelimit-remaining": "0", "x-ratelimit-reset": "60" });
    expect(verdict).toMatchObject({ throttled: true, minWaitMs: 0, waitSource: "x-ratelimit-reset" });
    expect(verdict.deviations.join(" ")).toMatch(/documented as epoch seconds.*already reset/);
  });

  it("a reset a little in the past (a race with the window) is also wait 0; one in the future is waited for", () => {
    expect(github({ "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW_S - 5) }).minWaitMs).toBe(0);
    expect(github({ "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW_S + 42) }).minWaitMs).toBe(42_000);
  });

  it("on a success the budget's resetAt is the epoch instant, not now + delta", () => {
    const verdict = read("https://api.github.com/repos/o/r", 200, { "x-ratelimit-remaining": "10", "x-ratelimit-limit": "60", "x-ratelimit-reset": "60" });
    expect(verdict.budget?.resetAt).toBe(new Date(NOW).toISOString());
  });
});

describe("GitHub 401 Bad credentials is a credentials error (https://docs.github.com/en/rest/using-the-rest-api/troubleshooting-the-rest-api: rate limits are 403 or 429)", () => {
  it("even with x-ratelimit-remaining 0 it is permission: not retried, not deferred", () => {
    const verdict = read("https://api.github.com/user", 401, { "x-ratelimit-remaining": "0", "x-ratelimit-limit": "60", "x-ratelimit-reset": String(NOW_S + 1800) }, { message: "Bad credentials", documentation_url: "https://docs.github.com/rest" });
    expect(verdict).toMatchObject({ throttled: false, retryable: false, limitType: "permission", minWaitMs: null });
    expect(firstPlan(verdict)).toMatchObject({ decision: "fail", notBefore: null });
  });
});

describe("a 429 that names only its reset waits for that reset (no remaining header)", () => {
  it.each([
    ["RateLimit-Reset (IETF drafts 00-06, delta seconds)", { "RateLimit-Reset": "7" }, 7000, "ratelimit-reset", null],
    ["X-RateLimit-Reset, small: delta seconds by magnitude", { "X-RateLimit-Reset": "30" }, 30_000, "x-ratelimit-reset", /by magnitude/],
    ["X-Rate-Limit-Reset, epoch seconds by magnitude", { "X-Rate-Limit-Reset": String(NOW_S + 90) }, 90_000, "x-rate-limit-reset", /by magnitude/],
  ])("%s", (_label, headers, waitMs, source, deviation) => {
    const verdict = read("https://api.example.test/x", 429, headers);
    expect(verdict).toMatchObject({ throttled: true, minWaitMs: waitMs, waitSource: source });
    if (deviation) expect(verdict.deviations.join(" ")).toMatch(deviation);
    expect(firstPlan(verdict)).toMatchObject({ decision: "retry" });
    const decision = firstPlan(verdict);
    if (decision.decision === "retry") expect(decision.waitMs).toBeGreaterThanOrEqual(waitMs);
  });

  it("uses the unit a dialect documents: Intercom's X-RateLimit-Reset is epoch seconds", () => {
    const verdict = read("https://api.intercom.io/contacts", 429, { "X-RateLimit-Reset": String(NOW_S + 8) });
    expect(verdict).toMatchObject({ minWaitMs: 8000, waitSource: "x-ratelimit-reset" });
    expect(verdict.deviations).toEqual([]);
  });

  it("a dialect that only read Retry-After before (Asana) now waits for the reset too", () => {
    expect(read("https://app.asana.com/api/1.0/tasks", 429, { "RateLimit-Reset": "12" })).toMatchObject({ minWaitMs: 12_000 });
  });
});

describe("explicit wait headers: AWS x-amz-retry-after and Anthropic retry-after-ms (milliseconds)", () => {
  it("reads x-amz-retry-after as ms (smithy-typescript middleware-retry parseRetryAfterHeader.ts)", () => {
    // A 400 ThrottlingException is a throttle since the AWS dialect (aws.ts), and the header is its wait.
    expect(read("https://dynamodb.us-east-1.amazonaws.com/", 400, { "x-amz-retry-after": "1500" }, { __type: "ThrottlingException" })).toMatchObject({ throttled: true, minWaitMs: 1500, waitSource: "x-amz-retry-after" });
    expect(read("https://dynamodb.us-east-1.amazonaws.com/", 429, { "x-amz-retry-after": "1500" })).toMatchObject({ minWaitMs: 1500, waitSource: "x-amz-retry-after" });
  });

  it("reads Anthropic's retry-after-ms (anthropic-sdk-typescript src/client.ts retryRequest)", () => {
    const verdict = read("https://api.anthropic.com/v1/messages", 429, { "retry-after-ms": "1500" }, { type: "error", error: { type: "rate_limit_error" } }, "POST");
    expect(verdict).toMatchObject({ minWaitMs: 1500, waitSource: "retry-after-ms" });
  });
});

describe("several waits: the larger wins (RFC 9110 §10.2.3: the server's wait is a floor)", () => {
  it("OpenAI: a Retry-After longer than retry-after-ms wins", () => {
    const verdict = read("https://api.openai.com/v1/chat/completions", 429, { "retry-after": "30", "retry-after-ms": "2400" }, { error: { code: "rate_limit_exceeded", type: "tokens" } }, "POST");
    expect(verdict).toMatchObject({ minWaitMs: 30_000, waitSource: "retry-after" });
  });

  it("Anthropic: retry-after-ms longer than Retry-After wins", () => {
    const verdict = read("https://api.anthropic.com/v1/messages", 429, { "retry-after": "1", "retry-after-ms": "1500" }, { error: { type: "rate_limit_error" } }, "POST");
    expect(verdict).toMatchObject({ minWaitMs: 1500, waitSource: "retry-after-ms" });
  });

  it("a 403 whose budget is spent and whose Retry-After is longer than the reset waits the Retry-After (was 39 s for 3600 s)", () => {
    const verdict = read("https://api.example.test/x", 403, { "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "39", "Retry-After": "3600" });
    expect(verdict).toMatchObject({ throttled: true, minWaitMs: 3_600_000, waitSource: "retry-after" });
    expect(verdict.reason).toMatch(/longer wait is used/);
  });

  // Every dialect, every status that a spent budget can come with, every reset family: wherever the
  // verdict waits at all, it waits at least the Retry-After. This is the shared rule, not a per-dialect one.
  const hostOf = (pattern: string) => (pattern.startsWith(".") ? `tenant${pattern}` : pattern);
  const cases = dialects.flatMap((dialect) =>
    [401, 403, 429, 503].flatMap((status) =>
      ([
        { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "39" },
        { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW_S + 39) },
        { ratelimit: '"default";r=0;t=39' },
        { "x-rate-limit-remaining": "0", "x-rate-limit-reset": "39" },
      ] as Record<string, string>[]).map((budget) => ({ dialect: dialect.id, host: hostOf(dialect.hosts[0] ?? "api.example.test"), status, headers: { ...budget, "retry-after": "3600" } })),
    ),
  );

  it(`holds in all ${cases.length} dialect x status x reset combinations`, () => {
    const short: string[] = [];
    for (const c of cases) {
      const verdict = read(`https://${c.host}/x`, c.status, c.headers);
      if ((verdict.throttled || verdict.retryable) && !(verdict.minWaitMs !== null && verdict.minWaitMs >= 3_600_000)) {
        short.push(`${c.dialect} ${c.status} ${JSON.stringify(c.headers)} -> ${verdict.minWaitMs}`);
      }
    }
    expect(short).toEqual([]);
  });
});

describe("tolerant HTTP-dates (RFC 9110 §5.6.7: recipients robust in parsing timestamps)", () => {
  it.each([
    ["lower case", "mon, 30 nov 2026 12:00:10 gmt", 10_000, /letter case/],
    ["extra whitespace", "Mon,  30 Nov 2026   12:00:10 GMT", 10_000, /whitespace/],
    ["a one-digit day", "Tue, 1 Dec 2026 12:00:00 GMT", 86_400_000, /one-digit day/],
    ["UTC instead of GMT", "Mon, 30 Nov 2026 12:00:10 UTC", 10_000, /zone "UTC"/],
    ["no weekday", "30 Nov 2026 12:00:10 GMT", 10_000, /no weekday/],
    ["a numeric offset, read exactly", "Mon, 30 Nov 2026 07:00:10 -0500", 10_000, /zone "-0500"/],
    ["a four-digit year in the RFC 850 shape", "Monday, 30-Nov-2026 12:00:10 GMT", 10_000, /four-digit year/],
    ["asctime without the space that pads a one-digit day", "Tue Dec 1 12:00:00 2026", 86_400_000, /one-digit day/],
  ])("reads %s and records the deviation", (_label, value, waitMs, note) => {
    const verdict = read("https://api.example.test/x", 429, { "Retry-After": value });
    expect(verdict.minWaitMs).toBe(waitMs);
    expect(verdict.ignored).toEqual([]);
    if (note) expect(verdict.deviations.join(" ")).toMatch(note);
  });

  it.each([
    ["a named zone (EST could be misread)", "Mon, 30 Nov 2026 12:00:10 EST"],
    ["no zone at all (local time of an unknown place)", "Mon, 30 Nov 2026 12:00:10"],
    ["an impossible date", "Mon, 31 Nov 2026 12:00:10 GMT"],
    ["a weekday that is not one", "Xyz, 30 Nov 2026 12:00:10 GMT"],
  ])("refuses %s: a guess could shorten the wait", (_label, value) => {
    const verdict = read("https://api.example.test/x", 429, { "Retry-After": value });
    expect(verdict.minWaitMs).toBeNull();
    expect(verdict.ignored).toEqual([expect.objectContaining({ signal: "retry-after" })]);
  });

  it("reads a tolerant Date header too, so waits stay measured on the server's clock", () => {
    const verdict = read("https://api.example.test/x", 429, { Date: "mon, 30 nov 2026 11:55:00 gmt", "Retry-After": "Mon, 30 Nov 2026 11:55:30 GMT" });
    expect(verdict.minWaitMs).toBe(30_000);
  });
});

describe("years 0000-0099 in an IMF-fixdate are not moved to 1900-1999 (Date.UTC quirk)", () => {
  it("reads year 0050 as year 50", async () => {
    const { parseHttpDate } = await import("../../src/engine");
    const expected = new Date(0);
    expected.setUTCFullYear(50, 0, 1);
    expect(parseHttpDate("Sat, 01 Jan 0050 00:00:00 GMT", NOW)?.epochMs).toBe(expected.getTime());
  });

  it("a Date header in year 0026 does not make the server's clock read 1926", () => {
    // The server's clock says year 26; an ISO instant (parsed without the quirk) one minute later is
    // a 60 s wait. Read as 1926, the clock would put that instant 1,900 years in the past: wait 0.
    const verdict = read("https://api.example.test/x", 429, { Date: "Sat, 01 Jan 0026 00:00:00 GMT", "Retry-After": "0026-01-01T00:01:00Z" });
    expect(verdict.minWaitMs).toBe(60_000);
  });
});

describe("a trailing-dot host keeps its dialect and its scope (RFC 1034 §3.1: the dot only marks an absolute name)", () => {
  it("api.github.com. is GitHub, and its request scope is the resource", () => {
    const input: ClassifyInput = { request: { method: "GET", url: "https://api.github.com./search/issues?q=x" }, response: { status: 403, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(NOW_S + 30), "x-ratelimit-resource": "search" }, body: { message: "API rate limit exceeded" } } };
    expect(classify(input, { nowMs: NOW })).toMatchObject({ provider: "github", scope: { resource: "search" }, minWaitMs: 30_000 });
    expect(requestScopeFor(input)).toEqual({ resource: "search" });
  });

  it("a Shopify store's scope is the same with and without the dot", () => {
    const withDot = read("https://shop.myshopify.com./admin/api/2025-01/products.json", 429, { "Retry-After": "2.0" });
    const without = read("https://shop.myshopify.com/admin/api/2025-01/products.json", 429, { "Retry-After": "2.0" });
    expect(withDot.provider).toBe("shopify");
    expect(withDot.scope).toEqual(without.scope);
  });
});
