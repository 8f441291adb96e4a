/**
 * An axios adapter that hands each request to the in-process ThrottledApi instead of a socket,
 * so that a whole run (axios, axios-retry, spectral's createClient, ours) sits on the virtual
 * clock. It behaves as axios' own adapter does: status outside validateStatus rejects with an
 * AxiosError carrying the response, a dropped connection rejects with ECONNRESET, the timeout, the
 * abort signal and a CancelToken are honoured, and the body arrives as text for axios to parse.
 */
import { AxiosError, AxiosHeaders, CanceledError, type AxiosAdapter, type AxiosResponse, type InternalAxiosRequestConfig } from "axios";
import { JOB_HEADER, type ThrottledApi } from "./server";

function headerText(config: InternalAxiosRequestConfig, name: string): string | null {
  const value = AxiosHeaders.from(config.headers).get(name);
  return typeof value === "string" ? value : value === undefined || value === null || value === false ? null : String(value);
}

export function inProcessAdapter(api: ThrottledApi): AxiosAdapter {
  return (config: InternalAxiosRequestConfig): Promise<AxiosResponse> =>
    new Promise<AxiosResponse>((resolve, reject) => {
      const signal = config.signal;
      if (signal?.aborted) {
        reject(new CanceledError(undefined, undefined, config));
        return;
      }
      let done = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = (fn: () => void): void => {
        if (done) return;
        done = true;
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener?.("abort", onAbort);
        fn();
      };
      const onAbort = (): void => finish(() => reject(new CanceledError(undefined, undefined, config)));
      signal?.addEventListener?.("abort", onAbort);
      // A CancelToken as axios's own http adapter honours it (ours cancels an attempt past its
      // timeout that way); its promise settles with the cancel. Before this, an attempt timeout of
      // ours never fired here: the slow answer was waited for whole.
      void config.cancelToken?.promise.then((cancel) => finish(() => reject(cancel instanceof CanceledError ? cancel : new CanceledError(undefined, undefined, config))));
      if (config.timeout && config.timeout > 0) {
        timer = setTimeout(() => finish(() => reject(new AxiosError(`timeout of ${config.timeout}ms exceeded`, AxiosError.ECONNABORTED, config))), config.timeout);
      }
      const url = new URL(config.url ?? "/", config.baseURL ?? "http://lab.invalid");
      api
        .handle({ method: config.method ?? "get", path: url.pathname, jobId: headerText(config, JOB_HEADER) ?? "unknown", idempotencyKey: headerText(config, "idempotency-key") })
        .then((outcome) => {
          if (outcome.kind === "drop") {
            finish(() => reject(Object.assign(new AxiosError("socket hang up", "ECONNRESET", config), { code: "ECONNRESET" })));
            return;
          }
          const { status, headers, body } = outcome.response;
          const response: AxiosResponse = {
            data: typeof body === "string" ? body : JSON.stringify(body),
            status,
            statusText: String(status),
            headers: new AxiosHeaders(headers),
            config,
            request: {},
          };
          const valid = config.validateStatus ? config.validateStatus(status) : status >= 200 && status < 300;
          if (valid) finish(() => resolve(response));
          else
            finish(() =>
              reject(new AxiosError(`Request failed with status code ${status}`, status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST, config, {}, response)),
            );
        })
        .catch((error: unknown) => finish(() => reject(error instanceof Error ? error : new Error(String(error)))));
    });
}
