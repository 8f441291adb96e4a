/**
 * Amazon Web Services: any service endpoint under .amazonaws.com (and .amazonaws.com.cn, the China
 * Regions). Not Amazon's Selling Partner API (sellingpartnerapi-*.amazon.com), which amazon-sp.ts reads.
 *
 * AWS shows no budget and no reset: a throttle is an error code, in one of four protocol shapes
 * (Smithy's AWS protocols, RESTJSON_DOC, AWSJSON_DOC, QUERY_DOC, EC2QUERY_DOC):
 * - restJson1 (Lambda, API Gateway, Bedrock...): the x-amzn-ErrorType header, else the body's "code"
 *   or "__type", "ThrottlingException:http://internal.amazon.com/..." or
 *   "aws.protocoltests#ThrottlingException" read as the name between a "#" and a ":";
 * - awsJson1_0/1_1 (DynamoDB, Kinesis, ECS...): the body's "__type", namespace first;
 * - awsQuery (IAM, CloudFormation, SNS...) and restXml (S3, Route 53): an XML <Error><Code>;
 * - ec2Query: <Response><Errors><Error><Code>.
 * The SDKs read them in that order (aws-sdk-js-v3 loadRestJsonErrorCode: header, then code, then
 * __type), and so does this dialect.
 * https://smithy.io/2.0/aws/protocols/aws-restjson1-protocol.html
 * https://smithy.io/2.0/aws/protocols/aws-json-1_0-protocol.html
 * https://smithy.io/2.0/aws/protocols/aws-query-protocol.html
 * https://smithy.io/2.0/aws/protocols/aws-ec2-query-protocol.html
 *
 * Which codes are throttles is the SDKs' retry mode "standard" (SDK_RETRY_DOC, BOTO3_RETRY_DOC): the
 * list every SDK shares (SMITHY_CODES, THROTTLING_ERROR_CODES; botocore's standard.py the same),
 * whatever the status: EC2's RequestLimitExceeded comes as a 503 (BOTOCORE_RETRY: "ec2"), S3's
 * SlowDown as a 503, SQS's RequestThrottled as a 403, the rest mostly as 400. A 429 is a throttle
 * whatever its code (isThrottlingError: httpStatusCode === 429). None of them sends a wait:
 * "Retry the request after a brief wait using exponential backoff" (LAMBDA_TOO_MANY), so the verdict
 * gives none and the client backs off, unless x-amz-retry-after (ms, read by the SDKs' retry code
 * only, SMITHY_RETRY_AFTER) or a Retry-After (API Gateway's and Lambda's retryAfterSeconds) is sent.
 * The limits are token buckets per account and Region, refilled every second (EC2_THROTTLING_DOC;
 * ECS: "sustained and burst", ECS_THROTTLING_DOC), so every throttle is a burst; the host (service and
 * Region) and the credential (the account) are already the client's base scope.
 * https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html
 * https://docs.aws.amazon.com/boto3/latest/guide/retries.html
 * https://github.com/smithy-lang/smithy-typescript/blob/main/packages/service-error-classification/src/constants.ts
 * https://github.com/boto/botocore/blob/develop/botocore/data/_retry.json
 *
 * Read otherwise than a plain throttle:
 * - LimitExceededException is on the SDKs' list, but services use it for two things: a limit that
 *   passes (a rate: Kinesis "Rate exceeded for stream", API Gateway "The request exceeded the rate
 *   limit", DynamoDB "Too many operations for a given subscriber"; or operations at once: DynamoDB's
 *   500 simultaneous table operations) and a service quota that no wait restores (IAM: "attempted
 *   to create resources beyond the current ... account limits", ECR: "would have exceeded a service
 *   limit for your account"). Its message tells them apart (a rate first, then "simultaneous" or
 *   "concurrent", then a quota's words); one that names none is read as the SDKs read it, a throttle.
 * - LimitExceeded (IAM's code, not on the list) and ServiceQuotaExceededException are quotas: final.
 * - Lambda's TooManyRequestsException names its Reason: the Concurrent* ones are the account's or
 *   function's concurrency, not a rate (LAMBDA_TOO_MANY).
 * - PriorRequestNotComplete (Route 53: "it will reject subsequent requests for the same hosted zone")
 *   and TransactionInProgressException (DynamoDB: "The transaction with the given request token is
 *   already in progress"; retries "trigger completion of the ongoing TransactWriteItems request")
 *   are on the list too, but they are one resource's work in progress, not a rate: contention,
 *   retried with backoff, the request refused (not done) or made idempotent by its token.
 * - API Gateway's usage-plan quota (per day, week or month) answers 429 "Limit Exceeded", its
 *   throttle 429 "Too Many Requests" (APIGW_RESPONSES_DOC, APIGW_429_DOC): the first is a quota.
 * - RequestTimeout and RequestTimeoutException are the SDKs' transient codes (S3's "Your socket
 *   connection to the server was not read from or written to within the timeout period"): retried,
 *   no limit. 500, 502, 503 and 504 are transient as the generic dialect reads them.
 * - Access errors are final whatever their status (DynamoDB's AccessDeniedException is a 400), and
 *   so is anything else (ValidationException...).
 */
import type { SignalContext } from "../context";
import { asArray, asString, field } from "../context";
import type { Dialect } from "../dialect";
import { longestWait, readExplicitWaits, type Wait } from "../signals";
import type { Interpretation, LimitType } from "../types";
import { describeWait, retryableBy, secondsWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RESTJSON_DOC = "https://smithy.io/2.0/aws/protocols/aws-restjson1-protocol.html";
const AWSJSON_DOC = "https://smithy.io/2.0/aws/protocols/aws-json-1_0-protocol.html";
const QUERY_DOC = "https://smithy.io/2.0/aws/protocols/aws-query-protocol.html";
const EC2QUERY_DOC = "https://smithy.io/2.0/aws/protocols/aws-ec2-query-protocol.html";
const SDK_RETRY_DOC = "https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html";
const BOTO3_RETRY_DOC = "https://docs.aws.amazon.com/boto3/latest/guide/retries.html";
const SMITHY_CODES = "https://github.com/smithy-lang/smithy-typescript/blob/main/packages/service-error-classification/src/constants.ts";
const BOTOCORE_RETRY = "https://github.com/boto/botocore/blob/develop/botocore/data/_retry.json";
const EC2_THROTTLING_DOC = "https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html";
const ECS_THROTTLING_DOC = "https://docs.aws.amazon.com/AmazonECS/latest/APIReference/request-throttling.html";
const EC2_ERRORS_DOC = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html";
const S3_ERRORS_DOC = "https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html";
const S3_PERFORMANCE_DOC = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/optimizing-performance.html";
const DYNAMODB_ERRORS_DOC = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html";
const DYNAMODB_REASON_DOC = "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html";
const DYNAMODB_TRANSACTION_DOC = "https://docs.aws.amazon.com/botocore/latest/reference/services/dynamodb/client/exceptions/TransactionInProgressException.html";
const LAMBDA_TOO_MANY = "https://docs.aws.amazon.com/botocore/latest/reference/services/lambda/client/exceptions/TooManyRequestsException.html";
const ROUTE53_PRIOR_DOC = "https://docs.aws.amazon.com/botocore/latest/reference/services/route53/client/exceptions/PriorRequestNotComplete.html";
const IAM_LIMIT_DOC = "https://docs.aws.amazon.com/botocore/latest/reference/services/iam/client/exceptions/LimitExceededException.html";
const APIGW_RESPONSES_DOC = "https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html";
const APIGW_429_DOC = "https://aws.amazon.com/premiumsupport/knowledge-center/api-gateway-429-limit/";
/** x-amz-retry-after, ms: known from the SDKs' retry code only (signals.ts readExplicitWaits). */
const SMITHY_RETRY_AFTER = "https://github.com/smithy-lang/smithy-typescript/blob/main/packages/middleware-retry/src/parseRetryAfterHeader.ts";

/**
 * The SDKs' throttling codes (SMITHY_CODES THROTTLING_ERROR_CODES, BOTO3_RETRY_DOC "standard"),
 * less the four read apart below: LimitExceededException, TooManyRequestsException (Lambda's Reason),
 * PriorRequestNotComplete and TransactionInProgressException.
 */
const THROTTLE_CODES: ReadonlySet<string> = new Set([
  "BandwidthLimitExceeded",
  "EC2ThrottledException",
  "ProvisionedThroughputExceededException",
  "RequestLimitExceeded",
  "RequestThrottled",
  "RequestThrottledException",
  "SlowDown",
  "ThrottledException",
  "Throttling",
  "ThrottlingException",
]);
/** One resource's work still in progress (ROUTE53_PRIOR_DOC, DYNAMODB_TRANSACTION_DOC). */
const CONTENTION_CODES: ReadonlySet<string> = new Set(["PriorRequestNotComplete", "TransactionInProgressException"]);
/** The SDKs' transient codes (SMITHY_CODES TRANSIENT_ERROR_CODES): retried, no limit. */
const TRANSIENT_CODES: ReadonlySet<string> = new Set(["RequestTimeout", "RequestTimeoutException"]);
/** Service quotas: IAM's LimitExceeded (409, IAM_LIMIT_DOC) and the common ServiceQuotaExceededException. */
const QUOTA_CODES: ReadonlySet<string> = new Set(["LimitExceeded", "ServiceQuotaExceededException"]);
/**
 * Access errors, whatever their status (DynamoDB's come as 400): AccessDeniedException and
 * UnrecognizedClientException (DYNAMODB_ERRORS_DOC), S3's AccessDenied, EC2's AuthFailure and
 * UnauthorizedOperation (EC2_ERRORS_DOC), STS's ExpiredToken, InvalidClientTokenId. Final.
 */
const ACCESS_CODES: ReadonlySet<string> = new Set([
  "AccessDenied",
  "AccessDeniedException",
  "AuthFailure",
  "ExpiredToken",
  "ExpiredTokenException",
  "InvalidClientTokenId",
  "UnauthorizedOperation",
  "UnrecognizedClientException",
]);
/** Lambda's TooManyRequestsException Reasons that name concurrency, not a rate (LAMBDA_TOO_MANY). */
const CONCURRENCY_REASONS: ReadonlySet<string> = new Set([
  "ConcurrentInvocationLimitExceeded",
  "ReservedFunctionConcurrentInvocationLimitExceeded",
  "ConcurrentSnapshotCreateLimitExceeded",
]);

/** A LimitExceededException message that names a rate (checked first), concurrency, or a quota. */
const RATE_WORDING = /\brate\b|throughput|too many (?:requests|operations)|per second|throttl/i;
const CONCURRENCY_WORDING = /simultaneous|concurren/i;
const QUOTA_WORDING = /quota|service limit|account limit|limit for (?:the|your) account|maximum number|resources beyond|already been reached/i;

/** XML error documents are short: the code and message come first, so no more is scanned. */
const XML_SCAN_CHARS = 4096;
const XML_CODE = /<Code>([^<]{1,128})<\/Code>/;
const XML_MESSAGE = /<Message>([^<]{0,512})<\/Message>/;
const MESSAGE_CHARS = 512;
const BODY_WAIT = "body:retryAfterSeconds";

interface AwsError {
  code: string | null;
  message: string;
}

/** The error name as the SDKs sanitise it: before any ":" (a URL) and after any "#" (a namespace), RESTJSON_DOC. */
export function awsErrorName(raw: string): string {
  const colon = raw.indexOf(":");
  const withoutUrl = colon < 0 ? raw : raw.slice(0, colon);
  return withoutUrl.slice(withoutUrl.lastIndexOf("#") + 1).trim();
}

function xmlText(ctx: SignalContext): string {
  if (typeof ctx.body !== "string") return "";
  return ctx.bodyText.length > XML_SCAN_CHARS ? ctx.bodyText.slice(0, XML_SCAN_CHARS) : ctx.bodyText;
}

/** The code and message, in the SDKs' order: x-amzn-ErrorType, the JSON body's code/Code/__type, the XML <Code>. */
function readError(ctx: SignalContext): AwsError {
  const xml = xmlText(ctx);
  const jsonMessage = asString(field(ctx.body, "message")) ?? asString(field(ctx.body, "Message"));
  const message = (jsonMessage ?? XML_MESSAGE.exec(xml)?.[1] ?? "").slice(0, MESSAGE_CHARS);
  const header = ctx.header("x-amzn-errortype");
  if (header !== undefined && header.trim() !== "") return { code: awsErrorName(header), message };
  for (const key of ["code", "Code", "__type"]) {
    const value = asString(field(ctx.body, key));
    if (value !== undefined && value.trim() !== "") return { code: awsErrorName(value), message };
  }
  const xmlCode = XML_CODE.exec(xml)?.[1];
  return { code: xmlCode === undefined ? null : xmlCode.trim(), message };
}

/** Retry-After, retry-after-ms or x-amz-retry-after (SMITHY_RETRY_AFTER), and a body's retryAfterSeconds where it is a number. */
function readWait(ctx: SignalContext): Wait | null {
  return longestWait(readExplicitWaits(ctx), secondsWait(ctx, field(ctx.body, "retryAfterSeconds"), BODY_WAIT));
}

/** DynamoDB's ThrottlingReasons (DYNAMODB_REASON_DOC): "TableReadProvisionedThroughputExceeded on arn:..." for the reason. */
function dynamoReasons(ctx: SignalContext): string {
  const reasons = asArray(field(ctx.body, "ThrottlingReasons"))
    .slice(0, 3)
    .map((item) => {
      const reason = asString(field(item, "reason"));
      const resource = asString(field(item, "resource"));
      return reason === undefined ? null : resource === undefined ? reason : `${reason} on ${resource}`;
    })
    .filter((text): text is string => text !== null);
  return reasons.length === 0 ? "" : ` (${reasons.join("; ")})`;
}

/** What each throttle code says, for the reason (EC2_THROTTLING_DOC, S3_PERFORMANCE_DOC, DYNAMODB_ERRORS_DOC). */
function throttleWhat(ctx: SignalContext, code: string): string {
  switch (code) {
    case "SlowDown":
      return "S3 asks to reduce the request rate (at least 3,500 writes or 5,500 reads per second per partitioned prefix, scaled up gradually)";
    case "RequestLimitExceeded":
      return "the account's request rate in this Region is exceeded (EC2: the API action's token bucket; DynamoDB: the account's throughput)";
    case "ProvisionedThroughputExceededException":
      return `the table's or index's throughput is exceeded${dynamoReasons(ctx)}`;
    case "BandwidthLimitExceeded":
      return "the bandwidth limit is exceeded";
    default:
      return "the account's request rate for this service and Region is exceeded";
  }
}

function throttle(ctx: SignalContext, code: string, wait: Wait | null, limitType: LimitType = "burst", what = throttleWhat(ctx, code)): Interpretation {
  return throttledBy(limitType, wait, {
    scope: {},
    reason: `AWS ${ctx.status} ${code}: ${what}; ${describeWait(wait)}.`,
  });
}

function quota(ctx: SignalContext, code: string, message: string): Interpretation {
  return throttledBy("quota", null, {
    retryable: false,
    scope: {},
    reason: `AWS ${ctx.status} ${code}: a service quota, not a rate${message ? ` ("${message}")` : ""}; no wait restores it (raise the quota or free resources), so it is not retried.`,
  });
}

/** LimitExceededException: a rate, concurrency or a quota, by what its message names; else a throttle, as the SDKs read it. */
function limitExceeded(ctx: SignalContext, code: string, message: string, wait: Wait | null): Interpretation {
  if (RATE_WORDING.test(message)) return throttle(ctx, code, wait, "burst", `a rate limit ("${message}")`);
  if (CONCURRENCY_WORDING.test(message)) return throttle(ctx, code, wait, "concurrency", `too many operations at once ("${message}")`);
  if (QUOTA_WORDING.test(message)) return quota(ctx, code, message);
  return throttle(ctx, code, wait, "burst", `a limit the message does not name${message ? ` ("${message}")` : ""}, read as the SDKs read it, a throttle`);
}

/** Lambda's Reason: a Concurrent* one is concurrency, the others rates (LAMBDA_TOO_MANY). */
function tooManyRequests(ctx: SignalContext, code: string, wait: Wait | null): Interpretation {
  const reason = asString(field(ctx.body, "Reason"));
  if (reason !== undefined && CONCURRENCY_REASONS.has(reason)) {
    return throttle(ctx, code, wait, "concurrency", `${reason}: executions in flight are at the concurrency limit, not a rate`);
  }
  return throttle(ctx, code, wait, "burst", reason === undefined ? "the request rate is exceeded" : `${reason}: the request rate is exceeded`);
}

function contention(ctx: SignalContext, code: string, wait: Wait | null): Interpretation {
  const what = code === "PriorRequestNotComplete" ? "Route 53 is still processing a prior request for the same hosted zone and rejected this one" : "the transaction with this request token is still in progress; a retry with the same token completes it";
  return retryableBy("contention", wait, {
    writeNotProcessed: true,
    scope: {},
    reason: `AWS ${ctx.status} ${code}: ${what}; not a rate; retry with backoff; ${describeWait(wait)}.`,
  });
}

/** The reading a code alone decides, or null when the status decides. */
function byCode(ctx: SignalContext, error: AwsError, wait: Wait | null): Interpretation | null {
  const code = error.code;
  if (code === null) return null;
  if (CONTENTION_CODES.has(code)) return contention(ctx, code, wait);
  if (code === "LimitExceededException") return limitExceeded(ctx, code, error.message, wait);
  if (code === "TooManyRequestsException") return tooManyRequests(ctx, code, wait);
  if (THROTTLE_CODES.has(code)) return throttle(ctx, code, wait);
  if (QUOTA_CODES.has(code)) return quota(ctx, code, error.message);
  if (ACCESS_CODES.has(code)) {
    return { throttled: false, retryable: false, limitType: "permission", minWaitMs: null, waitSource: null, reason: `AWS ${ctx.status} ${code}: an access error, not a limit; retrying will not help.` };
  }
  if (TRANSIENT_CODES.has(code)) {
    return retryableBy("server", wait, { scope: {}, reason: `AWS ${ctx.status} ${code}: a transient timeout (the SDKs retry it), not a limit; ${describeWait(wait)}.` });
  }
  return null;
}

function interpret(ctx: SignalContext): Interpretation {
  const wait = readWait(ctx);
  const error = readError(ctx);
  const known = byCode(ctx, error, wait);
  if (known) return known;
  if (ctx.status === 429) {
    // API Gateway: QUOTA_EXCEEDED answers "Limit Exceeded", THROTTLED "Too Many Requests" (APIGW_429_DOC).
    if (error.message.trim() === "Limit Exceeded") return quota(ctx, "(API Gateway usage plan)", "Limit Exceeded");
    return throttle(ctx, error.code ?? "Too Many Requests", wait, "burst", "the request rate is exceeded (a 429 is a throttle whatever its code)");
  }
  return interpretStatus(ctx, { retryAfter: wait, budget: null, reset: null });
}

export const aws: Dialect = {
  id: "aws",
  label: "Amazon Web Services",
  hosts: [".amazonaws.com", ".amazonaws.com.cn"],
  docs: [
    SDK_RETRY_DOC,
    BOTO3_RETRY_DOC,
    SMITHY_CODES,
    BOTOCORE_RETRY,
    SMITHY_RETRY_AFTER,
    RESTJSON_DOC,
    AWSJSON_DOC,
    QUERY_DOC,
    EC2QUERY_DOC,
    EC2_THROTTLING_DOC,
    EC2_ERRORS_DOC,
    ECS_THROTTLING_DOC,
    S3_ERRORS_DOC,
    S3_PERFORMANCE_DOC,
    DYNAMODB_ERRORS_DOC,
    DYNAMODB_REASON_DOC,
    DYNAMODB_TRANSACTION_DOC,
    LAMBDA_TOO_MANY,
    ROUTE53_PRIOR_DOC,
    IAM_LIMIT_DOC,
    APIGW_RESPONSES_DOC,
    APIGW_429_DOC,
  ],
  interpret,
};
