import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clampEpochMs, epochOfIso, isoAt, MAX_EPOCH_MS } from "../../src/engine/time";

describe("isoAt and epochOfIso", () => {
  it("read back what Date.parse reads from the text isoAt wrote, for any number (the memo changes no result)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer({ min: -MAX_EPOCH_MS, max: MAX_EPOCH_MS })), (epochMs) => {
        const text = isoAt(epochMs);
        expect(Object.is(epochOfIso(text), Date.parse(text))).toBe(true);
        expect(text).toBe(new Date(clampEpochMs(epochMs)).toISOString());
      }),
      { numRuns: 2000 },
    );
  });

  it("parse any other text as Date.parse does, also right after isoAt wrote something else", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4e12 }), fc.oneof(fc.string(), fc.date({ noInvalidDate: true }).map((d) => d.toISOString())), (written, other) => {
        isoAt(written);
        expect(Object.is(epochOfIso(other), Date.parse(other))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
