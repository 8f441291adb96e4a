/**
 * The Prismatic component. Its actions are Prismatic glue only; the logic lives in src/client
 * (createThrottleClient) and src/store, which are also exported for code-native integrations
 * and plain Node users.
 */
import { component } from "@prismatic-io/spectral";
import { actions } from "./actions";
import { connections } from "./connections";

export default component({
  key: "throttle-aware-http",
  public: false,
  display: {
    label: "Throttle-Aware HTTP",
    description: "HTTP requests that read each API's rate-limit signals, wait as long as the server asks (never less), share a not_before per rate-limit scope, and hand long waits to Flow retry.",
    iconPath: "icon.png",
    category: "Application Connectors",
  },
  actions,
  connections,
});

export { createThrottleClient, ThrottleDeferredError, WriteOutcomeUnknownError, ThrottleInputError } from "./client";
export type { ThrottleClient, ThrottleClientOptions, ThrottleRequest, ThrottleResult } from "./client";
export { createMemoryStore, createCrossFlowStore, STATE_KEY } from "./store";
export type { GovernorStore, MemoryStore, CrossFlowStore } from "./store";
