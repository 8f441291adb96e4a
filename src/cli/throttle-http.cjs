#!/usr/bin/env node
// The package's bin: `throttle-http explain [--now ISO] [FILE]`. The sources are TypeScript run
// through tsx (a runtime dependency), so the command works from a checkout without a build.
"use strict";
require("tsx/cjs");
const { runExplain } = require("./explain.ts");

const [command, ...rest] = process.argv.slice(2);
if (command === "explain") {
  process.exitCode = runExplain(rest);
} else {
  process.stderr.write(
    `throttle-http: ${command ? `unknown command "${command}"` : "no command given"}; usage: throttle-http explain [--now ISO-8601] [FILE]\n`,
  );
  process.exitCode = 2;
}
