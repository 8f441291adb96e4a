/**
 * The GraphQL operation reader on generated documents whose operation types are known (queries,
 * mutations, subscriptions, named or not, with strings holding "#" and "mutation", comments and
 * fragments) and on garbage. Properties: it never throws; a generated document is read as a read
 * exactly when the operation the server would run is a query (all of them, when no name picks one).
 */
import { readGraphqlOperation } from "../../../engine";
import { Gen } from "../random";
import { brief, Tally } from "../tally";
import type { FuzzResult, FuzzTarget } from "../types";

const TYPES = ["query", "mutation", "subscription"] as const;

function selection(gen: Gen): string {
  const field = gen.pick(["a", "mutation", "query", "subscription", "shop", "node"]);
  const argument = gen.pick(["", '(x: "#")', '(x: "mutation { deleteAll }")', '(x: """ # block """)', "(n: 3)"]);
  const subselection = gen.pick(["", " { id }", " { name mutation }"]);
  const comment = gen.chance(0.3) ? "# mutation { b }\n" : "";
  return `{ ${comment}${field}${argument}${subselection} }`;
}

interface Generated {
  body: unknown;
  expectedReadOnly: boolean;
}

function document(gen: Gen): Generated {
  const count = gen.int(1, 3);
  const operations = Array.from({ length: count }, (_, i) => ({ type: gen.pick(TYPES), name: gen.chance(0.7) || count > 1 ? `Op${i}` : "" }));
  const shorthand = count === 1 && operations[0]!.type === "query" && gen.chance(0.3);
  const text = shorthand
    ? selection(gen)
    : operations.map((op) => `${op.type}${op.name ? ` ${op.name}` : ""} ${selection(gen)}`).join("\n") + (gen.chance(0.2) ? "\nfragment F on T { a }" : "");
  const chosenName = count > 1 && gen.chance(0.6) ? `Op${gen.int(0, count - 1)}` : undefined;
  const chosen = chosenName === undefined ? operations : operations.filter((op) => op.name === chosenName);
  const query = { query: text, ...(chosenName ? { operationName: chosenName } : {}) };
  return { body: gen.chance(0.3) ? JSON.stringify(query) : query, expectedReadOnly: chosen.every((op) => op.type === "query") };
}

export const graphqlTarget: FuzzTarget = {
  name: "graphql operation",
  run(seed: number, count: number): FuzzResult {
    const gen = new Gen(seed);
    const tally = new Tally(false);
    for (let i = 0; i < count; i++) {
      if (gen.chance(0.8)) {
        const { body, expectedReadOnly } = document(gen);
        tally.attempt(body, () => {
          const reading = readGraphqlOperation(body);
          return reading.readOnly === expectedReadOnly ? [] : [`read ${reading.readOnly} (${reading.reason}), expected ${expectedReadOnly}`];
        });
      } else {
        const body = gen.chance(0.5) ? { query: gen.chance(0.1) ? gen.longRun() : gen.text(40) } : gen.text(40);
        tally.attempt(body, () => {
          const reading = readGraphqlOperation(body);
          return typeof reading.reason === "string" ? [] : [`no reason for ${brief(body)}`];
        });
      }
    }
    return tally.result();
  },
};
