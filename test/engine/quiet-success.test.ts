import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classify, dialects } from "../../src/engine";
import { classifyFully } from "../../src/engine/classify";

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const hosts = [...dialects.flatMap((d) => d.hosts.map((h) => (h.startsWith(".") ? `api${h}` : h))), "api.example.com"];
const plainNames = ["content-type", "date", "etag", "x-request-id", "cache-control", "server", "vary", "content-length", "x-trace"];

describe("classify's quiet-success path gives exactly the full reading", () => {
  it("for every dialect, 2xx answers with no limit-related header and any body", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...hosts),
        fc.constantFrom(undefined, ...dialects.map((d) => d.id)),
        fc.integer({ min: 200, max: 299 }),
        fc.dictionary(fc.constantFrom(...plainNames), fc.string({ maxLength: 30 }), { maxKeys: 5 }),
        fc.oneof(fc.constant(undefined), fc.json({ maxDepth: 3 }).map((t) => JSON.parse(t) as unknown), fc.string({ maxLength: 80 })),
        (host, provider, status, headers, body) => {
          const input = { request: { method: "GET", url: `https://${host}/v1/items` }, response: { status, headers, body }, provider };
          expect(classify(input, { nowMs: NOW })).toEqual(classifyFully(input, { nowMs: NOW }));
        },
      ),
      { numRuns: 3000, seed: 7 },
    );
  });

  it("is not taken when a header may carry a limit, or the status is not a success", () => {
    const input = (status: number, headers: Record<string, string>) => ({ request: { url: "https://api.example.com/x" }, response: { status, headers } });
    expect(classify(input(200, { "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "30" }), { nowMs: NOW }).budget?.remaining).toBe(0);
    expect(classify(input(429, {}), { nowMs: NOW }).throttled).toBe(true);
  });
});
