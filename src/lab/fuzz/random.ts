/** Seeded generators for the fuzz targets: the same seed gives the same inputs. */
import { seededRandom } from "../clock";

/** Values a server can send that break naive parsers: huge, negative, exponents, empty, padded. */
const NASTY_NUMBERS = [
  "0", "-1", "-5", "1e400", "1e10", "10000000000", "8700000000000", "8700000000000000", "99999999999999999999999", "Infinity", "NaN",
  "0x10", "1_000", " 7 ", "007", "2.0", "1.5", ".5", "5.", "", " ", "+3", "3 ", "1,2", "60", "1796040060",
];

export class Gen {
  readonly random: () => number;

  constructor(seed: number) {
    this.random = seededRandom(seed);
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.random() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  /** Short printable text, sometimes with the characters parsers trip on. */
  text(maxLength = 24): string {
    const alphabet = "abcXYZ019 ,;=\"'/:#-.\t{}[]()<>\\µ";
    let out = "";
    const length = this.int(0, maxLength);
    for (let i = 0; i < length; i++) out += alphabet[this.int(0, alphabet.length - 1)];
    return out;
  }

  /** A long run of one piece: the shape that makes a backtracking regex blow up. */
  longRun(): string {
    const piece = this.pick(["1", "9", " ", "<Error ", "1s", '"a";', "limit '", "api-usage=", ",", "-", "Mon, "]);
    return piece.repeat(this.int(1_000, 60_000));
  }

  /** A number as text: small, epoch-like, huge, or one of the nasty forms. */
  numberText(): string {
    switch (this.int(0, 5)) {
      case 0:
        return String(this.int(0, 120));
      case 1:
        return String(this.int(0, 100_000));
      case 2:
        return String(Math.floor(Date.UTC(2026, 10, 30) / 1000) + this.int(-100_000, 100_000));
      case 3:
        return String(Math.floor(this.random() * 10 ** this.int(0, 30)));
      case 4:
        return (this.random() * 10 ** this.int(-3, 6)).toFixed(this.int(0, 4));
      default:
        return this.pick(NASTY_NUMBERS);
    }
  }

  /** An instant between the years 0 and 10000, epoch ms. */
  instantMs(): number {
    return this.chance(0.7) ? Date.UTC(2026, 10, 30) + this.int(-400_000_000, 400_000_000) * 10 : this.int(-62_000_000_000, 253_000_000_000) * 1000;
  }
}
