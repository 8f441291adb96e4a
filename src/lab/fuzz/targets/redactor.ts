/**
 * Fuzz target: the redactor. Random secrets (quotes, backslashes, unicode, `+`, `:`, `$`,
 * spaces...) are embedded, in every form secretForms lists, in random text; the text is redacted
 * as it is or after JSON.stringify. A violation is any form of any secret left in the output, or
 * a JSON document that no longer parses after redaction. Standalone: the fuzz runner imports
 * { name, run }.
 */
import { createRedactor } from "../../../client/redact";
import { seededRandom } from "../../clock";
import { findSecretForms, secretForms } from "../../faults/encodings";

export const name = "redactor";

export interface FuzzReport {
  inputs: number;
  throws: number;
  violations: number;
  examples: string[];
}

/** Characters secrets are drawn from: the awkward ones several times over. */
const SECRET_ALPHABET = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", ...'"\\:$+ /%&=?#<>\'~!*(),;@[]{}|^`', ..."\"\\+:$ ", "é", "ü", "ß", "İ", "日", "本", "😀", "\n", "\t", "\u2028"];
/** Filler around the secrets: plain words, JSON punctuation and backslashes. */
const FILLER_ALPHABET = [..."abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ0123456789", ...'{}[]":,\\/=&?%+', "é", "\n"];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function randomText(random: () => number, alphabet: readonly string[], min: number, max: number): string {
  const length = min + Math.floor(random() * (max - min + 1));
  let out = "";
  for (let i = 0; i < length; i++) out += pick(random, alphabet);
  return out;
}

interface Case {
  secrets: string[];
  input: string;
  asJson: boolean;
  encodings: string[];
}

function makeCase(random: () => number): Case {
  const secrets = Array.from({ length: 1 + Math.floor(random() * 3) }, () => randomText(random, SECRET_ALPHABET, 4, 24));
  const parts = [randomText(random, FILLER_ALPHABET, 0, 40)];
  const encodings: string[] = [];
  const embeds = 1 + Math.floor(random() * 4);
  for (let i = 0; i < embeds; i++) {
    const secret = pick(random, secrets);
    const form = pick(random, secretForms(secret));
    // Basic: the whole header value, so the secret sits inside a longer base64 string.
    const text = form.encoding.startsWith("base64 in Basic") ? Buffer.from(`user:${secret}`).toString("base64") : form.text;
    encodings.push(form.encoding);
    parts.push(text, randomText(random, FILLER_ALPHABET, 0, 40));
  }
  const raw = parts.join("");
  const asJson = random() < 0.5;
  return { secrets, input: asJson ? JSON.stringify({ log: raw, n: 1 }) : raw, asJson, encodings };
}

/** What is fuzzed: createRedactor by default; a test hands in a weaker one to show the target can fail. */
export type RedactorFactory = (secrets: readonly string[]) => { text(value: string): string };

function check(c: Case, factory: RedactorFactory): string | null {
  const output = factory(c.secrets).text(c.input);
  const left = findSecretForms(output, c.secrets);
  if (left.length > 0) return `left ${left.map((h) => h.encoding).join(", ")} of ${JSON.stringify(left[0]!.secret)} in ${JSON.stringify(output.slice(0, 300))}`;
  if (c.asJson) {
    try {
      JSON.parse(output);
    } catch {
      return `broke JSON: ${JSON.stringify(output.slice(0, 300))}`;
    }
  }
  return null;
}

export function run(seed: number, count: number, factory: RedactorFactory = createRedactor): FuzzReport {
  const random = seededRandom(seed);
  const report: FuzzReport = { inputs: 0, throws: 0, violations: 0, examples: [] };
  for (let i = 0; i < count; i++) {
    const c = makeCase(random);
    report.inputs++;
    let problem: string | null;
    try {
      problem = check(c, factory);
    } catch (error) {
      report.throws++;
      problem = `threw ${error instanceof Error ? error.message : String(error)}`;
    }
    if (problem === null) continue;
    if (!problem.startsWith("threw")) report.violations++;
    if (report.examples.length < 5) report.examples.push(`seed ${seed} case ${i} (${c.encodings.join(", ")}; secrets ${JSON.stringify(c.secrets)}): ${problem}`);
  }
  return report;
}

export default { name, run };
