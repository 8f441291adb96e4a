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

/** The full scope once a response named the limit's own parts (GitHub resource, Shopify store...). */
export function scopeWithParts(base: string, parts: ScopeParts): string {
  const keys = Object.keys(parts).sort();
  if (keys.length === 0) return base;
  // Parts are dialect-chosen labels; keep them short and free of the separator.
  return `${base}|${keys.map((k) => `${k}=${String(parts[k]).replace(/[|\s]/g, "_").slice(0, 80)}`).join(",")}`;
}
