/**
 * Issue 10 item 6: Form Data, File Data (+ file names) and Debug Request, as in spectral's Raw
 * Request. The loopback server receives the multipart body and it is parsed back with the
 * platform's own multipart parser; Debug Request's lines are searched for every credential.
 */
import { createConnection, createHarness } from "@prismatic-io/spectral/dist/testing";
import { afterEach, describe, expect, it } from "vitest";
import { apiKey, bearerToken } from "../../src/connections";
import component from "../../src/index";
import { recordingLogger, startServer, type RecordedRequest, type TestServer } from "../helpers/server";

const SECRET = "s3cr3t-DEBUG-7a6b5c4d";
const harness = createHarness(component);
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function formOf(call: RecordedRequest) {
  return new Response(call.body, { headers: { "content-type": String(call.headers["content-type"]) } }).formData();
}

describe("Send Request: Form Data and File Data", () => {
  it("sends fields and files as multipart/form-data, file names from File Data File Names or the key", async () => {
    server = await startServer([{ status: 201, body: { ok: true } }]);
    await harness.action(
      "sendRequest",
      {
        url: `${server.url}/upload`,
        method: "POST",
        formData: [{ key: "description", value: "A red widget" }],
        fileData: [
          { key: "report", value: "col1,col2\n1,2\n" },
          { key: "notes", value: Buffer.from("plain notes") },
        ],
        fileDataFileNames: [{ key: "report", value: "report.csv" }],
        headers: [{ key: "Content-Type", value: "application/json" }],
      },
      { crossFlowState: {} },
    );
    expect(server.calls).toHaveLength(1);
    expect(String(server.calls[0]!.headers["content-type"])).toMatch(/^multipart\/form-data; boundary=/);
    const form = await formOf(server.calls[0]!);
    expect(form.get("description")).toBe("A red widget");
    const report = form.get("report") as File;
    expect(report.name).toBe("report.csv");
    expect(await report.text()).toBe("col1,col2\n1,2\n");
    const notes = form.get("notes") as File;
    expect(notes.name).toBe("notes");
    expect(await notes.text()).toBe("plain notes");
  });

  it("a multipart POST throttled with 429 is resent with the very same body", async () => {
    server = await startServer([{ status: 429, headers: { "retry-after": "0" } }, { status: 201, body: { ok: true } }]);
    const result = await harness.action("sendRequest", { url: `${server.url}/upload`, method: "POST", fileData: [{ key: "file", value: "contents" }] }, { crossFlowState: {} });
    expect(result && "branch" in result ? result.branch : undefined).toBe("Success");
    expect(server.calls).toHaveLength(2);
    expect(server.calls[0]!.body.length).toBeGreaterThan(0);
    expect(server.calls[1]!.body).toBe(server.calls[0]!.body);
    expect(await ((await formOf(server.calls[1]!)).get("file") as File).text()).toBe("contents");
  });
});

describe("Send Request: Debug Request", () => {
  const lines = (logger: ReturnType<typeof recordingLogger>, type: string) => logger.lines.filter((l) => l.startsWith("{") && (JSON.parse(l) as { type?: string }).type === type).map((l) => JSON.parse(l) as Record<string, unknown>);
  const encodings = [SECRET, encodeURIComponent(SECRET), Buffer.from(SECRET).toString("base64")];

  it("logs the request and the response, with credential headers [redacted] and query values left out", async () => {
    server = await startServer([(req) => ({ status: 200, headers: { "x-echo-token": SECRET }, body: { youSent: req.headers, token: SECRET } })]);
    const logger = recordingLogger();
    const connection = createConnection(bearerToken, { token: SECRET });
    await harness.action(
      "sendRequest",
      { connection, url: `${server.url}/items?page=2`, method: "POST", data: `{"note":"${SECRET}"}`, queryParams: [{ key: "limit", value: "10" }], headers: [{ key: "X-Service-Token", value: "step-secret-123" }], debugRequest: "true" },
      { crossFlowState: {}, logger: logger as never },
    );
    const [request] = lines(logger, "request");
    const [response] = lines(logger, "response");
    expect(request).toMatchObject({ type: "request", method: "POST", url: `${server.url}/items?page=…&limit=…`, headers: { Authorization: "[redacted]", "X-Service-Token": "[redacted]" }, body: { note: "[redacted]" } });
    expect(response).toMatchObject({ type: "response", outcome: "success", status: 200, attempts: 1 });
    const everything = logger.lines.join("\n");
    for (const needle of [...encodings, "step-secret-123"]) expect(everything).not.toContain(needle);
    // The secret really went out, so the search above proves something.
    expect(JSON.stringify(server.calls[0]!.headers)).toContain(SECRET);
  });

  it("never logs an API key sent in the query", async () => {
    server = await startServer([{ status: 200, body: { ok: true } }]);
    const logger = recordingLogger();
    const connection = createConnection(apiKey, { apiKey: SECRET, placement: "query", name: "api_key" });
    await harness.action("sendRequest", { connection, url: `${server.url}/items`, method: "GET", debugRequest: "true" }, { crossFlowState: {}, logger: logger as never });
    expect(lines(logger, "request")[0]).toMatchObject({ url: `${server.url}/items?api_key=…` });
    for (const needle of encodings) expect(logger.lines.join("\n")).not.toContain(needle);
    expect(server.calls[0]!.url).toContain(encodeURIComponent(SECRET));
  });

  it("logs a multipart body as its parts and size, and nothing when Debug Request is off", async () => {
    server = await startServer([{ status: 201, body: { ok: true } }]);
    const logger = recordingLogger();
    await harness.action("sendRequest", { url: `${server.url}/upload`, method: "POST", formData: [{ key: "a", value: "1" }], fileData: [{ key: "f", value: "x" }], debugRequest: "true" }, { crossFlowState: {}, logger: logger as never });
    expect(String(lines(logger, "request")[0]!.body)).toMatch(/^multipart\/form-data, \d+ bytes; fields: a; files: f \(f\)$/);

    const quiet = recordingLogger();
    await harness.action("sendRequest", { url: `${server.url}/upload`, method: "GET" }, { crossFlowState: {}, logger: quiet as never });
    expect(lines(quiet, "request")).toHaveLength(0);
    expect(lines(quiet, "response")).toHaveLength(0);
  });
});
