import { describe, expect, it } from "vitest";
import { isGraphqlReadOnly, readGraphqlOperation } from "../../src/engine";

/** GraphQL spec §2.3 (a query is a read-only fetch) and §6.1 GetOperation (which operation runs). */
describe("readGraphqlOperation: the operation type from the reference parser", () => {
  it.each([
    ["a shorthand query", { query: "{ shop { name } }" }],
    ["a named query", { query: "query Shop { shop { name } }" }],
    ["JSON text", JSON.stringify({ query: "query { viewer { login } }" })],
    ["bytes of JSON text", new TextEncoder().encode(JSON.stringify({ query: "{ a }" }))],
    ["a field named mutation", { query: "{ mutation { id } }" }],
    ["the word mutation inside a string argument", { query: '{ search(text: "mutation { delete }") { id } }' }],
    ["the chosen operation of several is a query", { query: "query A { a } mutation B { b }", operationName: "A" }],
    ["a batch of queries", [{ query: "{ a }" }, { query: "query B { b }" }]],
  ])("%s is a read", (_label, body) => {
    expect(readGraphqlOperation(body)).toMatchObject({ readOnly: true, operation: "query" });
  });

  it.each([
    // The regex this replaces stripped `#...` to end of line first, so a # inside a string hid the mutation.
    ["a mutation after a # inside a string", { query: '{ a(x: "#") } mutation M { deleteEverything }' }, /mutation|no operation|operationName|parse/],
    ["a mutation", { query: "mutation { productCreate(input: {}) { product { id } } }" }, /mutation/],
    ["a subscription", { query: "subscription { ticks }" }, /subscription/],
    ["the chosen operation is a mutation", { query: "query A { a } mutation B { b }", operationName: "B" }, /mutation/],
    ["several operations, no name, one of them a mutation", { query: "query A { a } mutation B { b }" }, /mutation/],
    ["an operationName not in the document", { query: "query A { a }", operationName: "Z" }, /not in the document/],
    ["unparseable text", { query: "{ a " }, /does not parse/],
    ["a persisted query (no text)", { extensions: { persistedQuery: { sha256Hash: "abc" } } }, /no query text/],
    ["a body that is not JSON", "query=%7B+a+%7D", /not a GraphQL request/],
    ["a batch with one mutation", [{ query: "{ a }" }, { query: "mutation { b }" }], /mutation/],
    ["only fragments", { query: "fragment F on T { a }" }, /no operation/],
    ["a huge token count", { query: `{ ${"a ".repeat(200_000)}}` }, /does not parse/],
  ])("%s is not a read", (_label, body, reason) => {
    const reading = readGraphqlOperation(body);
    expect(reading.readOnly).toBe(false);
    expect(reading.reason).toMatch(reason);
  });

  it("isGraphqlReadOnly agrees", () => {
    expect(isGraphqlReadOnly({ query: "{ a }" })).toBe(true);
    expect(isGraphqlReadOnly({ query: '{ a(x: "#") } mutation { b }' })).toBe(false);
    expect(isGraphqlReadOnly(null)).toBe(false);
  });
});
