/**
 * The fixed-window API of fixed-window-server.ts in a process of its own (forked by
 * startFixedWindowServerProcess): when the client and the API share one process, a pause of that
 * process (a loaded CI machine descheduling it) holds requests the client sent on time until the
 * API reads them all at once, in a later window, and the API counts a burst the client never sent.
 */
import { startFixedWindowServer, type Arrival } from "./fixed-window-server";

type ParentSays = { kind: "close" };
export type ChildSays = { kind: "listening"; url: string } | { kind: "closed"; arrivals: Arrival[] };

const [limit, windowMs, latencyMs] = process.argv.slice(2).map(Number);
startFixedWindowServer({ limit: limit!, windowMs: windowMs!, latencyMs: latencyMs || undefined }).then((server) => {
  process.on("message", (message: ParentSays) => {
    if (message.kind !== "close") return;
    void server.close().then(() => {
      process.send?.({ kind: "closed", arrivals: server.arrivals } satisfies ChildSays, () => process.disconnect?.());
    });
  });
  process.send?.({ kind: "listening", url: server.url } satisfies ChildSays);
});
