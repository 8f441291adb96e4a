/** No care at all: one call per job, never a retry (the seed article's client 1). */
import { labAxios, sendOnce, type Strategy } from "./common";

export const naive: Strategy = {
  name: "naive",
  description: "axios, one call per job, no retry",
  createRunner(env) {
    const client = labAxios(env);
    return (job, signal) => sendOnce(client, job, signal);
  },
};
