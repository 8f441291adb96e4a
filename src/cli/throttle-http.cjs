#!/usr/bin/env node
// The package's bin: `throttle-http explain [--now ISO] [FILE]`. The sources are TypeScript run
// through tsx (a runtime dependency), so the command works from a checkout without a build.
"use strict";
require("tsx/cjs");
const { runExplain, EXPLAIN_USAGE } = require("./explain.ts");

const USAGE = `usage: throttle-http explain [--now ISO-8601] [--no-retry-writes-after-throttle] [FILE]  (throttle-http explain --help for the input shape)`;
const [command, ...rest] = process.argv.slice(2);
if (command === "explain") {
  process.exitCode = runExplain(rest);
} else if (command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(`${USAGE}\n  ${EXPLAIN_USAGE}\n`);
  process.exitCode = 0;
} else {
  process.stderr.write(`throttle-http: ${command ? `unknown command "${command}"` : "no command given"}; ${USAGE}\n`);
  process.exitCode = 2;
}
