import { createHash } from "node:crypto";
import type { ScopeParts } from "../engine";

/** A short, stable hash of credential material: enough to tell credentials apart, never reversible to the secret. */
export function fingerprint(material: readonly string[]): string {
  const present = material.filter((m) => m.length > 0);
  if (present.length === 0) return "anon";
  return createHash("sha256").update(`throttle-aware-http\u0000${present.join("\u0000")}`).digest("hex").slice(0, 16);
}

/** The base scope a request belongs to before any response: provider + host + credential fingerprint. */
export function scopeFor(input: { provider: string; host: string; fingerprint: string }): string {
  return `${input.provider}|${input.host.toLowerCase()}|${input.fingerprint}`;
}

/** A scope part's value as it is written into a ledger key: short and free of the separators. */
function partValue(value: string): string {
  return String(value).replace(/[|\s,=]/g, "_").slice(0, 80);
}

/** The full scope once a response named the limit's own parts (GitHub resource, Shopify store...). */
export function scopeWithParts(base: string, parts: ScopeParts): string {
  const keys = Object.keys(parts).sort();
  if (keys.length === 0) return base;
  return `${base}|${keys.map((k) => `${k}=${partValue(parts[k]!)}`).join(",")}`;
}

/**
 * Whether a ledger key under `base` belongs to another part of the API than a request whose
 * parts are known before it is sent: it names one of the same parts with a different value
 * (GitHub's search budget, for a core call). Keys that name other parts, or none, still apply.
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
