/**
 * The npm package's main entry, `throttle-aware-http`: the client, its errors, the stores that
 * hold the rate governors (memory, cross-flow state) and the pure engine, for code-native
 * integrations and plain Node users.
 * Each layer's index already says what it makes public; this file only gathers them, so a name
 * a layer adds is exported here without a second list to keep in step.
 *
 * The Prismatic component (src/index.ts) is not part of the package: it runs inside Prismatic
 * from the webpack bundle that `npm run publish:component` uploads. `throttle-aware-http/engine`
 * is src/engine alone, which loads without spectral or axios.
 */
export * from "../client";
export * from "../store";
export * from "../engine";
