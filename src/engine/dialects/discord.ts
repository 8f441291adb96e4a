/**
 * Discord.
 * https://discord.com/developers/docs/topics/rate-limits
 *
 * Per-route buckets (X-RateLimit-Bucket, per top-level resource: channel, guild or webhook), a
 * global limit per bot (X-RateLimit-Global, body global:true) and shared per-resource limits
 * (X-RateLimit-Scope: shared). "Rely on the Retry-After header or retry_after field": Retry-After
 * is whole seconds, body retry_after and X-RateLimit-Reset-After are float seconds. The longest
 * of the waits present is taken so the floor is never shortened; for a shared limit Reset-After
 * describes the route bucket, not the real wait, and is left out.
 */
import type { SignalContext } from "../context";
import { field } from "../context";
import type { Dialect } from "../dialect";
import { readDecimalHeader, readLimitFamily, readRetryAfter } from "../signals";
import type { Interpretation } from "../types";
import { describeWait, longestWait, readBooleanHeader, secondsWait, throttledBy } from "./_dialect-kit";
import { interpretStatus } from "./generic";

const RATE_DOC = "https://discord.com/developers/docs/topics/rate-limits";

/** The top-level resource a bucket is keyed by: /channels/{id}, /guilds/{id}, /webhooks/{id}/{token}. */
function majorResource(path: string): string | undefined {
  const m = /\/(channels|guilds|webhooks)\/(\d+)/.exec(path);
  return m ? `${m[1]}/${m[2]}` : undefined;
}

function interpretDiscord(ctx: SignalContext): Interpretation {
  const retryAfter = readRetryAfter(ctx);
  const limitScope = ctx.header("x-ratelimit-scope")?.trim().toLowerCase();
  const bucket = ctx.header("x-ratelimit-bucket");
  const globalHeader = readBooleanHeader(ctx, "x-ratelimit-global");
  const global = globalHeader === true || field(ctx.body, "global") === true || limitScope === "global";
  // Reset-After is float seconds from now: clock-skew free, so it gives the budget's reset too.
  const family = readLimitFamily(
    ctx,
    { limit: "x-ratelimit-limit", remaining: "x-ratelimit-remaining", reset: "x-ratelimit-reset-after" },
    "delta-seconds",
  );
  const budget = family.budget;

  const scope: Record<string, string> = {};
  if (global) {
    scope.scope = "global";
  } else {
    if (bucket) scope.bucket = bucket;
    const resource = majorResource(ctx.path);
    if (resource) scope.resource = resource;
    if (limitScope) scope.scope = limitScope;
  }

  if (ctx.status === 429) {
    const bodyWait = secondsWait(ctx, field(ctx.body, "retry_after"), "body:retry_after");
    const resetAfter = limitScope === "shared" ? null : readDecimalHeader(ctx, "x-ratelimit-reset-after", 1000);
    const wait = longestWait(bodyWait, resetAfter, retryAfter);
    const kind = global ? "global" : limitScope === "shared" ? "shared per-resource" : "per-route";
    return throttledBy("burst", wait, {
      scope,
      budget,
      reason: `Discord ${kind} rate limit${bucket && !global ? ` (bucket ${bucket})` : ""}; ${describeWait(wait)}.`,
    });
  }
  return interpretStatus(ctx, { retryAfter, budget, reset: family.reset }, scope);
}

export const discord: Dialect = {
  id: "discord",
  label: "Discord",
  hosts: ["discord.com", "discordapp.com", "canary.discord.com", "ptb.discord.com"],
  docs: [RATE_DOC],
  interpret: interpretDiscord,
};
