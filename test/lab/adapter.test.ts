/**
 * The lab's in-process adapter cancels as axios's own http adapter does: by the abort signal, by
 * the timeout, and by a CancelToken (ours cancels an attempt past its timeout with one).
 */
import axios, { isCancel } from "axios";
import { describe, expect, it } from "vitest";
import { inProcessAdapter } from "../../src/lab/adapter";
import type { ThrottledApi } from "../../src/lab/server";

/** An API whose answer never comes: only a cancel can end a request. */
const silentApi = { handle: () => new Promise<never>(() => {}) } as unknown as ThrottledApi;

describe("the in-process adapter", () => {
  it("rejects a request whose CancelToken is cancelled, with axios's cancel (not after the answer)", async () => {
    const http = axios.create({ adapter: inProcessAdapter(silentApi), baseURL: "http://lab.invalid" });
    const source = axios.CancelToken.source();
    const pending = http.get("/items/1", { cancelToken: source.token });
    source.cancel("attempt timeout");
    const error: unknown = await pending.catch((e: unknown) => e);
    expect(isCancel(error)).toBe(true);
    expect((error as Error).message).toBe("attempt timeout");
  });

  it("rejects on the abort signal and on the timeout, as before", async () => {
    const http = axios.create({ adapter: inProcessAdapter(silentApi), baseURL: "http://lab.invalid" });
    const controller = new AbortController();
    const aborted = http.get("/items/1", { signal: controller.signal });
    controller.abort();
    expect(isCancel(await aborted.catch((e: unknown) => e))).toBe(true);
    const timedOut: unknown = await http.get("/items/2", { timeout: 5 }).catch((e: unknown) => e);
    expect(axios.isAxiosError(timedOut) && timedOut.code).toBe("ECONNABORTED");
  });
});
