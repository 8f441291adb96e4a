import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryLedger } from "../../src/ledger";

const T0 = Date.parse("2026-11-30T12:00:00Z");
const scopeArb = fc.constantFrom("github|api.github.com|a", "github|api.github.com|a|resource=search", "slack|slack.com|b");
const writeArb = fc.record({ scope: scopeArb, offsetMs: fc.integer({ min: -60_000, max: 3_600_000 }) });
const write = (offsetMs: number) => ({ notBefore: new Date(T0 + offsetMs).toISOString(), provider: "p", limitType: "burst", reason: "r" });

describe("ledger properties", () => {
  it("keeps, per scope, the latest notBefore ever written, whatever the order of writes", () => {
    fc.assert(
      fc.property(fc.array(writeArb, { maxLength: 40 }), (writes) => {
        const ledger = createMemoryLedger();
        for (const w of writes) ledger.setIfLater(w.scope, write(w.offsetMs), T0);
        for (const scope of new Set(writes.map((w) => w.scope))) {
          const latest = Math.max(...writes.filter((w) => w.scope === scope).map((w) => w.offsetMs));
          expect(ledger.get(scope)?.notBefore).toBe(new Date(T0 + latest).toISOString());
        }
      }),
    );
  });

  it("merges stored states the same way whichever execution's state is loaded first", () => {
    fc.assert(
      fc.property(fc.array(writeArb, { maxLength: 20 }), fc.array(writeArb, { maxLength: 20 }), (a, b) => {
        const stateOf = (writes: typeof a) => {
          const ledger = createMemoryLedger();
          for (const w of writes) ledger.setIfLater(w.scope, write(w.offsetMs), T0);
          return ledger.toState();
        };
        const ab = createMemoryLedger();
        ab.load(stateOf(a));
        ab.load(stateOf(b));
        const ba = createMemoryLedger();
        ba.load(stateOf(b));
        ba.load(stateOf(a));
        const notBefores = (l: ReturnType<typeof createMemoryLedger>) => Object.fromEntries(Object.entries(l.entries()).map(([k, e]) => [k, e.notBefore]));
        expect(notBefores(ab)).toEqual(notBefores(ba));
      }),
    );
  });

  it("never throws on stored garbage and never holds more scopes than its bound", () => {
    fc.assert(
      fc.property(fc.anything(), fc.dictionary(fc.string({ maxLength: 30 }), fc.anything(), { maxKeys: 30 }), (garbage, entries) => {
        const warnings: string[] = [];
        const ledger = createMemoryLedger({ maxEntries: 5, warn: (m) => warnings.push(m) });
        expect(() => ledger.load(garbage)).not.toThrow();
        expect(() => ledger.load({ version: 1, entries })).not.toThrow();
        expect(Object.keys(ledger.entries()).length).toBeLessThanOrEqual(5);
        for (const entry of Object.values(ledger.entries())) expect(Number.isFinite(Date.parse(entry.notBefore))).toBe(true);
      }),
    );
  });
});
