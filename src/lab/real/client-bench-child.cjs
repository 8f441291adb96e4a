// The measured loop of `npm run bench:client`, in plain Node (no TypeScript loader): bare axios,
// spectral's createClient and the compiled library take turns, request by request. Prints one
// JSON line: the p50 latency of each, in ms. Run by client-bench.ts, which builds lib/ first.
const http = require("node:http");
const path = require("node:path");
const axios = require("axios");
const { createClient } = require("@prismatic-io/spectral/dist/clients/http");
const { createThrottleClient } = require(path.resolve(__dirname, "../../../lib/library/index.js"));

const [rounds, withBudget] = [Number(process.argv[2]), process.argv[3] === "budget"];
const body = JSON.stringify({ id: 1, name: "widget", tags: ["a", "b"], price: 12.5 });
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const budget = withBudget ? { "x-ratelimit-limit": "100000", "x-ratelimit-remaining": "99000", "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + 60) } : {};
    res.writeHead(200, { "content-type": "application/json", ...budget }).end(body);
  });
});

server.listen(0, "127.0.0.1", async () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  // All three on Node's default (keep-alive) agent, as each is used out of the box.
  const bare = axios.create({ baseURL: url });
  const spectral = createClient({ baseUrl: url, responseType: "json", retryConfig: { retries: 3, retryDelay: 100 } });
  const ours = createThrottleClient({ baseUrl: url, onLongWait: "defer" });
  const clients = [(p) => bare.get(p), (p) => spectral.get(p), (p) => ours.request({ method: "GET", url: p })];
  const samples = clients.map(() => []);
  const warmup = Math.min(500, Math.floor(rounds / 5));
  for (let round = 0; round < warmup + rounds; round++) {
    for (const [index, send] of clients.entries()) {
      const started = process.hrtime.bigint();
      await send(`/items/${round}`);
      if (round >= warmup) samples[index].push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  const p50 = samples.map((s) => s.sort((a, b) => a - b)[Math.floor(s.length / 2)]);
  process.stdout.write(`${JSON.stringify(p50)}\n`);
  server.close();
});
