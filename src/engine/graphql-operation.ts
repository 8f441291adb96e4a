/**
 * Which GraphQL operation a request body would run, read with the reference parser (graphql-js)
 * rather than a pattern: a `#` inside a string, a field named "mutation", a fragment or a second
 * operation cannot fool it. A query is a read ("query – a read-only fetch", GraphQL spec §2.3
 * Operations, https://spec.graphql.org/October2021/#sec-Language.Operations), so repeating one is
 * safe even when it travels as a POST (GraphQL over HTTP sends queries by POST too).
 * Anything that cannot be read with certainty is not a read.
 */
import type { DocumentNode, OperationDefinitionNode } from "graphql/language/ast";
import { parse } from "graphql/language/parser";

export type GraphqlOperationType = "query" | "mutation" | "subscription";

export interface GraphqlReading {
  /** True only when every operation the request would run is a query. */
  readOnly: boolean;
  /** The operation type that would run (the first of a batch that is not a query), or null. */
  operation: GraphqlOperationType | null;
  reason: string;
}

/** Queries of a megabyte are already absurd; larger text is refused unread, as are huge token counts. */
const MAX_QUERY_LENGTH = 1_000_000;
const MAX_TOKENS = 100_000;
const MAX_BATCH = 100;

const notRead = (reason: string, operation: GraphqlOperationType | null = null): GraphqlReading => ({ readOnly: false, operation, reason });

function asBody(body: unknown): unknown {
  if (body instanceof Uint8Array) return asBody(new TextDecoder().decode(body));
  if (typeof body !== "string") return body;
  const text = body.trim();
  if (!text.startsWith("{") && !text.startsWith("[")) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function parseDocument(query: string): DocumentNode | string {
  if (query.length > MAX_QUERY_LENGTH) return `the query is longer than ${MAX_QUERY_LENGTH.toLocaleString("en-US")} characters`;
  try {
    return parse(query, { noLocation: true, maxLexicalTokens: MAX_TOKENS });
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0]! : String(error);
    return `the query does not parse (${message.slice(0, 120)})`;
  }
}

/** The operation a server would execute (GraphQL spec §6.1 GetOperation), or why none can be chosen. */
function chooseOperation(document: DocumentNode, operationName: unknown): OperationDefinitionNode[] | string {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === "OperationDefinition");
  if (operations.length === 0) return "the document holds no operation";
  if (typeof operationName === "string" && operationName !== "") {
    const named = operations.find((op) => op.name?.value === operationName);
    return named ? [named] : `operationName "${operationName.slice(0, 80)}" is not in the document`;
  }
  // Several operations and no name: the server refuses it, but a read is claimed only if all are reads.
  return operations;
}

function readOne(request: unknown): GraphqlReading {
  if (request === null || typeof request !== "object" || Array.isArray(request)) return notRead("the body is not a GraphQL request object");
  const { query, operationName } = request as { query?: unknown; operationName?: unknown };
  if (typeof query !== "string") return notRead("the body has no query text (a persisted query cannot be read)");
  const document = parseDocument(query);
  if (typeof document === "string") return notRead(document);
  const chosen = chooseOperation(document, operationName);
  if (typeof chosen === "string") return notRead(chosen);
  const write = chosen.find((op) => op.operation !== "query");
  if (write) return notRead(`the operation is a ${write.operation}`, write.operation as GraphqlOperationType);
  return { readOnly: true, operation: "query", reason: "the operation is a GraphQL query, a read" };
}

/** Reads a GraphQL request body: an object or JSON text with `query` and optional `operationName`, or a batch of them. */
export function readGraphqlOperation(body: unknown): GraphqlReading {
  const request = asBody(body);
  if (!Array.isArray(request)) return readOne(request);
  if (request.length === 0 || request.length > MAX_BATCH) return notRead(`a batch of ${request.length} operations is not read`);
  for (const item of request) {
    const reading = readOne(item);
    if (!reading.readOnly) return reading;
  }
  return { readOnly: true, operation: "query", reason: `all ${request.length} operations of the batch are GraphQL queries, reads` };
}

/** True when the body would run only GraphQL queries. Unparseable or unknown means false. */
export function isGraphqlReadOnly(body: unknown): boolean {
  return readGraphqlOperation(body).readOnly;
}
