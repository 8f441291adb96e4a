/**
 * createThrottleClient: one spectral createClient (axios + axios-retry) per client, with every
 * retry choice delegated to the engine and every start to the scope's governor. A request goes:
 *
 *   prepareRequest (check and shape)  ->  axios request, attempt by attempt (RequestRun:
 *   beforeAttempt claims a slot, afterFailure / afterSuccess tell the governor)  ->  a result
 *   (successResult / failureResult).
 */
import { createClient } from "@prismatic-io/spectral/dist/clients/http";
import { AxiosError, type AxiosInstance } from "axios";
import { requestScopeFor } from "../engine";
import { createContext, type ClientContext } from "./options";
import { baseScope, parseUrlBase, prepareRequest, resolveUrl } from "./prepare";
import { failureResult, successResult } from "./result";
import { RequestRun } from "./run";
import { scopeWithParts } from "./scope";
import type { ThrottleClient, ThrottleClientOptions, ThrottleRequest, ThrottleResult } from "./types";

/** The axios instance, built once per client: spectral's createClient, our interceptor in front of every attempt. */
function createHttp(ctx: ClientContext): AxiosInstance {
  const http = createClient({
    responseType: ctx.options.responseType ?? "json",
    // axios-retry asks each request's own RequestRun (carried in its config) whether to repeat an
    // attempt; set once here, so a request's config carries no retry options to merge.
    retryConfig: {
      // plan() enforces maxAttempts; axios-retry must never stop first.
      retries: ctx.policy.maxAttempts,
      shouldResetTimeout: true,
      retryCondition: (error) => (error.config?.throttleRun ? error.config.throttleRun.afterFailure(error) : false),
      // Every wait is taken in beforeAttempt (our own retry wait, then the slot), on the client's clock.
      retryDelay: () => 0,
    },
  });
  // Limits every request shares, set once rather than merged into each request's config.
  http.defaults.maxContentLength = ctx.policy.maxResponseBytes;
  http.defaults.maxRedirects = 5;
  const adapter = ctx.options.adapter;
  if (adapter) {
    // axios leaves validateStatus to the adapter; an in-process adapter may not apply it, and
    // axios-retry relies on it to send every response through its error path.
    http.defaults.adapter = async (config) => {
      const response = await adapter(config);
      if (!config.validateStatus || config.validateStatus(response.status)) return response;
      const code = response.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST;
      throw new AxiosError(`Request failed with status code ${response.status}`, code, config, response.request, response);
    };
  }
  http.interceptors.request.use((config) => (config.throttleRun ? config.throttleRun.beforeAttempt(config) : config));
  return http;
}

export function createThrottleClient(options: ThrottleClientOptions = {}): ThrottleClient {
  const ctx = createContext(options);
  if (options.baseUrl) {
    // Checked as a request's base first: a bad base gets the same one line as before.
    resolveUrl(options.baseUrl, "/");
    ctx.urlBase = parseUrlBase(options.baseUrl);
  }
  const http = createHttp(ctx);

  async function request(req: ThrottleRequest): Promise<ThrottleResult> {
    // prepareRequest and afterSuccess answer without a promise when they need not wait (the base
    // scope known, a store in this process): each await of a plain value would still cost a turn
    // of the microtask queue.
    const preparing = prepareRequest(ctx, req);
    const prepared = preparing instanceof Promise ? await preparing : preparing;
    const run = new RequestRun(ctx, prepared, options.signal, req.signal);
    try {
      const response = await http.request(run.axiosConfig());
      const finished = run.afterSuccess(response);
      if (finished instanceof Promise) await finished;
      return successResult(run, response);
    } catch (error) {
      return failureResult(run, error);
    } finally {
      run.dispose();
    }
  }

  return {
    request,
    store: ctx.store,
    async baseScopeOf(url) {
      const resolved = resolveUrl(options.baseUrl, url);
      return baseScope(ctx, resolved);
    },
    async scopeOf(url, method = "GET") {
      const resolved = resolveUrl(options.baseUrl, url);
      const parts = requestScopeFor({ provider: options.provider, request: { method, url: resolved.toString() } });
      return scopeWithParts(await baseScope(ctx, resolved), parts);
    },
    requestPartsOf: (url, method = "GET") => requestScopeFor({ provider: options.provider, request: { method, url: resolveUrl(options.baseUrl, url).toString() } }),
  };
}
