import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The npm package `throttle-aware-http` as a user gets it.
 *
 * In `npm test` (fast): the library build (tsconfig.build.json) goes to a scratch package whose
 * node_modules is this checkout's; user code there imports the package by its own name (Node and
 * TypeScript both resolve a package's self-reference through its "exports"), compiled by strict
 * TypeScript and run from ESM and CommonJS.
 *
 * `npm run check:package` (CHECK_PACKAGE=1) adds the whole path: `npm pack`, an offline `npm ci`
 * of the tarball into a new project (versions pinned from this repo's lockfile, so nothing is
 * fetched), the same user code, two more module resolutions, the bin, the engine with spectral
 * and axios deleted, and `npm publish --dry-run` never reaching prism.
 */

const exec = promisify(execFile);
const root = resolve(__dirname, "..");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageManifest;
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const slowCheck = process.env.CHECK_PACKAGE === "1";

interface PackageManifest {
  name: string;
  version: string;
  license: string;
  main: string;
  types: string;
  exports: Record<string, string | Record<string, Record<string, string>>>;
  typesVersions: Record<string, Record<string, string[]>>;
  files: string[];
  bin: Record<string, string>;
  engines: Record<string, string>;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
}

/** What the compiled user code prints (see USER_CODE). */
interface ProbeReport {
  names: string[];
  engineNames: string[];
  minWaitMs: number | null;
  decision: string;
  waitMs: number | null;
  oneCopy: boolean;
}

/** The names a user is promised on "." (README "From code"); the package may export more. */
const PROMISED = ["createThrottleClient", "ThrottleDeferredError", "WriteOutcomeUnknownError", "ThrottleInputError", "createMemoryStore", "createCrossFlowStore", "createRedisStore", "STATE_KEY", "claim", "observe", "classify", "plan", "budgetNotBefore", "DEFAULT_POLICY"];
const ENGINE_PROMISED = ["classify", "plan", "budgetNotBefore", "DEFAULT_POLICY", "parseHttpDate", "dialects"];

async function run(command: string, args: string[], cwd: string, input?: string): Promise<{ stdout: string; stderr: string }> {
  const child = exec(command, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: "false" } });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    return await child;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${failed.stderr ?? ""}${failed.stdout ?? ""}${failed.message}`, { cause: error });
  }
}

/**
 * User code in strict TypeScript: ESM (.mts) and CommonJS (.cts), both importing by package name.
 * The @ts-expect-error lines (never called) compile only while the declarations are real types:
 * with no declarations (TS7016) or `any` declarations the build fails.
 */
const USER_CODE: Record<string, string> = {
  "esm-user.mts": `
import { createRequire } from "node:module";
import * as pkg from "throttle-aware-http";
import { budgetNotBefore, classify, createMemoryStore, createThrottleClient, DEFAULT_POLICY, plan, ThrottleDeferredError, type Decision, type ThrottleResult, type Verdict } from "throttle-aware-http";
import * as engine from "throttle-aware-http/engine";

const nowMs = Date.parse("2026-03-02T09:00:00Z");
const verdict: Verdict = classify({ request: { method: "GET", url: "https://api.example.com/items" }, response: { status: 429, headers: { "retry-after": "2" } } }, { nowMs });
const decision: Decision = plan(verdict, { attempts: 1, firstAttemptAtMs: nowMs }, DEFAULT_POLICY, { nowMs, random: () => 0 });
const paceUntil: string | null = budgetNotBefore(verdict, 0, nowMs);
const client = createThrottleClient({ baseUrl: "http://127.0.0.1:9", store: createMemoryStore(), onLongWait: "defer" });
export async function fetchItems(): Promise<ThrottleResult> {
  try {
    return await client.request({ method: "GET", url: "/items" });
  } catch (error) {
    if (error instanceof ThrottleDeferredError) console.error(error.notBefore, paceUntil);
    throw error;
  }
}
export function misuse(): void {
  // @ts-expect-error the status must be a number
  classify({ response: { status: "429" } }, { nowMs });
}
const required = createRequire(import.meta.url)("throttle-aware-http") as typeof pkg;
const visible = (m: object) => Object.keys(m).filter((n) => n !== "default" && n !== "__esModule").sort();
console.log(JSON.stringify({
  names: visible(pkg),
  engineNames: visible(engine),
  minWaitMs: verdict.minWaitMs,
  decision: decision.decision,
  waitMs: "waitMs" in decision ? decision.waitMs : null,
  oneCopy: required.ThrottleDeferredError === ThrottleDeferredError && engine.classify === classify && required.DEFAULT_POLICY === DEFAULT_POLICY,
}));
`,
  "cjs-user.cts": `
import * as pkg from "throttle-aware-http";
import { classify, createThrottleClient, DEFAULT_POLICY, plan, type Verdict } from "throttle-aware-http";
import * as engine from "throttle-aware-http/engine";

const nowMs = Date.parse("2026-03-02T09:00:00Z");
const verdict: Verdict = classify({ request: { method: "GET", url: "https://api.example.com/items" }, response: { status: 429, headers: { "retry-after": "2" } } }, { nowMs });
const decision = plan(verdict, { attempts: 1, firstAttemptAtMs: nowMs }, DEFAULT_POLICY, { nowMs, random: () => 0 });
createThrottleClient({ baseUrl: "http://127.0.0.1:9" });
export function misuse(): void {
  // @ts-expect-error plan needs a random source
  plan(verdict, { attempts: 1, firstAttemptAtMs: nowMs }, DEFAULT_POLICY, { nowMs });
}
const visible = (m: object) => Object.keys(m).filter((n) => n !== "default" && n !== "__esModule").sort();
console.log(JSON.stringify({
  names: visible(pkg),
  engineNames: visible(engine),
  minWaitMs: verdict.minWaitMs,
  decision: decision.decision,
  waitMs: "waitMs" in decision ? decision.waitMs : null,
  oneCopy: engine.classify === classify,
}));
`,
  "tsconfig.json": JSON.stringify({
    compilerOptions: { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "ES2022", types: ["node"], skipLibCheck: false, rootDir: ".", outDir: "out", noEmitOnError: true },
    files: ["esm-user.mts", "cjs-user.cts"],
  }),
};

function writeFiles(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
}

/** Compiles USER_CODE in `dir` with strict tsc, runs both outputs, returns what each printed. */
async function compileAndRunUserCode(dir: string): Promise<{ esm: ProbeReport; cjs: ProbeReport }> {
  writeFiles(dir, USER_CODE);
  await run(process.execPath, [tsc, "-p", "tsconfig.json"], dir);
  const esm = JSON.parse((await run(process.execPath, ["out/esm-user.mjs"], dir)).stdout) as ProbeReport;
  const cjs = JSON.parse((await run(process.execPath, ["out/cjs-user.cjs"], dir)).stdout) as ProbeReport;
  return { esm, cjs };
}

function expectUserCodeWorked({ esm, cjs }: { esm: ProbeReport; cjs: ProbeReport }): void {
  expect(esm.names).toEqual(cjs.names);
  expect(esm.names).toEqual(expect.arrayContaining(PROMISED));
  expect(esm.engineNames).toEqual(cjs.engineNames);
  expect(esm.engineNames).toEqual(expect.arrayContaining(ENGINE_PROMISED));
  expect(esm.engineNames).not.toContain("createThrottleClient");
  for (const report of [esm, cjs]) {
    // Retry-After: 2 read by the engine, and a retry never sooner than the server asked.
    expect(report).toMatchObject({ minWaitMs: 2000, decision: "retry", oneCopy: true });
    expect(report.waitMs).toBeGreaterThanOrEqual(2000);
  }
}

/** Every file the manifest points a user or a tool at, relative to the package root. */
function declaredEntryFiles(): string[] {
  const conditions = Object.values(manifest.exports).flatMap((target) => (typeof target === "string" ? [target] : Object.values(target).flatMap((byKind) => Object.values(byKind))));
  const typesVersions = Object.values(manifest.typesVersions).flatMap((map) => Object.values(map).flat());
  return [manifest.main, manifest.types, ...conditions, ...typesVersions].map((file) => file.replace(/^\.\//, ""));
}

/** The bare module names required by a CommonJS file and everything it requires relatively. */
function bareRequiresFrom(entry: string): Set<string> {
  const bare = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [, specifier] of readFileSync(file, "utf8").matchAll(/\brequire\("([^"]+)"\)/g)) {
      if (!specifier!.startsWith(".")) {
        bare.add(specifier!);
        continue;
      }
      const target = resolve(dirname(file), specifier!);
      visit([`${target}.js`, join(target, "index.js"), target].find((candidate) => existsSync(candidate) && candidate.endsWith(".js"))!);
    }
  };
  visit(entry);
  return bare;
}

/** The npm scripts a lifecycle event runs, following `npm run X` inside them. */
function scriptsRunBy(events: string[]): string[] {
  const commands: string[] = [];
  const pending = [...events];
  while (pending.length > 0) {
    const command = manifest.scripts[pending.shift()!];
    if (command === undefined) continue;
    commands.push(command);
    for (const [, script] of command.matchAll(/npm run(?: -s)? ([\w:-]+)/g)) pending.push(script!);
  }
  return commands;
}

describe("the npm package (fast: library build in a scratch package)", () => {
  const scratch = mkdtempSync(join(tmpdir(), "package-fast-"));

  beforeAll(async () => {
    writeFileSync(join(scratch, "package.json"), JSON.stringify(manifest));
    symlinkSync(join(root, "node_modules"), join(scratch, "node_modules"), "dir");
    await run(process.execPath, [tsc, "-p", "tsconfig.build.json", "--outDir", join(scratch, "lib")], root);
  }, 180_000);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("builds every file that main, types, exports and typesVersions name", () => {
    const missing = declaredEntryFiles().filter((file) => !existsSync(join(scratch, file)));
    expect(missing).toEqual([]);
  });

  it("ships the bin, the library and LICENSE, and leaves the lab and dist out of `files`", () => {
    expect(existsSync(join(root, Object.values(manifest.bin)[0]!))).toBe(true);
    expect(manifest.files).toEqual(expect.arrayContaining(["lib", "!src/lab"]));
    expect(manifest.files).not.toContain("dist");
    expect(readFileSync(join(root, "LICENSE"), "utf8")).toMatch(/^MIT License\n\nCopyright \(c\) 2026 Throttle-Aware HTTP contributors\n/);
    expect(manifest.license).toBe("MIT");
  });

  it("compiles strict ESM and CommonJS user code against the declarations and runs it: same names, one copy", async () => {
    expectUserCodeWorked(await compileAndRunUserCode(join(scratch, "user")));
  }, 120_000);

  it("builds an engine entry that requires nothing but its parsers, structured-headers and graphql (so no spectral, no axios)", () => {
    const engineEntry = join(scratch, (manifest.exports["./engine"] as Record<string, Record<string, string>>).require!.default!);
    expect([...bareRequiresFrom(engineEntry)].sort()).toEqual(["graphql/language/parser", "structured-headers"]);
    expect(Object.keys(manifest.dependencies)).toContain("graphql");
    expect(Object.keys(manifest.dependencies)).toContain("structured-headers");
    // The same walk from "." does find them, so the walk itself sees requires.
    expect([...bareRequiresFrom(join(scratch, manifest.main))]).toEqual(expect.arrayContaining(["axios", "@prismatic-io/spectral/dist/clients/http"]));
  });

  it("has no lifecycle script that reaches prism: `npm publish` publishes the library only", () => {
    const publishLifecycle = ["prepublish", "prepare", "prepublishOnly", "prepack", "postpack", "publish", "postpublish"].flatMap((event) => [`pre${event}`, event, `post${event}`]);
    const commands = scriptsRunBy(publishLifecycle);
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.filter((command) => /\bprism\b/.test(command))).toEqual([]);
    expect(scriptsRunBy(["publish:component"])).toEqual(expect.arrayContaining([expect.stringMatching(/prism components:publish/), "webpack"]));
  });
});

/** A consumer project whose lockfile pins what this repo's lockfile pins, so `npm ci --offline` can install it from the cache. */
function writeConsumerProject(dir: string, tarball: string): void {
  const repoLock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as { packages: Record<string, { dev?: boolean }> };
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  const self = `file:${tarball}`;
  const devDependencies = { typescript: "*", "@types/node": "*" };
  const packages: Record<string, unknown> = {
    "": { name: "consumer", version: "1.0.0", dependencies: { [manifest.name]: self }, devDependencies },
    [`node_modules/${manifest.name}`]: { version: manifest.version, resolved: self, integrity, license: manifest.license, dependencies: manifest.dependencies, bin: manifest.bin, engines: manifest.engines },
  };
  // The library's own dependency tree (entries npm marks dev-only are left out), plus the two
  // tools user code compiles with.
  for (const [key, entry] of Object.entries(repoLock.packages)) {
    if (key !== "" && !entry.dev) packages[key] = entry;
  }
  for (const key of ["node_modules/typescript", "node_modules/@types/node", "node_modules/undici-types"]) packages[key] = repoLock.packages[key];
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, dependencies: { [manifest.name]: self }, devDependencies }, null, 2));
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify({ name: "consumer", version: "1.0.0", lockfileVersion: 3, requires: true, packages }, null, 2));
}

describe.runIf(slowCheck)("the npm package (npm run check:package: pack, offline install, use)", () => {
  const work = mkdtempSync(join(tmpdir(), "package-check-"));
  const consumer = join(work, "consumer");
  let tarball = "";
  let packedFiles: string[] = [];

  beforeAll(async () => {
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], root);
    const [packed] = JSON.parse(stdout.slice(stdout.indexOf("["))) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = join(work, packed!.filename);
    packedFiles = packed!.files.map((file) => file.path);
    mkdirSync(consumer);
    writeConsumerProject(consumer, tarball);
    await run("npm", ["ci", "--offline", "--no-audit", "--no-fund"], consumer);
  }, 600_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("packs the library, its declarations, the bin's sources and LICENSE; no lab, tests or component bundle", () => {
    expect(packedFiles).toEqual(expect.arrayContaining(["LICENSE", "README.md", "package.json", "src/cli/throttle-http.cjs", ...declaredEntryFiles()]));
    expect(packedFiles.filter((file) => /^(src\/lab|test|dist|report)\//.test(file))).toEqual([]);
  });

  it("installs offline; strict user code compiles (nodenext ESM and CommonJS) and runs", async () => {
    expect(readdirSync(join(consumer, "node_modules", manifest.name, "lib"))).toContain("library");
    expectUserCodeWorked(await compileAndRunUserCode(join(consumer, "user")));
  }, 300_000);

  it.each([
    ["node10 (CommonJS projects; typesVersions)", { module: "commonjs", moduleResolution: "node10" }],
    ["bundler (webpack, vite, esbuild)", { module: "esnext", moduleResolution: "bundler" }],
  ])("type-checks an import of both entries under moduleResolution %s", async (_label, options) => {
    const dir = join(consumer, `user-${options.moduleResolution}`);
    writeFiles(dir, {
      "user.ts": `import { classify, DEFAULT_POLICY, plan } from "throttle-aware-http/engine";\nimport { createThrottleClient, type ThrottleResult } from "throttle-aware-http";\nconst verdict = classify({ response: { status: 429, headers: { "retry-after": "1" } } }, { nowMs: 0 });\nexport const next = plan(verdict, { attempts: 1, firstAttemptAtMs: 0 }, DEFAULT_POLICY, { nowMs: 0, random: Math.random });\nexport const get = (): Promise<ThrottleResult> => createThrottleClient({}).request({ method: "GET", url: "http://127.0.0.1:9/" });\n`,
      "tsconfig.json": JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", types: ["node"], skipLibCheck: false, noEmit: true, ...options }, files: ["user.ts"] }),
    });
    await expect(run(process.execPath, [tsc, "-p", "tsconfig.json"], dir)).resolves.toBeDefined();
  }, 120_000);

  it("installs a working bin: throttle-http explain reads a response from stdin", async () => {
    const response = JSON.stringify({ request: { url: "https://api.example.com/x" }, response: { status: 429, headers: { "Retry-After": "2" } } });
    const { stdout } = await run(join(consumer, "node_modules", ".bin", "throttle-http"), ["explain", "--now", "2026-03-02T09:00:00Z"], consumer, response);
    expect(JSON.parse(stdout)).toMatchObject({ provider: "generic", throttled: true, minWaitMs: 2000 });
  }, 120_000);

  it("loads throttle-aware-http/engine from import and require with spectral and axios deleted (and '.' then fails)", async () => {
    for (const dependency of ["@prismatic-io/spectral", "axios", "axios-retry"]) rmSync(join(consumer, "node_modules", dependency), { recursive: true, force: true });
    const esm = await run(process.execPath, ["--input-type=module", "-e", `import { classify } from "throttle-aware-http/engine"; console.log(typeof classify);`], consumer);
    const cjs = await run(process.execPath, ["-e", `console.log(typeof require("throttle-aware-http/engine").plan)`], consumer);
    expect([esm.stdout.trim(), cjs.stdout.trim()]).toEqual(["function", "function"]);
    await expect(run(process.execPath, ["-e", `require("throttle-aware-http")`], consumer)).rejects.toThrow(/Cannot find module '(axios|@prismatic-io\/spectral)/);
  }, 120_000);

  it("`npm publish --dry-run` runs the library build and never prism", async () => {
    const { stdout, stderr } = await run("npm", ["publish", "--dry-run"], root);
    const ranScripts = [...`${stdout}\n${stderr}`.matchAll(/^> [^ ]+ ([\w:-]+)$/gm)].map((match) => match[1]);
    expect(ranScripts).toEqual(["prepare", "build:lib"]);
    expect(`${stdout}\n${stderr}`).not.toMatch(/prism components|app\.prismatic\.io/);
  }, 300_000);
});
