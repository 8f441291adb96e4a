// The ES module face of `throttle-aware-http/engine`: the CommonJS engine build re-exported
// (see index.mts for why a wrapper and not a second build).
export * from "../engine/index.js";
