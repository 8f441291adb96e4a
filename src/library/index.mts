// The ES module face of `throttle-aware-http`: the CommonJS build re-exported, so `import` and
// `require` share one copy of the module (one ThrottleDeferredError class for `instanceof`, one
// DEFAULT_POLICY): "Approach #1: Use an ES module wrapper" of Node's package docs
// (https://nodejs.org/docs/latest-v16.x/api/packages.html#approach-1-use-an-es-module-wrapper;
// the text now lives in https://github.com/nodejs/package-examples). Node finds the names by
// static analysis of the CommonJS file (cjs-module-lexer); test/package.test.ts checks that
// import and require see the same names.
export * from "./index.js";
