/** The pure engine: interpretation (classify) and timing (plan). No I/O, no globals. */
export { classify, pickDialect, requestScopeFor } from "./classify";
export { plan, DEFAULT_POLICY } from "./plan";
export { backoffMs, exponentialCeilingMs } from "./backoff";
export { budgetNotBefore } from "./budget";
export { parseHttpDate } from "./http-date";
export { parseGoDuration } from "./signals";
export { dialects, dialectById, dialectForHost } from "./dialects";
export type { Dialect, RequestShape } from "./dialect";
export type * from "./types";
export { writeRetrySafety, applyWriteSafety } from "./write-safety";
export type { WriteSafety, WriteSafetyBasis, WriteSafetyOptions, WriteSafetyRequest } from "./write-safety";
export { readGraphqlOperation, isGraphqlReadOnly } from "./graphql-operation";
export type { GraphqlReading, GraphqlOperationType } from "./graphql-operation";
export { policyProblem } from "./plan";
export { normaliseHost } from "./context";
export { DEFAULT_MAX_SERVER_WAIT_MS } from "./time";
export * from "./governor";
