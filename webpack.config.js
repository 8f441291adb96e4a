// Builds the Prismatic component: one self-contained CommonJS dist/index.js plus the icon, which
// is exactly what `prism components:publish` zips and uploads (it uploads dist/ only).
const path = require("path");
const CopyPlugin = require("copy-webpack-plugin");

module.exports = {
  mode: "production",
  target: "node",
  entry: "./src/index.ts",
  devtool: false,
  resolve: {
    extensions: [".ts", ".js"],
    // One axios in the bundle. spectral's CommonJS code require()s axios and gets its CommonJS
    // build (dist/node/axios.cjs, the "require" condition of axios's exports), while our ESM
    // import would get the "default" condition (lib/, the ES module sources): two copies of the
    // same client in dist/index.js. Pointing every "axios" at the file Node's require picks
    // keeps one, the one spectral was tested with. `axios$` matches the bare name only.
    alias: { axios$: require.resolve("axios") },
  },
  module: {
    rules: [
      {
        test: /\.ts$/,
        exclude: /node_modules/,
        use: {
          loader: "ts-loader",
          // Type-checking is `npm run typecheck`'s job; the bundle only needs the JavaScript, and
          // the project's tsconfig (module ESNext, bundler resolution) is right for webpack.
          options: { transpileOnly: true, compilerOptions: { noEmit: false } },
        },
      },
      { test: /\.md$/, type: "asset/source" },
    ],
  },
  plugins: [new CopyPlugin({ patterns: [{ from: "assets", to: "." }] })],
  output: {
    filename: "index.js",
    path: path.resolve(__dirname, "dist"),
    libraryTarget: "commonjs2",
    clean: true,
  },
  optimization: { usedExports: true, minimize: false },
  ignoreWarnings: [
    // spectral's index pulls in its testing module (jest-util), which webpack cannot fully analyse.
    { module: /jest-util|jest-mock|@prismatic-io\/spectral/, message: /Critical dependency/ },
    // node-redis loads OpenTelemetry and @node-rs/xxhash only where they are installed (a require
    // and an import inside try/catch): the bundle leaves them out and the client runs without them
    // (test/actions/redis-bundle.test.ts runs the built component against a real redis-server).
    { module: /@redis[\\/]client/, message: /Can't resolve '(@opentelemetry\/api|@node-rs\/xxhash)'/ },
  ],
};
