import { describe, expect, it } from "vitest";
import { createThrottleClient } from "../../../src/client";
import { classify } from "../../../src/engine";
import { awsErrorName } from "../../../src/engine/dialects/aws";
import { serverPerTest, virtualClock } from "../../helpers/server";

// https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html (retry mode "standard")
// https://github.com/smithy-lang/smithy-typescript/blob/main/packages/service-error-classification/src/constants.ts
// https://smithy.io/2.0/aws/protocols/aws-restjson1-protocol.html (x-amzn-ErrorType, code, __type)
const NOW = Date.parse("2026-11-30T12:00:00Z");
const DYNAMODB = "https://dynamodb.us-east-1.amazonaws.com/";
const json = (type: string, message: string, extra: Record<string, unknown> = {}) => ({ __type: type, message, ...extra });
const queryXml = (code: string, message: string) =>
  `<ErrorResponse><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>r-1</RequestId></ErrorResponse>`;
const at = (url: string, status: number, body: unknown, headers: Record<string, string> = {}, method = "POST") =>
  classify({ request: { method, url }, response: { status, headers, body } }, { nowMs: NOW });

describe("AWS error names, as the SDKs sanitise them", () => {
  it.each([
    ["ThrottlingException:http://internal.amazon.com/coral/com.amazon.coral.availability/", "ThrottlingException"],
    ["com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException", "ProvisionedThroughputExceededException"],
    ["aws.protocoltests.restjson#FooError:http://internal.amazon.com/", "FooError"],
    ["SlowDown", "SlowDown"],
  ])("%s is %s", (raw, name) => {
    expect(awsErrorName(raw)).toBe(name);
  });
});

describe("AWS hosts", () => {
  it.each([
    "https://dynamodb.us-east-1.amazonaws.com/",
    "https://amzn-s3-demo-bucket.s3.us-east-1.amazonaws.com/key",
    "https://ec2.cn-north-1.amazonaws.com.cn/",
    "https://a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com/prod/pets",
  ])("%s is read by the aws dialect", (url) => {
    expect(at(url, 429, { message: "Too Many Requests" }, {}, "GET").provider).toBe("aws");
  });

  it("Amazon's Selling Partner API (amazon.com) stays with its own dialect", () => {
    expect(at("https://sellingpartnerapi-na.amazon.com/orders/v0/orders", 429, { errors: [{ code: "QuotaExceeded" }] }, {}, "GET").provider).toBe("amazon-sp");
  });
});

describe("the SDKs' throttling codes, whatever the status", () => {
  it.each([
    [400, "Throttling", "xml"],
    [400, "ThrottlingException", "json"],
    [400, "ThrottledException", "json"],
    [400, "RequestThrottledException", "json"],
    [403, "RequestThrottled", "xml"],
    [400, "ProvisionedThroughputExceededException", "json"],
    [400, "RequestLimitExceeded", "json"],
    [503, "RequestLimitExceeded", "xml"],
    [503, "SlowDown", "xml"],
    [509, "BandwidthLimitExceeded", "xml"],
    [400, "EC2ThrottledException", "json"],
  ])("%i %s is a burst throttle with no wait of its own (backoff)", (status, code, shape) => {
    const body = shape === "xml" ? queryXml(code, "Rate exceeded") : json(`com.amazonaws.svc#${code}`, "Rate exceeded");
    expect(at(DYNAMODB, status, body)).toMatchObject({ provider: "aws", throttled: true, retryable: true, limitType: "burst", minWaitMs: null });
  });

  it("the x-amzn-ErrorType header names the code before the body does", () => {
    const verdict = at("https://lambda.us-east-1.amazonaws.com/2015-03-31/functions", 400, { message: "Rate exceeded" }, { "x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/" });
    expect(verdict).toMatchObject({ throttled: true, limitType: "burst" });
    expect(verdict.reason).toContain("ThrottlingException");
  });

  it("a 429 is a throttle whatever its code; x-amz-retry-after (ms) is its wait", () => {
    const verdict = at("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse", 429, { message: "Too many tokens, please wait before trying again." }, { "x-amz-retry-after": "1500" });
    expect(verdict).toMatchObject({ throttled: true, retryable: true, limitType: "burst", minWaitMs: 1500, waitSource: "x-amz-retry-after" });
  });

  it("DynamoDB's ThrottlingReasons are named in the reason", () => {
    const body = json("com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException", "Throughput exceeded", {
      ThrottlingReasons: [{ reason: "IndexWriteProvisionedThroughputExceeded", resource: "arn:aws:dynamodb:us-east-1:111122223333:table/Music/index/Genre" }],
    });
    expect(at(DYNAMODB, 400, body).reason).toContain("IndexWriteProvisionedThroughputExceeded on arn:aws:dynamodb:us-east-1:111122223333:table/Music/index/Genre");
  });
});

describe("codes read apart from the plain throttle", () => {
  it.each([
    ["Rate exceeded for stream orders under account 111122223333.", "burst", true, true],
    ["The request exceeded the rate limit. Retry after the specified time period.", "burst", true, true],
    ["Subscriber limit exceeded: Only 50 tables can be created, updated, or deleted simultaneously", "concurrency", true, true],
    ["This request would exceed the shard limit for the account 111122223333 in us-east-1.", "quota", true, false],
    ["The operation did not succeed because it would have exceeded a service limit for your account.", "quota", true, false],
    ["Attempt limit exceeded, please try after some time.", "burst", true, true],
  ])("LimitExceededException %j is %s", (message, limitType, throttled, retryable) => {
    expect(at(DYNAMODB, 400, json("LimitExceededException", message))).toMatchObject({ throttled, retryable, limitType });
  });

  it("Lambda's rate Reasons are bursts, its concurrency Reasons concurrency", () => {
    const lambda = "https://lambda.us-east-1.amazonaws.com/2015-03-31/functions/f/invocations";
    const headers = { "x-amzn-ErrorType": "TooManyRequestsException" };
    expect(at(lambda, 429, { Reason: "FunctionInvocationRateLimitExceeded", message: "Rate Exceeded." }, headers)).toMatchObject({ limitType: "burst", throttled: true });
    expect(at(lambda, 429, { Reason: "ReservedFunctionConcurrentInvocationLimitExceeded", message: "Rate Exceeded." }, headers)).toMatchObject({ limitType: "concurrency", throttled: true });
  });

  it("Route 53's PriorRequestNotComplete is contention: retried, refused rather than done, holding back nothing", () => {
    const verdict = at("https://route53.amazonaws.com/2013-04-01/hostedzone/Z1D633PJN98FT9/rrset", 400, queryXml("PriorRequestNotComplete", "The request was rejected because Route 53 was still processing a prior request."));
    expect(verdict).toMatchObject({ throttled: false, retryable: true, limitType: "contention", writeNotProcessed: true });
  });

  it("S3's RequestTimeout is a transient timeout, retried, not a limit", () => {
    const body = "<Error><Code>RequestTimeout</Code><Message>Your socket connection to the server was not read from or written to within the timeout period.</Message></Error>";
    expect(at("https://b.s3.us-east-1.amazonaws.com/k", 400, body, {}, "PUT")).toMatchObject({ throttled: false, retryable: true, limitType: "server" });
  });

  it("ServiceQuotaExceededException is a quota: final, no wait", () => {
    expect(at("https://bedrock.us-east-1.amazonaws.com/x", 400, { message: "Your request exceeds the service quota for your account." }, { "x-amzn-ErrorType": "ServiceQuotaExceededException" })).toMatchObject({
      throttled: true,
      retryable: false,
      limitType: "quota",
      minWaitMs: null,
    });
  });

  it("API Gateway's throttle (\"Too Many Requests\") is a burst, its usage-plan quota (\"Limit Exceeded\") is not retried", () => {
    const url = "https://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com/prod/pets";
    expect(at(url, 429, { message: "Too Many Requests" }, {}, "GET")).toMatchObject({ throttled: true, retryable: true, limitType: "burst" });
    expect(at(url, 429, { message: "Limit Exceeded" }, {}, "GET")).toMatchObject({ throttled: true, retryable: false, limitType: "quota" });
  });

  it("access errors are final, even as a 400 or a 403", () => {
    expect(at("https://b.s3.us-east-1.amazonaws.com/k", 403, "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>", {}, "GET")).toMatchObject({ throttled: false, retryable: false, limitType: "permission" });
    expect(at(DYNAMODB, 400, json("com.amazon.coral.service#UnrecognizedClientException", "The security token included in the request is invalid."))).toMatchObject({ retryable: false, limitType: "permission" });
  });

  it("a 503 with no code is a transient server failure, not a throttle; a ValidationException is final", () => {
    expect(at("https://b.s3.us-east-1.amazonaws.com/k", 503, undefined, {}, "HEAD")).toMatchObject({ throttled: false, retryable: true, limitType: "server" });
    expect(at(DYNAMODB, 400, json("com.amazon.coral.validate#ValidationException", "1 validation error detected"))).toMatchObject({ throttled: false, retryable: false, limitType: "validation" });
  });
});

describe("AWS throttles, through the client against a loopback server", () => {
  const servers = serverPerTest();

  it("DynamoDB's ProvisionedThroughputExceededException backs off (no wait sent), then the item is written", async () => {
    const server = await servers.start([
      { status: 400, body: json("com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException", "The level of configured provisioned throughput for the table was exceeded.") },
      { status: 200, body: {} },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "aws", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/", headers: { "X-Amz-Target": "DynamoDB_20120810.PutItem" }, data: { TableName: "Music", Item: { Artist: { S: "No One You Know" } } } });
    expect(result.outcome).toBe("success");
    expect(result.provider).toBe("aws");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 400, waitSource: expect.stringMatching(/^backoff/) });
    expect(result.attempts[0]!.waitMs).toBeGreaterThan(0);
    expect(result.attempts[0]!.waitMs).toBeLessThan(20_000);
  });

  it("EC2's 503 RequestLimitExceeded with x-amz-retry-after waits that long, then the call goes through", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 503, headers: { "content-type": "text/xml", "x-amz-retry-after": "2500" }, body: "<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded.</Message></Error></Errors><RequestID>r-1</RequestID></Response>" },
      { status: 200, headers: { "content-type": "text/xml" }, body: "<DescribeInstancesResponse><reservationSet/></DescribeInstancesResponse>" },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "aws", clock });
    const start = clock.nowMs();
    const result = await client.request({ method: "POST", url: "/", data: "Action=DescribeInstances&Version=2016-11-15" });
    expect(result.outcome).toBe("success");
    expect(server.calls).toHaveLength(2);
    expect(result.attempts[0]).toMatchObject({ status: 503, waitSource: "x-amz-retry-after" });
    expect(result.attempts[0]!.waitMs).toBeGreaterThanOrEqual(2500);
    expect(clock.nowMs() - start).toBeGreaterThanOrEqual(2500);
  });

  it("a ValidationException is final: one call, no retry", async () => {
    const server = await servers.start([{ status: 400, body: json("com.amazon.coral.validate#ValidationException", "1 validation error detected: Value null at 'tableName' failed to satisfy constraint") }]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "aws", clock: virtualClock() });
    const result = await client.request({ method: "POST", url: "/", data: {} });
    expect(result.outcome).toBe("http_error");
    expect(server.calls).toHaveLength(1);
    expect(result.verdict).toMatchObject({ provider: "aws", limitType: "validation", retryable: false });
  });

  it("IAM's LimitExceeded quota is not retried, and holds back no later call", async () => {
    const clock = virtualClock();
    const server = await servers.start([
      { status: 409, headers: { "content-type": "text/xml" }, body: queryXml("LimitExceeded", "Cannot exceed quota for PoliciesPerUser: 10") },
      { status: 200, headers: { "content-type": "text/xml" }, body: "<ListUsersResponse/>" },
    ]);
    const client = createThrottleClient({ baseUrl: server.url, provider: "aws", clock });
    const quota = await client.request({ method: "POST", url: "/", data: "Action=AttachUserPolicy" });
    expect(quota.outcome).not.toBe("success");
    expect(server.calls).toHaveLength(1);
    expect(quota.verdict).toMatchObject({ limitType: "quota", retryable: false });
    const before = clock.nowMs();
    expect((await client.request({ method: "POST", url: "/", data: "Action=ListUsers" })).outcome).toBe("success");
    expect(clock.nowMs() - before).toBeLessThan(1000);
    expect(server.calls).toHaveLength(2);
  });
});
