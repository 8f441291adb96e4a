import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { serverPerTest, virtualClock } from "../../helpers/server";

const dayLimit = { status: 429, serviceErrorCode: 101, code: "TOO_MANY_REQUESTS", message: "Resource level throttle APPLICATION DAY limit for calls to this resource is reached." };

describe("a LinkedIn daily limit, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("is deferred to midnight UTC on the server's clock after one call, not retried until the attempts run out", async () => {
    const server = await servers.start([{ status: 429, headers: { date: "Tue, 01 Dec 2026 23:00:00 GMT" }, body: dayLimit }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "linkedin", clock: virtualClock(), onLongWait: "defer" });
    const result = await client.request({ method: "GET", url: "/rest/adAnalytics?q=analytics" });
    expect(result.outcome).toBe("deferred");
    expect(server.calls).toHaveLength(1);
    expect(result.notBefore).toBe("2026-01-01T01:00:00.000Z");
  });

  it("a 429 that names no day's limit is retried, as a burst", async () => {
    const server = await servers.start([{ status: 429, body: { status: 429, message: "Too many requests" } }, { status: 200, body: { elements: [] } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "linkedin", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/rest/organizationAcls?q=roleAssignee" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
  });
});
