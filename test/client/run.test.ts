import { AxiosHeaders } from "axios";
import { describe, expect, it } from "vitest";
import { plainHeaders } from "../../src/client/run";

describe("plainHeaders", () => {
  it("copies axios' headers in one pass: names lower-cased, repeated values joined, unset ones left out, as toJSON gives them", () => {
    const headers = new AxiosHeaders();
    headers.set("X-RateLimit-Remaining", "7");
    headers.set("set-cookie", ["a=1", "b=2"]);
    headers.set("content-type", "application/json");
    headers.set("x-gone", false as unknown as string);
    const expected = Object.fromEntries(Object.entries(headers.toJSON()).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(", ") : String(value)]));
    expect(plainHeaders(headers)).toEqual(expected);
    expect(plainHeaders(headers)).toEqual({ "x-ratelimit-remaining": "7", "set-cookie": "a=1, b=2", "content-type": "application/json" });
  });

  it("takes a plain object as well, and gives an empty object for anything else", () => {
    expect(plainHeaders({ "Retry-After": 3, "x-null": null })).toEqual({ "retry-after": "3" });
    expect(plainHeaders(undefined)).toEqual({});
    expect(plainHeaders("text")).toEqual({});
  });
});
