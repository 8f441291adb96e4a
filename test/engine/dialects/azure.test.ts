import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify, requestScopeFor } from "../../../src/engine";
import { armScopeOf } from "../../../src/engine/dialects/azure";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/request-limits-and-throttling
// https://learn.microsoft.com/en-us/troubleshoot/azure/virtual-machines/troubleshooting-throttling-errors
// https://learn.microsoft.com/en-us/azure/storage/blobs/scalability-targets (503 Server Busy, 500 Operation Timeout)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const SUB = "00000000-1111-2222-3333-444444444444";
const ARM = "https://management.azure.com";
const BLOB = "https://contosoaccount.blob.core.windows.net";
const at = (method: string, url: string, status: number, headers: Record<string, string> = {}, body: unknown = {}) =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW });
const storageXml = (code: string, message: string) => `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;

describe("Azure hosts", () => {
  it.each([
    [`${ARM}/subscriptions/${SUB}/resourcegroups`, "azure"],
    ["https://management.usgovcloudapi.net/subscriptions/x/resourcegroups", "azure"],
    ["https://management.chinacloudapi.cn/subscriptions/x/resourcegroups", "azure"],
    [`${BLOB}/logs/app.log`, "azure-storage"],
    ["https://contosoaccount.queue.core.windows.net/jobs/messages", "azure-storage"],
    ["https://contosoaccount.table.core.windows.net/Orders", "azure-storage"],
    ["https://contosoaccount.file.core.windows.net/share/dir/file.txt", "azure-storage"],
    ["https://contosoaccount.dfs.core.windows.net/fs/dir/file.csv", "azure-storage"],
    ["https://contosoaccount.blob.core.usgovcloudapi.net/logs/app.log", "azure-storage"],
  ])("%s is read by %s", (url, provider) => {
    expect(at("GET", url, 503).provider).toBe(provider);
  });
});

describe("an ARM request's scope: its subscription (or the tenant) and its operation type, known before it is sent", () => {
  it.each([
    ["GET", `/subscriptions/${SUB}/resourcegroups`, { armScope: `subscriptions/${SUB}`, operation: "reads" }],
    ["HEAD", `/subscriptions/${SUB.toUpperCase()}/resourcegroups/rg`, { armScope: `subscriptions/${SUB}`, operation: "reads" }],
    ["PUT", `/subscriptions/${SUB}/resourcegroups/rg`, { armScope: `subscriptions/${SUB}`, operation: "writes" }],
    ["POST", `/subscriptions/${SUB}/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/a/listKeys`, { armScope: `subscriptions/${SUB}`, operation: "writes" }],
    ["DELETE", `/subscriptions/${SUB}/resourcegroups/rg`, { armScope: `subscriptions/${SUB}`, operation: "deletes" }],
    ["GET", "/tenants", { armScope: "tenant", operation: "reads" }],
    ["GET", "/providers/Microsoft.Management/managementGroups", { armScope: "tenant", operation: "reads" }],
  ])("%s %s", (method, path, scope) => {
    expect(armScopeOf(method, path)).toEqual(scope);
  });

  it("agrees with the scope of the 429 its bucket answers with, and a write is another bucket", () => {
    const url = `${ARM}/subscriptions/${SUB}/resourcegroups?api-version=2021-04-01`;
    const verdict = at("GET", url, 429, { "retry-after": "17", "x-ms-ratelimit-remaining-subscription-reads": "0" }, { error: { code: "SubscriptionRequestsThrottled" } });
    expect(verdict).toMatchObject({ provider: "azure", throttled: true, limitType: "burst", minWaitMs: 17_000, waitSource: "retry-after" });
    expect(verdict.scope).toEqual(requestScopeFor({ request: { method: "GET", url } }));
    expect(requestScopeFor({ request: { method: "PUT", url } })).not.toEqual(verdict.scope);
  });
});

describe("ARM's remaining counts", () => {
  const url = `${ARM}/subscriptions/${SUB}/resourcegroups`;

  it("the tighter of the principal's bucket and the global one (15 times it) is the budget, with the documented refill as the estimate", () => {
    const verdict = at("GET", url, 200, { "x-ms-ratelimit-remaining-subscription-reads": "249", "x-ms-ratelimit-remaining-subscription-global-reads": "120" });
    expect(verdict.budget).toMatchObject({ remaining: 120, limit: 3750, restorePerSecond: 375, restoreEstimated: true, source: "x-ms-ratelimit-remaining-subscription-global-reads" });
  });

  it("writes and deletes are buckets of 200 refilled at 10 per second; tenant reads one of 250", () => {
    expect(at("PUT", url, 200, { "x-ms-ratelimit-remaining-subscription-writes": "199" }).budget).toMatchObject({ remaining: 199, limit: 200, restorePerSecond: 10 });
    expect(at("DELETE", url, 200, { "x-ms-ratelimit-remaining-subscription-deletes": "14999" }).budget).toMatchObject({ remaining: 14999, limit: null });
    expect(at("GET", `${ARM}/tenants`, 200, { "x-ms-ratelimit-remaining-tenant-reads": "248" }).budget).toMatchObject({ remaining: 248, limit: 250, restorePerSecond: 25 });
  });

  it("a service's own override count and a provider policy's count are counts with no limit; a malformed entry is listed, not guessed", () => {
    const verdict = at("GET", url, 200, { "x-ms-ratelimit-remaining-subscription-resource-requests": "0", "x-ms-ratelimit-remaining-resource": "Microsoft.Compute/GetVMScaleSet3Min;197,garbage" });
    expect(verdict.budget).toMatchObject({ remaining: 0, limit: null, source: "x-ms-ratelimit-remaining-subscription-resource-requests" });
    expect(verdict.ignored).toContainEqual(expect.objectContaining({ signal: "x-ms-ratelimit-remaining-resource", value: "garbage" }));
  });

  it("a 429 whose ARM counts show room is the resource provider's limit, waited its Retry-After", () => {
    const verdict = at("GET", `${url}/rg/providers/Microsoft.Compute/virtualMachines`, 429, { "retry-after": "60", "x-ms-ratelimit-remaining-subscription-reads": "200" }, { error: { code: "TooManyRequests" } });
    expect(verdict).toMatchObject({ throttled: true, limitType: "burst", minWaitMs: 60_000 });
    expect(verdict.reason).toContain("resource provider");
  });

  it("x-ms-retry-after-ms (the Azure SDK's) is read as a wait in ms", () => {
    expect(at("GET", url, 429, { "x-ms-retry-after-ms": "1500" })).toMatchObject({ throttled: true, minWaitMs: 1500, waitSource: "x-ms-retry-after-ms" });
  });
});

describe("Azure Resource Graph's query quota", () => {
  const url = `${ARM}/providers/Microsoft.ResourceGraph/resources?api-version=2021-03-01`;

  it("is a scope of its own, and its count resets after hh:mm:ss", () => {
    const verdict = at("POST", url, 200, { "x-ms-user-quota-remaining": "10", "x-ms-user-quota-resets-after": "00:00:03" }, { totalRecords: 0, data: [] });
    expect(verdict.scope).toEqual({ armScope: "resourcegraph", operation: "queries" });
    expect(verdict.budget).toMatchObject({ remaining: 10, limit: null, resetAt: "2026-11-30T12:00:03.000Z", source: "x-ms-user-quota-remaining" });
  });

  it("a 429 with the quota spent waits until its reset when no Retry-After says longer", () => {
    const verdict = at("POST", url, 429, { "x-ms-user-quota-remaining": "0", "x-ms-user-quota-resets-after": "00:00:04" }, { error: { code: "RateLimiting", message: "Please provide below info when asking for support" } });
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 4000, waitSource: "x-ms-user-quota-resets-after" });
    expect(verdict.reason).toContain("Resource Graph");
  });

  it("a reset that is not hh:mm:ss is listed as unreadable, not guessed", () => {
    const verdict = at("POST", url, 200, { "x-ms-user-quota-remaining": "12", "x-ms-user-quota-resets-after": "3s" });
    expect(verdict.budget).toMatchObject({ remaining: 12, resetAt: null });
    expect(verdict.ignored).toContainEqual(expect.objectContaining({ signal: "x-ms-user-quota-resets-after" }));
  });
});

describe("Azure Storage's throttles", () => {
  it.each([
    ["Ingress is over the account limit.", "account"],
    ["Egress is over the account limit.", "account"],
    ["Operations per second is over the account limit.", "account"],
    ["The server is currently unable to receive requests. Please retry your request.", "partition"],
  ])("503 ServerBusy %j is a burst throttle (%s)", (message, what) => {
    const verdict = at("GET", `${BLOB}/logs/app.log`, 503, { "x-ms-error-code": "ServerBusy" }, storageXml("ServerBusy", message));
    expect(verdict).toMatchObject({ provider: "azure-storage", throttled: true, retryable: true, limitType: "burst", minWaitMs: null });
    expect(verdict.reason).toContain(what);
  });

  it("Data Lake's JSON error.code names ServerBusy too", () => {
    const body = { error: { code: "ServerBusy", message: "Egress is over the account limit." } };
    expect(at("GET", "https://contosoaccount.dfs.core.windows.net/fs/dir/file.csv", 503, {}, body)).toMatchObject({ throttled: true, limitType: "burst" });
  });

  it("500 OperationTimedOut is a server-kind throttle; 500 InternalError a transient failure, not a throttle", () => {
    expect(at("PUT", `${BLOB}/logs/app.log`, 500, { "x-ms-error-code": "OperationTimedOut" }, storageXml("OperationTimedOut", "The operation could not be completed within the permitted time."))).toMatchObject({
      throttled: true,
      retryable: true,
      limitType: "server",
    });
    expect(at("PUT", `${BLOB}/logs/app.log`, 500, { "x-ms-error-code": "InternalError" }, storageXml("InternalError", "The server encountered an internal error. Please retry the request."))).toMatchObject({
      throttled: false,
      retryable: true,
      limitType: "server",
    });
  });

  it("a 409 (BlobAlreadyExists) is final", () => {
    expect(at("PUT", `${BLOB}/logs/app.log`, 409, { "x-ms-error-code": "BlobAlreadyExists" }, storageXml("BlobAlreadyExists", "The specified blob already exists."))).toMatchObject({ throttled: false, retryable: false });
  });
});

describe("Azure, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("an ARM 429 waits its Retry-After once, then the resource groups are listed", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 429, headers: { "retry-after": "5", "x-ms-ratelimit-remaining-subscription-reads": "0" }, body: { error: { code: "SubscriptionRequestsThrottled", message: "Number of 'read' requests for subscription exceeded." } } },
      { status: 200, headers: { "x-ms-ratelimit-remaining-subscription-reads": "249" }, body: { value: [] } },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "azure", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "GET", url: `/subscriptions/${SUB}/resourcegroups?api-version=2021-04-01` });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("azure");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 429, waitSource: "retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(5000);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(5000);
  });

  it("a Storage 503 ServerBusy backs off, then the blob is written", async () => {
    const server = await servers.start([
      { status: 503, headers: { "content-type": "application/xml", "x-ms-error-code": "ServerBusy" }, body: storageXml("ServerBusy", "Operations per second is over the account limit.") },
      { status: 201, body: "" },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "azure-storage", clock: virtualClock() });
    const result = await client.request({ method: "PUT", url: "/logs/app.log", headers: { "x-ms-blob-type": "BlockBlob" }, data: "hello" });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("azure-storage");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 503, waitSource: expect.stringMatching(/^backoff/) });
    expect(result.attempts[0]!.waitMs).toBeGreaterThan(0);
  });

  it("an ARM 403 AuthorizationFailed with room in the bucket is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: { "x-ms-ratelimit-remaining-subscription-deletes": "199" }, body: { error: { code: "AuthorizationFailed", message: "The client does not have authorization to perform action." } } }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "azure", clock: virtualClock() });
    const result = await client.request({ method: "DELETE", url: `/subscriptions/${SUB}/resourcegroups/rg?api-version=2021-04-01` });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "azure", limitType: "permission", retryable: false });
  });

  it("a Storage 403 AuthorizationPermissionMismatch is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 403, headers: { "content-type": "application/xml", "x-ms-error-code": "AuthorizationPermissionMismatch" }, body: storageXml("AuthorizationPermissionMismatch", "This request is not authorized to perform this operation using this permission.") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "azure-storage", clock: virtualClock() });
    const result = await client.request({ method: "GET", url: "/logs?restype=container&comp=list" });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "azure-storage", limitType: "permission", retryable: false });
  });
});
