/**
 * The secret search (issue 11). Send Request runs through spectral's harness over every
 * connection type (and a token given only as a step header, and API keys under the header names
 * of GitLab, Cloudflare and Azure) against a loopback server that echoes what it received (URL,
 * headers, body) back in its body, in its headers, and in the throttle reasons the dialects read
 * and persist (Slack's error, Jira's RateLimit-Reason, GitHub's x-ratelimit-resource, Stripe's
 * Stripe-Rate-Limited-Reason), and through a redirect to another host. Every log line, result,
 * thrown error (message, stack, JSON) and returned crossFlowState is searched for every form of
 * every secret (src/lab/faults/encodings.ts), and so is what reached the other host: 0 hits.
 *
 * The secret holds `"`, `\`, `:`, a space, `$` and `+`, the characters that encoders treat
 * differently. Rows that fail on the client of this branch are listed in the fault-suite report.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createConnection, createHarness } from "@prismatic-io/spectral/dist/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiKey, basicAuth, bearerToken, noAuth, oauth2AuthorizationCode, oauth2ClientCredentials } from "../../src/connections";
import component from "../../src/index";
import { findSecretForms } from "../../src/lab/faults/encodings";
import { recordingLogger, startServer, type RecordedRequest, type Reply, type TestServer } from "../helpers/server";

const SECRET = 's3cr3t "q\\b: x$y+z-VALUE-9f8e';
const REFRESH = `${SECRET}-refresh`;
const harness = createHarness(component);
let server: TestServer;
let landing: { url: string; received: string[]; close(): Promise<void> };

/** Another host (127.0.0.2; Linux routes all of 127/8 to loopback) that echoes and records what arrives. */
async function startLanding() {
  const received: string[] = [];
  const s = http.createServer((req, res) => {
    const seen = JSON.stringify({ url: req.url, headers: req.headers });
    received.push(seen);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(seen);
  });
  const host = await new Promise<string>((resolve) => {
    s.once("error", () => s.listen(0, "127.0.0.1", () => resolve("127.0.0.1")));
    s.listen(0, "127.0.0.2", () => resolve("127.0.0.2"));
  });
  return {
    url: `http://${host}:${(s.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => s.close(() => resolve())),
  };
}

beforeAll(async () => {
  server = await startServer([]);
  landing = await startLanding();
});
afterAll(async () => {
  await server.close();
  await landing.close();
});

/** Everything the server received, as one header-safe line (the echo put into headers and reasons). */
const echoLine = (req: RecordedRequest): string => `${req.url} ${Object.values(req.headers).join(" ")} ${req.body}`.replace(/[^\x20-\x7e]/g, "?");
const echoBody = (req: RecordedRequest) => ({ url: req.url, headers: req.headers, body: req.body });
const LONG = { "retry-after": "3600" };

interface Run {
  label: string;
  script: Array<Reply | ((req: RecordedRequest) => Reply)>;
  params: Record<string, unknown>;
  /** The URL path to call (default /echo?q=1). */
  path?: string;
}

const runs: Run[] = [
  { label: "a throttle, then an echo in body, headers and Set-Cookie", script: [{ status: 429, headers: { "retry-after": "0" } }, (req) => ({ status: 200, body: echoBody(req), headers: { "x-echo": echoLine(req), "set-cookie": `sid=${SECRET.replace(/[";\\ ]/g, "")}` } })], params: {} },
  { label: "a final 404 whose body echoes the request", script: [(req) => ({ status: 404, body: echoBody(req) })], params: {} },
  { label: "a long wait in fail mode (ThrottleDeferredError), echo in a header", script: [(req) => ({ status: 429, headers: { ...LONG, "x-echo": echoLine(req) }, body: echoBody(req) })], params: { onLongWait: "fail" } },
  { label: "a long wait in defer mode", script: [(req) => ({ status: 429, headers: LONG, body: echoBody(req) })], params: { onLongWait: "defer" } },
  { label: "a write that times out", script: [{ status: 200, delayMs: 2000 }], params: { method: "POST", data: '{"a":1}', timeoutSeconds: "0.2" } },
  { label: "Slack: the echo as the error of a ratelimited answer", script: [(req) => ({ status: 429, headers: LONG, body: { ok: false, error: echoLine(req) } })], params: { provider: "slack", onLongWait: "defer" } },
  { label: "Jira: the echo as RateLimit-Reason", script: [(req) => ({ status: 429, headers: { ...LONG, "ratelimit-reason": echoLine(req) } })], params: { provider: "jira", onLongWait: "defer" } },
  {
    label: "GitHub: the echo as x-ratelimit-resource",
    script: [(req) => ({ status: 403, headers: { "x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000", "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + 3600), "x-ratelimit-resource": echoLine(req) }, body: { message: "API rate limit exceeded" } })],
    params: { provider: "github", onLongWait: "defer" },
  },
  { label: "Stripe: the echo as Stripe-Rate-Limited-Reason (lower-cased by the dialect)", script: [(req) => ({ status: 429, headers: { ...LONG, "stripe-rate-limited-reason": echoLine(req) } })], params: { provider: "stripe", onLongWait: "defer" } },
  { label: "a redirect to another host", script: [() => ({ status: 302, headers: { location: `${landing.url}/landed` } })], params: {} },
];

interface Case {
  label: string;
  connection?: ReturnType<typeof createConnection>;
  stepHeaders?: Array<{ key: string; value: string }>;
  secrets: string[];
}

const apiKeyIn = (name: string, placement = "header"): Case => ({ label: `API key in ${placement === "query" ? "the query" : "a header"} (${name})`, connection: createConnection(apiKey, { apiKey: SECRET, placement, name }), secrets: [SECRET] });

const cases: Case[] = [
  { label: "no connection, a bare token in a step's Authorization header", connection: createConnection(noAuth, {}), stepHeaders: [{ key: "Authorization", value: `Bearer ${SECRET}` }], secrets: [SECRET] },
  apiKeyIn("X-Custom-Key"),
  apiKeyIn("X-Auth-Key"),
  apiKeyIn("PRIVATE-TOKEN"),
  apiKeyIn("Ocp-Apim-Subscription-Key"),
  apiKeyIn("api_key", "query"),
  { label: "bearer token", connection: createConnection(bearerToken, { token: SECRET }), secrets: [SECRET] },
  { label: "basic auth", connection: createConnection(basicAuth, { username: "user", password: SECRET }), secrets: [SECRET] },
  {
    label: "OAuth 2.0 authorization code",
    connection: createConnection(oauth2AuthorizationCode, { clientId: "app", clientSecret: SECRET, authorizeUrl: "x", tokenUrl: "y" }, { access_token: SECRET, refresh_token: REFRESH }),
    secrets: [SECRET, REFRESH],
  },
  { label: "OAuth 2.0 client credentials", connection: createConnection(oauth2ClientCredentials, { clientId: "app", clientSecret: SECRET, tokenUrl: "y" }, { access_token: SECRET }), secrets: [SECRET] },
];

function describeThrown(error: unknown): string {
  if (!(error instanceof Error)) return JSON.stringify(error) ?? String(error);
  return `${error.name} ${error.message} ${error.stack ?? ""} ${JSON.stringify(error)}`;
}

/** Where each secret form was found: "crossFlowState: raw", "log: lower-cased"... */
function hitsIn(places: Record<string, string>, secrets: readonly string[]): string[] {
  return Object.entries(places).flatMap(([where, text]) => findSecretForms(text, secrets).map((h) => `${where}: ${h.encoding}`));
}

describe("no secret in any log line, result, thrown error, crossFlowState or other host", () => {
  for (const c of cases) {
    describe(c.label, () => {
      for (const run of runs) {
        it(run.label, async () => {
          const logger = recordingLogger();
          server.script(run.script);
          const callsBefore = server.calls.length;
          const landedBefore = landing.received.length;
          let result: unknown = null;
          let thrown: unknown = null;
          const params = { connection: c.connection, url: `${server.url}${run.path ?? "/echo?q=1"}`, method: "GET", headers: c.stepHeaders, ...run.params };
          try {
            result = await harness.action("sendRequest", params, { crossFlowState: {}, logger: logger as never });
          } catch (error) {
            thrown = error;
          }
          // The secret really went out (otherwise the search proves nothing).
          expect(findSecretForms(JSON.stringify(server.calls.slice(callsBefore)), c.secrets).length).toBeGreaterThan(0);
          const state = (result as { crossFlowState?: unknown } | null)?.crossFlowState;
          const { crossFlowState: _omitted, ...rest } = (result ?? {}) as Record<string, unknown>;
          void _omitted;
          const places = {
            log: logger.lines.join("\n"),
            result: JSON.stringify(rest),
            crossFlowState: JSON.stringify(state ?? null),
            error: thrown === null ? "" : describeThrown(thrown),
            "other host": landing.received.slice(landedBefore).join("\n"),
          };
          expect(hitsIn(places, c.secrets)).toEqual([]);
          expect(logger.lines.length + (thrown === null ? 0 : 1)).toBeGreaterThan(0);
        });
      }
    });
  }
});
