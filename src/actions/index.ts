/** The component's actions; their keys are part of the interface. */
import { checkBackoff } from "./checkBackoff";
import { clearBackoff } from "./clearBackoff";
import { explainResponse } from "./explainResponse";
import { recordBackoff } from "./recordBackoff";
import { sendRequest } from "./sendRequest";

export const actions = { sendRequest, explainResponse, checkBackoff, recordBackoff, clearBackoff };
export { sendRequest, explainResponse, checkBackoff, recordBackoff, clearBackoff };
