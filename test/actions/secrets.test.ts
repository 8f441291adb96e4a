/**
 * A secret goes out through every connection type; the server echoes everything it received, and
 * every log line, result and thrown error is searched for the secret (and its encodings).
 */
import { createConnection } from "@prismatic-io/spectral/dist/testing";
import { createHarness } from "@prismatic-io/spectral/dist/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKey, basicAuth, bearerToken, noAuth, oauth2AuthorizationCode, oauth2ClientCredentials } from "../../src/connections";
import component from "../../src/index";
import { recordingLogger, startServer, type RecordedRequest, type TestServer } from "../helpers/server";

const SECRET = "s3cr3t-VALUE-9f8e7d6c";
const harness = createHarness(component);
let server: TestServer;

const echo = (req: RecordedRequest) => ({ url: req.url, headers: req.headers, body: req.body });

beforeAll(async () => {
  server = await startServer([]);
});
afterAll(async () => {
  await server.close();
});

function encodings(secret: string): string[] {
  return [secret, encodeURIComponent(secret), Buffer.from(secret).toString("base64"), Buffer.from(`user:${secret}`).toString("base64")];
}

function assertClean(label: string, everything: unknown[]) {
  const haystack = everything.map((x) => (x instanceof Error ? `${x.name} ${x.message} ${x.stack ?? ""} ${JSON.stringify(x)}` : JSON.stringify(x) ?? String(x))).join("\n");
  for (const needle of encodings(SECRET)) expect(haystack, `${label} leaked ${needle}`).not.toContain(needle);
}

const cases: Array<{ label: string; connection?: ReturnType<typeof createConnection>; stepHeaders?: Array<{ key: string; value: string }> }> = [
  { label: "none (secret in a step header)", connection: createConnection(noAuth, {}), stepHeaders: [{ key: "Authorization", value: `Bearer ${SECRET}` }] },
  { label: "API key in a header", connection: createConnection(apiKey, { apiKey: SECRET, placement: "header", name: "X-Custom-Key" }) },
  { label: "API key in the query", connection: createConnection(apiKey, { apiKey: SECRET, placement: "query", name: "api_key" }) },
  { label: "bearer token", connection: createConnection(bearerToken, { token: SECRET }) },
  { label: "basic auth", connection: createConnection(basicAuth, { username: "user", password: SECRET }) },
  { label: "OAuth 2.0 authorization code", connection: createConnection(oauth2AuthorizationCode, { clientId: "app", clientSecret: SECRET, authorizeUrl: "x", tokenUrl: "y" }, { access_token: SECRET, refresh_token: `${SECRET}-r` }) },
  { label: "OAuth 2.0 client credentials", connection: createConnection(oauth2ClientCredentials, { clientId: "app", clientSecret: SECRET, tokenUrl: "y" }, { access_token: SECRET }) },
];

describe("no secret in any log line, result or thrown error", () => {
  for (const c of cases) {
    it(c.label, async () => {
      const logger = recordingLogger();
      const collected: unknown[] = [];
      const run = async (script: Parameters<TestServer["script"]>[0], extra: Record<string, unknown>) => {
        server.script(script);
        const before = server.calls.length;
        try {
          collected.push(await harness.action("sendRequest", { connection: c.connection, url: `${server.url}/echo?q=1`, method: "GET", headers: c.stepHeaders, ...extra }, { crossFlowState: {}, logger: logger as never }));
        } catch (error) {
          collected.push(error);
        }
        // The secret really went out (otherwise the search proves nothing).
        const sent = JSON.stringify(server.calls.slice(before));
        expect(encodings(SECRET).some((e) => sent.includes(e))).toBe(true);
      };
      // A throttle then an echo of everything the server received.
      await run([{ status: 429, headers: { "retry-after": "0" } }, (req) => ({ status: 200, body: echo(req), headers: { "set-cookie": `sid=${SECRET}` } })], {});
      // A final error whose body echoes the request.
      await run([(req) => ({ status: 404, body: echo(req) })], {});
      // A long wait in fail mode (ThrottleDeferredError) and in defer mode.
      await run([(req) => ({ status: 429, headers: { "retry-after": "3600", "x-echo": SECRET }, body: echo(req) })], { onLongWait: "fail" });
      await run([(req) => ({ status: 429, headers: { "retry-after": "3600" }, body: echo(req) })], { onLongWait: "defer" });
      // A write that times out.
      await run([{ status: 200, delayMs: 2000 }], { method: "POST", data: '{"a":1}', timeoutSeconds: "0.2" });
      expect(collected).toHaveLength(5);
      expect(logger.lines.length).toBeGreaterThan(0);
      assertClean(c.label, [...collected, ...logger.lines]);
    });
  }
});
