/** The component's actions; their keys are part of the interface. */
import { checkBackoff } from "./checkBackoff";
import { clearBackoff } from "./clearBackoff";
import { explainResponse } from "./explainResponse";
import { recordBackoff } from "./recordBackoff";
import { sendBatch } from "./sendBatch";
import { sendRequest } from "./sendRequest";
import { takeParked } from "./takeParked";

export const actions = { sendRequest, sendBatch, takeParked, explainResponse, checkBackoff, recordBackoff, clearBackoff };
export { sendRequest, sendBatch, takeParked, explainResponse, checkBackoff, recordBackoff, clearBackoff };
