import { createHmac } from "node:crypto";
import { normaliseHost, type ScopeParts } from "../engine";

/**
 * A short keyed hash of credential material: enough to tell credentials apart, and, keyed with a
 * salt kept in the store (not in logs), useless to a log reader who wants to test a password
 * guess against it (an unkeyed hash of "user:password" can be tested in microseconds).
 */
export function fingerprint(material: readonly string[], salt: string): string {
  const present = material.filter((m) => m.length > 0);
  if (present.length === 0) return "anon";
  return createHmac("sha256", salt).update(`throttle-aware-http\u0000${present.join("\u0000")}`).digest("hex").slice(0, 16);
}

/**
 * The base scope a request belongs to before any response: provider + host (with its port: two
 * services on one host are two APIs) + credential fingerprint. A trailing dot names the same host.
 */
export function scopeFor(input: { provider: string; host: string; fingerprint: string }): string {
  const portAt = input.host.lastIndexOf(":");
  const hasPort = portAt > input.host.lastIndexOf("]") && /^\d+$/.test(input.host.slice(portAt + 1));
  const name = hasPort ? input.host.slice(0, portAt) : input.host;
  return `${input.provider}|${normaliseHost(name)}${hasPort ? input.host.slice(portAt) : ""}|${input.fingerprint}`;
}

/** A scope part's value as it is written into a scope key: short and free of the separators. */
function partValue(value: string): string {
  return String(value).replace(/[|\s,=]/g, "_").slice(0, 80);
}

/** The scope of a request whose part of the API is known before sending (GitHub's resource, Slack's method). */
export function scopeWithParts(base: string, parts: ScopeParts): string {
  const keys = Object.keys(parts).sort();
  if (keys.length === 0) return base;
  return `${base}|${keys.map((k) => `${k}=${partValue(parts[k]!)}`).join(",")}`;
}

/** Whether an answer's limit spans the whole API rather than the request's own part (it names none of the part's keys). */
export function spansWholeApi(requestParts: ScopeParts, verdictParts: ScopeParts): boolean {
  const keys = Object.keys(requestParts);
  return keys.length > 0 && keys.every((k) => verdictParts[k] === undefined);
}

/**
 * Whether a scope key under `base` belongs to another part of the API than a request whose parts
 * are known before it is sent: it names one of the same parts with a different value (GitHub's
 * search budget, for a core call). Keys that name other parts, or none, still apply.
 */
export function belongsElsewhere(key: string, base: string, requestParts: ScopeParts): boolean {
  if (key === base || !key.startsWith(`${base}|`)) return false;
  for (const pair of key.slice(base.length + 1).split(",")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    const mine = requestParts[pair.slice(0, eq)];
    if (mine !== undefined && partValue(mine) !== pair.slice(eq + 1)) return true;
  }
  return false;
}
