import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { requestScopeFor } from "../../../src/engine";
import { serverPerTest, virtualClock } from "../../helpers/server";

describe("a Trello request's scope", () => {
  it("tells the members endpoint, limited on its own, from the rest of the API", () => {
    expect(requestScopeFor({ request: { url: "https://api.trello.com/1/members/me/boards" } })).toEqual({ endpoint: "members" });
    expect(requestScopeFor({ request: { url: "https://api.trello.com/1/boards/5abbe4b7ddc1b351ef961414/cards" } })).toEqual({ endpoint: "api" });
  });
});

describe("a Trello 429, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("waits the documented 10 s once, not a backoff from half a second inside the window", async () => {
    const server = await servers.start([{ status: 429, body: { error: "API_TOKEN_LIMIT_EXCEEDED", message: "Rate limit exceeded" } }, { status: 200, body: { id: "card1" } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "trello", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/1/cards/card1" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "doc:fixed-10s" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(10_000);
  });
});
