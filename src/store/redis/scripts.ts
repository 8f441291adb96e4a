/**
 * The Redis store's scripts: each is the governor library (governor-lua.ts) plus one entry that
 * reads the scope's key, applies one operation, writes the key back with its expiry and answers in
 * JSON. Arguments arrive as one JSON object (ARGV[1]); answers leave as JSON text, because Redis
 * turns a Lua number into an integer reply (truncating it).
 *
 * Time: a claim's "now" is Redis's own TIME (https://redis.io/docs/latest/commands/time/), so the
 * clocks of the processes that share the store do not matter; its latestStartMs keeps its distance
 * from the client's now. An observation's instants (sent, answered, the reset it read) were taken
 * on the client's clock: the store moves them by the offset it measured between the two clocks
 * (store.ts), not by the time of the call, which would move them by the call's own latency.
 * Absolute instants given by a person or an API (Record Backoff's Not Before, a hold, a parked
 * item's not_before) are kept as given: both clocks are UTC wall clocks. `nowMs` in the arguments
 * replaces TIME; only the differential test sets it, so that the TypeScript governor and the
 * scripts see the same time.
 */
import { GOVERNOR_LUA } from "./governor-lua";

const RUNTIME_LUA = String.raw`
local args = cjson.decode(ARGV[1])

local function redisNowMs()
  local override = nn(args.nowMs)
  if override ~= nil then return override end
  local t = redis.call("TIME")
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The longest expiry set on a key (a wait recorded for more than this is dropped with its key).
local MAX_TTL_MS = 366 * 86400000

-- The key lives while anything in the state can still matter (its wait, its last grant's window,
-- its leases, the server's reset), then args.retainMs more, so that what was learned outlives a
-- short pause; an idle scope disappears by itself.
local function save(key, state, nowMs)
  local untilMs = math.max(nowMs, state.notBeforeMs, state.lastGrantMs + (state.windowMs or UNKNOWN_WINDOW_RETAIN_MS))
  if state.probe then untilMs = math.max(untilMs, state.probe.untilMs) end
  for _, f in ipairs(state.inFlight) do untilMs = math.max(untilMs, f[2]) end
  if state.anchor then untilMs = math.max(untilMs, state.anchor.resetAtMs) end
  local ttl = math.max(1, math.min(MAX_TTL_MS, math.floor(untilMs - nowMs + args.retainMs)))
  redis.call("SET", key, encodeState(state), "PX", ttl)
end

local function load(key, nowMs)
  return decodeState(redis.call("GET", key)) or emptyState(nowMs)
end
`;

const CLAIM_LUA = String.raw`
local nowMs = redisNowMs()
local shift = nowMs - args.clientNowMs
local latest = nn(args.latestStartMs)
if latest == nil then latest = INF else latest = latest + shift end
-- claim.ts latestPacedStartMs: the scope's pacing may reach as far as this, never less far than latest.
local paced = nn(args.latestPacedStartMs)
if paced == nil then paced = INF else paced = paced + shift end
if paced < latest then paced = latest end
local state = load(KEYS[1], nowMs)
for i = 2, #KEYS do
  local held = decodeState(redis.call("GET", KEYS[i]))
  if held and held.notBeforeMs > state.notBeforeMs then holdUntil(state, held.notBeforeMs, held.notBeforeReason, held.notBeforeType) end
end
local request = { nowMs = nowMs, latestStartMs = latest, latestPacedStartMs = paced, units = nn(args.units), random = nn(args.random), waitedMs = nn(args.waitedMs) }
local holding = nn(args.holding)
local r
-- claim.ts claimInPlace: a held grant that is no grant (not a whole seq, not a time) is ignored.
if holding and isCount(holding.seq) and holding.seq > 0 and isFiniteNumber(holding.atMs) then
  r, state = claimAgain(state, request, holding, args)
else
  r = claimInPlace(state, request, args)
end
if not r.kept then save(KEYS[1], state, nowMs) end
local body
if r.kind == "go" then
  body = '{"kind":"go","atMs":' .. num(r.atMs) .. ',"seq":' .. num(r.seq) .. ',"probe":' .. bool(r.probe) .. ',"revisable":' .. bool(r.revisable) .. ',"why":' .. cjson.encode(r.why) .. "}"
elseif r.kind == "wait" then
  body = '{"kind":"wait","untilMs":' .. num(r.untilMs) .. ',"why":' .. cjson.encode(r.why) .. "}"
else
  body = '{"kind":"defer","notBeforeMs":' .. num(r.notBeforeMs) .. ',"why":' .. cjson.encode(r.why) .. ',"limitType":' .. cjson.encode(r.limitType) .. "}"
end
-- places: concurrency.ts holdsConcurrency; seen: model.ts seesEveryClaim (inline: the chunk is at Lua's 200 locals).
return '{"result":' .. body .. ',"nowMs":' .. num(nowMs) .. ',"places":' .. bool(holdsConcurrency(state)) .. ',"seen":' .. bool(state.othersPerMs == 0 and state.reserveUnits == 0) .. "}"
`;

// The observation arrives in Redis's time already: the store moved the client's instants by the
// clock offset it measured (see store.ts), so that the time the call took does not move them.
const OBSERVE_LUA = String.raw`
local o = args.observation
local nowMs = clampTime(numberOrNaN(o.nowMs))
local budget = nn(o.budget)
if budget then
  budget = { remaining = nn(budget.remaining), limit = nn(budget.limit), resetAtMs = nn(budget.resetAtMs), windowMs = nn(budget.windowMs), policyWindowMs = nn(budget.policyWindowMs), restorePerSecond = nn(budget.restorePerSecond), restoreEstimated = budget.restoreEstimated == true, restoreFloorPerSecond = nn(budget.restoreFloorPerSecond), unitsPerRequest = nn(budget.unitsPerRequest), concurrent = budget.concurrent == true, resetCountsDown = budget.resetCountsDown == true }
end
local observation = { seq = nn(o.seq), sentAtMs = nn(o.sentAtMs), nowMs = nn(o.nowMs), kind = o.kind, limitType = o.limitType, waitMs = nn(o.waitMs), waitFromServer = o.waitFromServer, waitResolutionMs = nn(o.waitResolutionMs), budget = budget, reason = o.reason, counted = o.counted }
local state = load(KEYS[1], nowMs)
observeInPlace(state, observation, args)
save(KEYS[1], state, nowMs)
-- As the claim answers: places (holdsConcurrency), seen (model.ts seesEveryClaim).
return "ok" .. (holdsConcurrency(state) and ":places" or "") .. ((state.othersPerMs == 0 and state.reserveUnits == 0) and ":seen" or "")
`;

const RELEASE_LUA = String.raw`
local state = decodeState(redis.call("GET", KEYS[1]))
if not state then return "none" end
release(state, args.seq)
save(KEYS[1], state, redisNowMs())
return "ok"
`;

const HOLD_LUA = String.raw`
local nowMs = redisNowMs()
local state = load(KEYS[1], nowMs)
holdUntil(state, args.untilMs, args.reason, args.limitType)
save(KEYS[1], state, nowMs)
return encodeState(state)
`;

/** The salt: set once (SET NX semantics) and kept while it is used. */
const SALT_LUA = String.raw`
local salt = redis.call("GET", KEYS[1])
if not salt then
  redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
  return ARGV[1]
end
redis.call("PEXPIRE", KEYS[1], ARGV[2])
return salt
`;

/**
 * Park: appends the entries (ARGV[2..], each the JSON text the memory store would keep) while they
 * fit the queue's bounds; once one does not, none after it goes in (the queue keeps the given
 * order). The queue's key lives until its latest not_before plus args.retainMs.
 */
const PARK_LUA = String.raw`
local nowMs = redisNowMs()
local held = redis.call("LRANGE", KEYS[1], 0, -1)
local count = #held
local bytes = 0
for _, e in ipairs(held) do bytes = bytes + #e end
local parked = 0
local latest = nowMs
for i = 2, #ARGV do
  local entry = ARGV[i]
  if count >= args.maxItems or bytes + #entry > args.maxBytes then break end
  redis.call("RPUSH", KEYS[1], entry)
  count = count + 1
  bytes = bytes + #entry
  parked = parked + 1
  latest = math.max(latest, args.notBefores[i - 1])
end
if parked > 0 then
  local ttl = math.floor(math.min(MAX_TTL_MS, latest - nowMs + args.retainMs))
  local current = redis.call("PTTL", KEYS[1])
  if current < ttl then redis.call("PEXPIRE", KEYS[1], ttl) end
end
return '{"parked":' .. parked .. ',"queued":' .. count .. "}"
`;

/** Take: removes up to args.maxItems entries whose not_before is at or before args.takeAtMs, in queue order. */
const TAKE_LUA = String.raw`
local held = redis.call("LRANGE", KEYS[1], 0, -1)
local taken = {}
local kept = {}
local nextMs = nil
for _, entry in ipairs(held) do
  local notBeforeMs = cjson.decode(entry).notBeforeMs
  if #taken < args.maxItems and notBeforeMs <= args.takeAtMs then
    taken[#taken + 1] = entry
  else
    kept[#kept + 1] = entry
    if nextMs == nil or notBeforeMs < nextMs then nextMs = notBeforeMs end
  end
end
if #taken > 0 then
  local ttl = redis.call("PTTL", KEYS[1])
  redis.call("DEL", KEYS[1])
  for i = 1, #kept, 500 do
    redis.call("RPUSH", KEYS[1], unpack(kept, i, math.min(i + 499, #kept)))
  end
  if #kept > 0 and ttl > 0 then redis.call("PEXPIRE", KEYS[1], ttl) end
end
local out = { '{"remaining":' .. #kept .. ',"nextNotBeforeMs":' .. numOrNull(nextMs) .. "}" }
for i, entry in ipairs(taken) do out[i + 1] = entry end
return out
`;

const withLibrary = (entry: string, runtime = true): string => `${GOVERNOR_LUA}\n${runtime ? RUNTIME_LUA : ""}\n${entry}`;

export const SCRIPTS = {
  claim: withLibrary(CLAIM_LUA),
  observe: withLibrary(OBSERVE_LUA),
  release: withLibrary(RELEASE_LUA),
  hold: withLibrary(HOLD_LUA),
  salt: SALT_LUA,
  park: withLibrary(PARK_LUA),
  take: withLibrary(TAKE_LUA),
} as const;

export type ScriptName = keyof typeof SCRIPTS;
