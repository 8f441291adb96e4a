/**
 * A request's URL made two ways (src/client/prepare.ts): a plain path appended to the base parsed
 * once, and the WHATWG URL parse of the whole. Both must give the same parts for every base and
 * path, or the fast way is not the same request.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createContext } from "../../src/client/options";
import { logPath, parseUrlBase, resolveRequestUrl, resolveUrl } from "../../src/client/prepare";

function contextFor(baseUrl: string) {
  const ctx = createContext({ baseUrl });
  ctx.urlBase = parseUrlBase(baseUrl);
  return ctx;
}

function partsOf(url: URL) {
  return { href: url.href, host: url.host, hostname: url.hostname, pathname: url.pathname, search: url.search };
}

const baseArb = fc
  .record({
    scheme: fc.constantFrom("http", "https", "HTTPS"),
    host: fc.constantFrom("api.example.com", "API.Example.COM", "127.0.0.1", "[::1]", "xn--bcher-kva.example"),
    port: fc.constantFrom("", ":80", ":443", ":8080"),
    path: fc.constantFrom("", "/", "/v1", "/v1/", "/api/v2//", "/a b", "/%7Euser"),
    tail: fc.constantFrom("", "", "", "?key=1", "#frag"),
  })
  .map(({ scheme, host, port, path, tail }) => `${scheme}://${host}${port}${path}${tail}`);

const pathArb = fc
  .array(fc.constantFrom("items", "a", "1.json", "-", "_", "~", ".", "..", "/", "//", "%2e", "%20", " ", "?", "q=1", "#", "é", ":", "@", "\\", "A", "Z9"), { maxLength: 8 })
  .map((parts) => parts.join(""));

describe("a request's URL", () => {
  it("a path under the base gives the same parts as parsing the whole URL, for any base and path", () => {
    fc.assert(
      fc.property(baseArb, pathArb, (baseUrl, path) => {
        const ctx = contextFor(baseUrl);
        let expected: ReturnType<typeof partsOf> | Error;
        try {
          expected = partsOf(resolveUrl(baseUrl, path));
        } catch (error) {
          expected = error as Error;
        }
        if (expected instanceof Error) {
          expect(() => resolveRequestUrl(ctx, path)).toThrow(expected.message);
        } else {
          expect(resolveRequestUrl(ctx, path)).toEqual(expected);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it("is made without a parse for a plain path (the base's parts reused), and parsed where the base has a query", () => {
    expect(parseUrlBase("https://API.example.com/v1/")).toEqual({ prefix: "https://api.example.com/v1", host: "api.example.com", hostname: "api.example.com", pathname: "/v1" });
    expect(parseUrlBase("https://api.example.com/v1?key=1")).toBeNull();
    const ctx = contextFor("https://api.example.com/v1?key=1");
    expect(resolveRequestUrl(ctx, "/items").href).toBe(resolveUrl("https://api.example.com/v1?key=1", "/items").href);
  });

  it("keeps query parameter names, not values, in the log path", () => {
    const ctx = contextFor("https://api.example.com");
    expect(logPath({ url: resolveRequestUrl(ctx, "/items?token=s3cret&page=2"), params: { limit: "5" } })).toBe("/items?token=…&page=…&limit=…");
    expect(logPath({ url: resolveRequestUrl(ctx, "/items/1"), params: {} })).toBe("/items/1");
  });
});
