import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "report/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["src/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
    },
  },
  {
    // The engine is pure: no platform, HTTP client or network imports; the clock and the
    // random source are parameters. This rule keeps it that way.
    files: ["src/engine/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["@prismatic-io/*"], message: "src/engine must not import Prismatic." },
            { group: ["axios", "axios-*"], message: "src/engine must not import an HTTP client." },
            {
              group: ["http", "https", "net", "tls", "dgram", "dns", "http2", "node:*", "undici", "../client/*", "../ledger/*", "../actions/*", "../lab/*"],
              message: "src/engine is pure: no Node platform or network modules, no client/ledger/glue imports.",
            },
          ],
        },
      ],
      "no-restricted-globals": [
        "error",
        { name: "fetch", message: "src/engine does no I/O." },
        { name: "setTimeout", message: "src/engine does not sleep; the client does." },
      ],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "Pass the clock in (now / nowMs)." },
        { object: "Math", property: "random", message: "Pass the random source in." },
      ],
    },
  },
  {
    // The bin shim is plain CommonJS run by Node: it registers tsx and requires the TypeScript CLI.
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", process: "readonly", module: "readonly", __dirname: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
);
