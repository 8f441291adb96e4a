import axios, { AxiosHeaders } from "axios";
import { describe, expect, it } from "vitest";
import { createRedactor, credentialParts, isSensitiveHeaderName, MIN_SECRET_LENGTH, plainHeaders, REDACTED, secretsFromHeaders } from "../../src/client/redact";
import { findSecretForms, secretForms } from "../../src/lab/faults/encodings";

/** Every character the findings name: quote, backslash, colon, space, dollar, plus, non-ASCII. */
const AWKWARD = 'sk_"live\\ab: c$d+e/é日';

describe("createRedactor: every encoding of a secret", () => {
  const redactor = createRedactor([AWKWARD]);

  for (const form of secretForms(AWKWARD)) {
    it(`removes the ${form.encoding} form`, () => {
      const input = `before ${form.encoding === "base64 in Basic user:password" ? Buffer.from(`user:${AWKWARD}`).toString("base64") : form.text} after`;
      expect(findSecretForms(input, [AWKWARD]).length).toBeGreaterThan(0);
      const output = redactor.text(input);
      expect(findSecretForms(output, [AWKWARD])).toEqual([]);
      expect(output).toContain(REDACTED);
      expect(output.startsWith("before ")).toBe(true);
    });
  }

  it("finds the secret in a URL axios itself built (query key and value with :, space, $)", () => {
    const uri = axios.getUri({ url: "https://api.example.com/v1/items", params: { "api:key $x": AWKWARD, plain: "1" } });
    expect(uri).not.toContain(encodeURIComponent(AWKWARD));
    const output = redactor.text(uri);
    expect(findSecretForms(output, [AWKWARD])).toEqual([]);
    expect(output).toContain("plain=1");
  });

  it("is case-insensitive where an echo changes case (a lower-cased header, %2f for %2F)", () => {
    const lowered = redactor.text(`Stripe rate limiter ${AWKWARD.toLowerCase()} rejected the request`);
    expect(lowered).toBe(`Stripe rate limiter ${REDACTED} rejected the request`);
    expect(redactor.text(encodeURIComponent(AWKWARD).toLowerCase())).toBe(REDACTED);
  });

  it("redacts a log line before or after JSON.stringify, and the JSON still parses", () => {
    const record = { event: "throttle_decision", reason: `echo ${AWKWARD}\\`, [`key ${AWKWARD}`]: [AWKWARD, `"${AWKWARD}"`] };
    const after = redactor.text(JSON.stringify(record));
    const before = JSON.stringify(redactor.value(record));
    for (const line of [after, before]) {
      expect(findSecretForms(line, [AWKWARD])).toEqual([]);
      expect(() => JSON.parse(line) as unknown).not.toThrow();
    }
    expect(JSON.parse(after)).toEqual(JSON.parse(before));
    // A JSON string inside a JSON log line: escaped twice.
    const nested = redactor.text(JSON.stringify({ body: JSON.stringify(record) }));
    expect(findSecretForms(nested, [AWKWARD])).toEqual([]);
    expect(() => JSON.parse((JSON.parse(nested) as { body: string }).body) as unknown).not.toThrow();
  });

  it("a match that starts inside a JSON escape takes the escape with it", () => {
    const r = createRedactor(["nabcdef"]);
    const json = JSON.stringify({ a: "x\nabcdef" });
    const out = r.text(json);
    expect(JSON.parse(out)).toEqual({ a: `x${REDACTED}` });
  });

  it("finds a secret inside a longer base64 string at any alignment (Basic user:password)", () => {
    const r = createRedactor(["hunter2-password"]);
    for (const user of ["u", "us", "use", "user"]) {
      const header = Buffer.from(`${user}:hunter2-password`).toString("base64");
      const out = r.text(`Authorization: Basic ${header}`);
      expect(out, user).toContain(REDACTED);
      expect(findSecretForms(out, ["hunter2-password"])).toEqual([]);
    }
  });

  it("keeps text that only shares a few characters with a secret", () => {
    const r = createRedactor(["tok-ABCDEF123456"]);
    const body = '{"id":123,"name":"tok-ABC","ratio":"1+1 = 2","path":"/a/b%2Fc","b64":"dG9rLUFC"}';
    expect(r.text(body)).toBe(body);
  });
});

describe("createRedactor: what counts as a secret", () => {
  it(`values shorter than ${MIN_SECRET_LENGTH} characters are skipped and counted, longer ones are redacted`, () => {
    const r = createRedactor(["abc", "abcd", "", "  "]);
    expect(r.skippedShortSecrets).toBe(1);
    expect(r.text("abc 200 OK")).toBe("abc 200 OK");
    expect(r.text("xx abcd yy")).toBe(`xx ${REDACTED} yy`);
  });

  it("a credential header value as a secret also redacts its bare token and Basic's parts", () => {
    const basic = Buffer.from("me:correct-horse").toString("base64");
    const r = createRedactor(["Bearer tok_9f8e7d6c", `Basic ${basic}`]);
    expect(r.text("echo tok_9f8e7d6c")).toBe(`echo ${REDACTED}`);
    expect(r.text("password correct-horse")).toBe(`password ${REDACTED}`);
    expect(r.text(`raw ${basic}`)).toBe(`raw ${REDACTED}`);
  });

  it("value() deep-copies, redacting keys, strings and buffers, leaving other values alone", () => {
    const r = createRedactor(["s3cr3t-VALUE"]);
    const input = { [`k-s3cr3t-VALUE`]: { list: ["s3cr3t-VALUE", 7, null, true], buf: Buffer.from("x s3cr3t-VALUE y") } };
    const out = r.value(input) as Record<string, { list: unknown[]; buf: Buffer }>;
    expect(Object.keys(out)).toEqual([`k-${REDACTED}`]);
    expect(out[`k-${REDACTED}`]!.list).toEqual([REDACTED, 7, null, true]);
    expect(out[`k-${REDACTED}`]!.buf.toString()).toBe(`x ${REDACTED} y`);
    expect(input[`k-s3cr3t-VALUE`]!.list[0]).toBe("s3cr3t-VALUE");
  });

  it("headers() drops credential headers and redacts the rest, names lower-cased", () => {
    const r = createRedactor(["s3cr3t-VALUE"]);
    const out = r.headers({ "Set-Cookie": "sid=1", "X-Auth-Key": "k", "Retry-After": "5", "X-Echo": "a s3cr3t-VALUE b", "Idempotency-Key": "job-1" });
    expect(out).toEqual({ "retry-after": "5", "x-echo": `a ${REDACTED} b`, "idempotency-key": "job-1" });
  });

  it("headers() reads axios' AxiosHeaders in the same pass: repeated values joined before redaction, unset ones left out", () => {
    const r = createRedactor(["s3cr3t-VALUE"]);
    const headers = new AxiosHeaders();
    headers.set("X-Echo", ["one", "s3cr3t-VALUE"]);
    headers.set("Set-Cookie", ["a=1", "b=2"]);
    headers.set("x-gone", false as unknown as string);
    headers.set("X-RateLimit-Remaining", "7");
    expect(r.headers(headers)).toEqual({ "x-echo": `one, ${REDACTED}`, "x-ratelimit-remaining": "7" });
  });

  it("terminates on backtracking bait: long runs of backslashes and escapes after a secret's start", () => {
    const r = createRedactor(['a\\"\\"\\"\\"\\"\\"\\"\\"\\"b', "x\t\t\t\t\t\ty"]);
    const bait = "a" + "\\".repeat(100_000) + "x" + "\\t".repeat(50_000);
    expect(r.text(bait)).toBe(bait);
  });
});

describe("credential header names", () => {
  const sensitive = ["Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-API-Key", "X-Auth-Key", "X-Auth-Email", "PRIVATE-TOKEN", "Ocp-Apim-Subscription-Key", "X-Api-Token", "api-token", "x-goog-api-key", "X-Shopify-Access-Token", "X-Postmark-Server-Token", "DD-API-KEY", "X-CSRF-Token", "X-Session-Id", "Stripe-Signature", "X-Client-Secret", "x_api_key", "X-ApiKey", "X-Amz-Security-Token", "X-XSRFToken", "X-Vault-Token"];
  const plain = ["Idempotency-Key", "X-Idempotency-Key", "Keep-Alive", "Content-Length", "Content-Type", "X-RateLimit-Remaining", "RateLimit-Policy", "X-Rate-Limit-Reset", "x-ratelimit-resource", "Retry-After", "WWW-Authenticate", "Stripe-Rate-Limited-Reason", "Sec-WebSocket-Key", "X-Shopify-Shop-Api-Call-Limit", "Sforce-Limit-Info", "Monkey-Business", "X-OAuth-Scopes", "X-Accepted-OAuth-Scopes"];
  for (const name of sensitive) it(`${name} carries a credential`, () => expect(isSensitiveHeaderName(name)).toBe(true));
  for (const name of plain) it(`${name} does not`, () => expect(isSensitiveHeaderName(name)).toBe(false));
  it("extra names given to the redactor count too", () => {
    expect(createRedactor([], ["X-Tenant"]).isSensitiveHeader("x-tenant")).toBe(true);
    expect(createRedactor([]).isSensitiveHeader("x-tenant")).toBe(false);
  });
});

describe("secretsFromHeaders: the secret values in a header map", () => {
  it("takes the token after a scheme, Basic's decoded parts, auth-params, cookie values and plain key values", () => {
    const basic = Buffer.from("me:hunter22").toString("base64");
    const found = secretsFromHeaders({
      Authorization: `Basic ${basic}`,
      "Proxy-Authorization": "Bearer proxy-tok-1",
      "X-Auth": 'Token token="rails-tok-1", email="a@b.c"',
      Cookie: "sid=abcdefg; theme=1",
      "PRIVATE-TOKEN": "glpat-123456",
      "Idempotency-Key": "job-123456",
      Accept: "application/json",
    });
    expect(found).toEqual(expect.arrayContaining([basic, "me:hunter22", "hunter22", "proxy-tok-1", "rails-tok-1", "abcdefg", "glpat-123456"]));
    expect(found).not.toContain("job-123456");
    expect(found).not.toContain("application/json");
  });

  it("any first word is a scheme in Authorization, only known schemes elsewhere", () => {
    expect(credentialParts("Custom abc123xyz", "authorization")).toContain("abc123xyz");
    expect(credentialParts("correct horse battery", "plain")).toEqual(["correct horse battery"]);
    expect(credentialParts("Bearer abc123xyz", "plain")).toContain("abc123xyz");
  });
});

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
