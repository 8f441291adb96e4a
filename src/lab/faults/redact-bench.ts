/**
 * `npx tsx src/lab/faults/redact-bench.ts`: what redaction costs. Prints, per input shape, the
 * time per call and throughput of createRedactor's single combined pass, and of a naive
 * baseline that scans the input once per secret and encoding (what redaction did before). No
 * timing assertion lives in a test; this script is the only performance claim.
 *
 * The baseline knows four exact forms (raw, encodeURIComponent, base64, JSON-escaped), case-sensitive:
 * the old redactor's three plus one. It is a cost reference, not an equivalent: the fuzz target
 * shows what it misses.
 */
import { createRedactor } from "../../client/redact";
import { seededRandom } from "../clock";

/** The baseline: one includes/split/join per secret per form. */
function naiveRedactor(secrets: readonly string[]): (text: string) => string {
  const needles = secrets.flatMap((s) => [s, encodeURIComponent(s), Buffer.from(s).toString("base64"), JSON.stringify(s).slice(1, -1)]);
  return (text) => {
    let out = text;
    for (const n of needles) if (out.includes(n)) out = out.split(n).join("[redacted]");
    return out;
  };
}

function randomWord(random: () => number, length: number): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}

/** A JSON body of about `bytes` characters: records of words and numbers, `hits` secrets inside. */
function jsonBody(random: () => number, bytes: number, secrets: readonly string[], hits: number): string {
  const records: Array<Record<string, unknown>> = [];
  let size = 0;
  while (size < bytes) {
    const record = { id: Math.floor(random() * 1e9), name: randomWord(random, 12), note: `${randomWord(random, 30)} ${randomWord(random, 20)}`, ok: random() < 0.5 };
    size += JSON.stringify(record).length + 1;
    records.push(record);
  }
  for (let i = 0; i < hits; i++) records[Math.floor(random() * records.length)]!.note = `token ${secrets[i % secrets.length]} echoed`;
  return JSON.stringify(records);
}

function measure(label: string, run: () => void, inputChars: number, minMs = 400): string {
  for (let i = 0; i < 3; i++) run();
  let calls = 0;
  const started = performance.now();
  while (performance.now() - started < minMs) {
    run();
    calls++;
  }
  const msPerCall = (performance.now() - started) / calls;
  const mbPerS = inputChars / 1e6 / (msPerCall / 1000);
  return `${label.padEnd(44)} ${msPerCall.toFixed(3).padStart(10)} ms/call ${mbPerS.toFixed(1).padStart(8)} MB/s`;
}

function main(): void {
  const random = seededRandom(42);
  for (const secretCount of [1, 4, 16]) {
    const secrets = Array.from({ length: secretCount }, () => `${randomWord(random, 24)}"\\:$ +`);
    const redactor = createRedactor(secrets);
    const naive = naiveRedactor(secrets);
    const build = measure(`build redactor (${secretCount} secrets)`, () => createRedactor(secrets), 0, 200).replace(/\s+\S+ MB\/s$/, "");
    process.stdout.write(`\n${secretCount} secret(s)\n${build}\n`);
    const logLine = JSON.stringify({ event: "throttle_decision", provider: "generic", method: "GET", path: "/v1/items?api_key=…", status: 429, waitMs: 1200, reason: "Retry-After: 1 (seconds)" });
    const shapes: Array<[string, string]> = [
      ["log line, no secret", logLine],
      ["1 MB JSON body, no secret", jsonBody(random, 1_000_000, secrets, 0)],
      ["1 MB JSON body, 100 secrets", jsonBody(random, 1_000_000, secrets, 100)],
      ["10 MB JSON body, no secret", jsonBody(random, 10_000_000, secrets, 0)],
      // Backtracking bait: runs of backslashes and escapes right after a secret's first characters.
      ["1 MB of backslash and escape runs", secrets.map((s) => s.slice(0, 24) + "\\".repeat(20) + '\\"+%20'.repeat(20)).join("").repeat(1).padEnd(1_000_000, "\\\t")],
    ];
    for (const [label, input] of shapes) {
      process.stdout.write(`${measure(`combined: ${label}`, () => redactor.text(input), input.length)}\n`);
      process.stdout.write(`${measure(`naive:    ${label}`, () => naive(input), input.length)}\n`);
    }
  }
}

main();
