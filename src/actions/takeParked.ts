import { action } from "@prismatic-io/spectral";
import { parseTakeParked, takeParkedInputs } from "../inputs";
import { takeParkedExample, takeParkedSchema } from "./batchSchemas";
import { loggerOf, openStore } from "./shared";

/**
 * Take Parked Items: the items of a park queue whose not_before has passed, removed from the queue
 * in the cross-flow state the step returns. Prismatic writes that state when the execution ends,
 * and (per Prismatic's guidance) not when it fails: an execution that fails after taking items
 * leaves them in the queue, so they are taken again, never lost.
 */
export const takeParked = action({
  display: {
    label: "Take Parked Items",
    description: "Take the requests a Send Batch step parked, once their not_before has passed, to send them again.",
    directions:
      "Use the same Park Queue name as the Send Batch step. Returns the parked requests whose not_before has passed and removes them from the queue; the others stay for a later execution. A flow: trigger, Take Parked Items, merge its items with new ones (a code step), Send Batch with the same Park Queue. Let only one execution at a time take from a queue (the trigger's Sequential or Throttled flow control): two executions running at once would both take the same items, as cross-flow state is written when an execution ends.",
  },
  inputs: takeParkedInputs,
  // Changes cross-flow state (removes what it takes): never run it just to fill the designer.
  performSafety: "notAllowed",
  examplePayload: { data: takeParkedExample },
  outputSchema: { type: "actionOutput", schema: takeParkedSchema },
  perform: async (context, params): Promise<{ data: { items: Array<Record<string, unknown>>; remaining: number; nextNotBefore: string | null }; crossFlowState?: Record<string, unknown> }> => {
    const { parkQueue, maxItems } = parseTakeParked(params);
    const store = openStore(context, params);
    try {
      const taken = await store.takeParked(parkQueue, Date.now(), maxItems);
      loggerOf(context).info(`Take Parked Items: ${taken.items.length} item(s) taken from "${parkQueue}", ${taken.remaining} still waiting.`);
      const data = {
        items: taken.items.map((parked) => parked.item),
        remaining: taken.remaining,
        nextNotBefore: taken.nextNotBeforeMs === null ? null : new Date(taken.nextNotBeforeMs).toISOString(),
      };
      return { data, crossFlowState: await store.toCrossFlowState() };
    } finally {
      await store.close();
    }
  },
});
