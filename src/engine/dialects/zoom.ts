/**
 * Zoom. Limits are per account, shared by all its apps, per category (Light, Medium, Heavy,
 * Resource-intensive), of type QPS (per second) or Daily-limit. A 429 carries X-RateLimit-Category,
 * X-RateLimit-Type, X-RateLimit-Limit, X-RateLimit-Remaining and, for the daily limit, a
 * Retry-After written as an ISO 8601 timestamp (2020-05-31T00:00:00Z; not RFC 9110, read anyway).
 * Some per-user daily limits (e.g. 100 meeting creates/updates per user per day) send no header
 * and say in the body that requests may resume "at GMT 00:00:00".
 * https://developers.zoom.us/docs/api/rate-limits/
 * https://devforum.zoom.us/t/zoom-api-create-meeting-api-rate-limit-sample-error-when-breaching-limit/18928
 */
import type { SignalContext } from "../context";
import { asString, field } from "../context";
import type { Dialect } from "../dialect";
import { isoAfter, type Wait } from "../signals";
import type { Interpretation } from "../types";
import { impliedWait, interpretStatus, readStandardSignals } from "./generic";
import { throttledBy, untilDailyReset } from "./_dialect-kit";


function interpret(ctx: SignalContext): Interpretation {
  const signals = readStandardSignals(ctx, "auto");
  const category = ctx.header("x-ratelimit-category")?.trim();
  const type = ctx.header("x-ratelimit-type")?.trim();
  const scope: Record<string, string> = {};
  if (category) scope.category = category;
  if (type) scope.type = type;
  if (ctx.status !== 429) return interpretStatus(ctx, signals, scope);

  const message = asString(field(ctx.body, "message")) ?? ctx.bodyText;
  const typeKey = type?.toLowerCase();
  // The per-user daily limits: the body is the only signal ("resume ... at GMT 00:00:00").
  const perUserDaily = !typeKey && /GMT 00:00:00/.test(message);
  if (typeKey === "daily-limit" || perUserDaily) {
    let wait: Wait | null = impliedWait(signals);
    if (!wait && perUserDaily) {
      wait = untilDailyReset(ctx, 0, "body:gmt-00:00:00");
    }
    if (perUserDaily) scope.limit = "per-user-daily";
    const budget = signals.budget && signals.budget.resetAt === null && wait ? { ...signals.budget, resetAt: isoAfter(ctx, wait.waitMs) } : signals.budget;
    return throttledBy("quota", wait, {
      retryable: false,
      scope,
      budget,
      reason: `Zoom 429: the ${perUserDaily ? "per-user" : `account's ${category ?? ""}`.replace(/ $/, "")} daily limit is spent; not retried in this run${wait ? `, it resets at ${isoAfter(ctx, wait.waitMs)}` : ""}.`,
    });
  }
  // QPS (or an unnamed type): a per-second limit; retry after Retry-After or back off.
  const wait = impliedWait(signals);
  return throttledBy("burst", wait, {
    scope,
    budget: signals.budget,
    reason: `Zoom 429: the account's ${category ? `${category} ` : ""}per-second (QPS) limit; ${wait ? `retry after ${wait.waitMs} ms` : "back off and retry"}.`,
  });
}

export const zoom: Dialect = {
  id: "zoom",
  label: "Zoom",
  hosts: ["api.zoom.us"],
  docs: [
    "https://developers.zoom.us/docs/api/rate-limits/",
    "https://devforum.zoom.us/t/zoom-api-create-meeting-api-rate-limit-sample-error-when-breaching-limit/18928",
  ],
  interpret,
};
