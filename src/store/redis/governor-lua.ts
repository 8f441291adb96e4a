/**
 * The rate governor (src/engine/governor/) ported to Lua, to run inside Redis as scripts: each
 * store operation is one script, so it is atomic for its scope across every process that shares
 * the Redis (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/).
 *
 * A FAITHFUL PORT: every function below mirrors the TypeScript function of the same name, line
 * for line, in the same order of arithmetic. Lua 5.1 numbers are IEEE doubles like JavaScript's,
 * so the same operations give the same bits; Math.round is ported as jsRound (ties toward +inf).
 * Numbers cross as text: states are written by encodeState with "%.17g" (which round-trips every
 * double) and read back by cjson (strtod), so no precision is lost on either side. The
 * differential property test (test/store/redis-differential.test.ts) runs the TypeScript governor
 * and these scripts side by side on random sequences against a real redis-server: when the
 * TypeScript governor changes, that test fails until this port follows.
 *
 * Conventions of the port: slot and in-flight tuples are Lua arrays ({atMs, seq, units},
 * {seq, leaseUntilMs}); JSON null is nil; indices are 1-based (a JS index i is i + 1 here, and the
 * JS "-1, none" is 0). Reasons are clipped to 300 characters by the TypeScript caller (clip counts
 * UTF-16 units, which Lua cannot), so they are stored as given here.
 *
 * What JSON cannot carry is not mirrored: the TypeScript store sends arguments as JSON, where NaN
 * and ±Infinity all become null, so a non-finite number given to the Redis store is read here as
 * absent (a latestStartMs as "no limit", a draw as none, an observation's instant as NaN, a wait or
 * a reset as not shown). Nor are three differences of a hand-edited key: cjson reads an empty JSON
 * object as an empty array and accepts NaN, Infinity and hex literals that JSON.parse rejects, and
 * a notBeforeReason longer than 300 UTF-16 units is kept whole (readState clips it).
 */

/** The state's codec: readState's checks (state.ts) and the JSON writer. */
const GOVERNOR_STATE_LUA = String.raw`
local type, ipairs = type, ipairs
local INF = math.huge
local MAX_EPOCH_MS = 8.64e15
local MAX_SLOTS = 256
local MAX_IN_FLIGHT = 1000
local UNKNOWN_WINDOW_RETAIN_MS = 60000
-- state.ts ROUNDING_MS: resets are given in whole seconds.
local ROUNDING_MS = 1000
local MAX_FIGURE = 1e12
local MAX_OTHERS_PER_MS = 1e6
local MAX_COUNT = 2 ^ 52
local MAX_SAFE_INTEGER = 2 ^ 53 - 1
local LIMIT_TYPES = { burst = true, quota = true, concurrency = true, cost = true, contention = true, server = true, permission = true, validation = true, none = true, unknown = true }
local CONCURRENCY = { unknown = true, shown = true, testing = true, inferred = true, silent = true, ["ruled-out"] = true }
-- state.ts LATE_CLAIM_MIN_MS: a claim started two round trips (and at least this) before a send reached the server first.
local LATE_CLAIM_MIN_MS = 100

-- JavaScript's Math.round: the nearest integer, ties toward +infinity (x - floor(x) is exact).
local function jsRound(x)
  local f = math.floor(x)
  if x - f >= 0.5 then return f + 1 end
  return f
end

local function clampTime(ms)
  if ms ~= ms then return 0 end
  if ms == INF then return MAX_EPOCH_MS end
  if ms == -INF then return 0 end
  return math.min(MAX_EPOCH_MS, math.max(0, jsRound(ms)))
end

-- state.ts windowIsGuessed: a window nothing showed (assumed, or lengthened since by a throttle).
local function windowIsGuessed(state)
  return state.windowSource == "assumed" or state.windowSource == "outlasted"
end

local function nn(value)
  if value == cjson.null then return nil end
  return value
end

-- A number that JSON carried, or NaN where it carried null (NaN and ±Infinity all become null).
local function numberOrNaN(value)
  if type(value) == "number" then return value end
  return 0 / 0
end

-- JavaScript's stable Array.prototype.sort with (a, b) => a[0] - b[0] || a[1] - b[1]: an insertion
-- sort is stable, so it gives the same order (and is linear on the nearly sorted log).
local function sortSlots(slots)
  for i = 2, #slots do
    local item = slots[i]
    local j = i - 1
    while j >= 1 and (slots[j][1] > item[1] or (slots[j][1] == item[1] and slots[j][2] > item[2])) do
      slots[j + 1] = slots[j]
      j = j - 1
    end
    slots[j + 1] = item
  end
end

-- ------------------------------------------------------------------ state.ts readState

-- A bounded range is finite and not NaN (every comparison with NaN is false): one test does both.
local floor = math.floor
local function isFiniteNumber(v) return type(v) == "number" and v > -INF and v < INF end
local function isTime(v) return type(v) == "number" and v >= 0 and v <= MAX_EPOCH_MS end
local function isCount(v) return type(v) == "number" and v >= 0 and v <= MAX_SAFE_INTEGER and v == floor(v) end
local function isSmallCount(v) return isCount(v) and v <= MAX_COUNT end
local function isUnits(v) return type(v) == "number" and v >= 0 and v < INF end
local function isPositive(v) return type(v) == "number" and v > 0 and v <= MAX_FIGURE end

-- Array.isArray for what cjson decoded: cjson gives a JSON object string keys only (its length is
-- 0), so a table with a length is an array; an empty one is taken for one (see the header).
local function isArray(t)
  return type(t) == "table" and (#t > 0 or next(t) == nil)
end

-- The decoded tuples are checked and kept in place (a new table per slot costs more than the checks).
local function readSlots(value)
  if not isArray(value) or #value > MAX_SLOTS * 4 then return nil end
  for _, item in ipairs(value) do
    if type(item) ~= "table" or #item ~= 3 or not isTime(item[1]) or not isCount(item[2]) or not isPositive(item[3]) then return nil end
    item[1] = jsRound(item[1])
  end
  sortSlots(value)
  return value
end

-- Returns ok and the anchor (nil: none).
local function readAnchor(value)
  if value == nil or value == cjson.null then return true, nil end
  if type(value) ~= "table" then return false end
  if not isFiniteNumber(value.remaining) or not isCount(value.seq) or not isTime(value.atMs) or not isTime(value.resetAtMs) then return false end
  local lateUnits = 0
  if isUnits(value.lateUnits) then lateUnits = value.lateUnits end
  local answeredAtMs = jsRound(value.atMs)
  if isTime(value.answeredAtMs) then answeredAtMs = jsRound(value.answeredAtMs) end
  local ownOutAtSend = 0
  if isSmallCount(value.ownOutAtSend) then ownOutAtSend = value.ownOutAtSend end
  local anchor = { remaining = math.max(0, value.remaining), seq = value.seq, atMs = jsRound(value.atMs), resetAtMs = jsRound(value.resetAtMs), lateUnits = lateUnits, answeredAtMs = answeredAtMs, ownOutAtSend = ownOutAtSend }
  -- state.ts readAnchor: the reset the reading itself showed, kept only where it differs from resetAtMs.
  if isTime(value.shownResetAtMs) and jsRound(value.shownResetAtMs) ~= anchor.resetAtMs then anchor.shownResetAtMs = jsRound(value.shownResetAtMs) end
  return true, anchor
end

local function readProbe(value)
  if type(value) ~= "table" then return nil end
  if isCount(value.seq) and isTime(value.atMs) and isTime(value.untilMs) then return { seq = value.seq, atMs = jsRound(value.atMs), untilMs = jsRound(value.untilMs) } end
  return nil
end

local function readInFlight(value)
  if not isArray(value) or #value > MAX_IN_FLIGHT then return nil end
  for _, item in ipairs(value) do
    if type(item) ~= "table" or (#item ~= 2 and #item ~= 3) or not isCount(item[1]) or not isTime(item[2]) then return nil end
    item[2] = jsRound(item[2])
    -- state.ts readInFlight: a pair written before the count at grant was kept has it unknown (0).
    if not (#item == 3 and isCount(item[3]) and item[3] <= MAX_IN_FLIGHT + 1) then item[3] = 0 end
  end
  return value
end

local NUMBER_CHECKS = {
  { "seq", isSmallCount }, { "lastGrantMs", isTime }, { "notBeforeMs", isTime }, { "throttleStreak", isSmallCount },
  { "okInWindow", isUnits }, { "windowStartMs", isTime }, { "learnedAtSeq", isCount }, { "rttMs", isTime },
  { "updatedAtMs", isTime }, { "unitsPerRequest", isPositive },
}

-- The checks readState makes before it builds a state: false when the value is not a state.
local function looksLikeState(v)
  for _, check in ipairs(NUMBER_CHECKS) do
    if not check[2](v[check[1]]) then return false end
  end
  for _, name in ipairs({ "limit", "windowMs", "inFlightCap" }) do
    if v[name] ~= cjson.null and not isPositive(v[name]) then return false end
  end
  if v.refill ~= "window" and v.refill ~= "fixed" and v.refill ~= "bucket" then return false end
  if v.windowSource ~= cjson.null and v.windowSource ~= "shown" and v.windowSource ~= "inferred" and v.windowSource ~= "assumed" and v.windowSource ~= "outlasted" then return false end
  return true
end

-- readState: a value written elsewhere (another version, a hand edit) is checked and cleaned as
-- the TypeScript side checks it, so that a state reads back the same on both; nil: start afresh.
local function readState(v)
  if type(v) ~= "table" or v.v ~= 1 then return nil end
  local slots = readSlots(v.slots)
  if slots == nil then return nil end
  local anchorOk, anchor = readAnchor(v.anchor)
  if not anchorOk or not looksLikeState(v) then return nil end
  local probe = nil
  if v.probe ~= cjson.null then
    probe = readProbe(v.probe)
    if probe == nil then return nil end
  end
  local inFlight = readInFlight(v.inFlight)
  if inFlight == nil then return nil end
  local reason = ""
  if type(v.notBeforeReason) == "string" then reason = v.notBeforeReason end
  local limitType = "unknown"
  if type(v.notBeforeType) == "string" and LIMIT_TYPES[v.notBeforeType] then limitType = v.notBeforeType end
  local othersPerMs = 0
  if isUnits(v.othersPerMs) and v.othersPerMs <= MAX_OTHERS_PER_MS then othersPerMs = v.othersPerMs end
  local reserveUnits = 0
  if isUnits(v.reserveUnits) and v.reserveUnits <= MAX_FIGURE then reserveUnits = v.reserveUnits end
  local concurrency = "unknown"
  if type(v.concurrency) == "string" and CONCURRENCY[v.concurrency] then concurrency = v.concurrency end
  local lastAnsweredAtMs = 0
  if isTime(v.lastAnsweredAtMs) then lastAnsweredAtMs = jsRound(v.lastAnsweredAtMs) end
  local lessonSentAtMs = 0
  if isTime(v.lessonSentAtMs) then lessonSentAtMs = jsRound(v.lessonSentAtMs) end
  local lessonSeq = 0
  if isCount(v.lessonSeq) then lessonSeq = v.lessonSeq end
  -- state.ts: a state written before the refill was counted is not counting.
  local budgetOnSuccess = v.budgetOnSuccess == true
  -- state.ts: a state written before estimated rates were probed is not probing.
  local probedFromWindowMs, pacedCleanUnits = 0, 0
  if isPositive(v.probedFromWindowMs) then probedFromWindowMs = jsRound(v.probedFromWindowMs) end
  if isUnits(v.pacedCleanUnits) and v.pacedCleanUnits <= MAX_FIGURE then pacedCleanUnits = v.pacedCleanUnits end
  local estimateProbeFailed = v.estimateProbeFailed == true
  local estimateFloorSeq = 0
  if isSmallCount(v.estimateFloorSeq) then estimateFloorSeq = v.estimateFloorSeq end
  -- state.ts: a state written before windows were tried shorter has no floor and no trial out.
  local windowFloorMs, trialSeq = 0, 0
  if isPositive(v.windowFloorMs) then windowFloorMs = jsRound(v.windowFloorMs) end
  if isSmallCount(v.trialSeq) then trialSeq = v.trialSeq end
  -- state.ts: a state written before counts with no reset were read as windows has none read.
  local countResetAtMs = 0
  if isTime(v.countResetAtMs) then countResetAtMs = jsRound(v.countResetAtMs) end
  local refillSinceMs, refillSeenUnits = 0, 0
  if isTime(v.refillSinceMs) and isFiniteNumber(v.refillSeenUnits) and math.abs(v.refillSeenUnits) <= MAX_FIGURE then
    refillSinceMs, refillSeenUnits = jsRound(v.refillSinceMs), v.refillSeenUnits
  end
  return {
    v = 1, seq = v.seq, lastGrantMs = jsRound(v.lastGrantMs), notBeforeMs = jsRound(v.notBeforeMs), notBeforeReason = reason, notBeforeType = limitType,
    limit = nn(v.limit), windowMs = nn(v.windowMs), windowSource = nn(v.windowSource), refill = v.refill, unitsPerRequest = v.unitsPerRequest,
    slots = slots, anchor = anchor, probe = probe, inFlight = inFlight, inFlightCap = nn(v.inFlightCap), inFlightCapGrows = v.inFlightCapGrows == true,
    throttleStreak = v.throttleStreak, breakerOpen = v.breakerOpen == true, okInWindow = v.okInWindow, windowStartMs = jsRound(v.windowStartMs),
    learnedAtSeq = v.learnedAtSeq, lessonSentAtMs = lessonSentAtMs, lessonSeq = lessonSeq, rttMs = v.rttMs, othersPerMs = othersPerMs, reserveUnits = reserveUnits, concurrency = concurrency, lastAnsweredAtMs = lastAnsweredAtMs,
    refillSinceMs = refillSinceMs, refillSeenUnits = refillSeenUnits, budgetOnSuccess = budgetOnSuccess,
    probedFromWindowMs = probedFromWindowMs, pacedCleanUnits = pacedCleanUnits, estimateProbeFailed = estimateProbeFailed, estimateFloorSeq = estimateFloorSeq,
    windowFloorMs = windowFloorMs, trialSeq = trialSeq, countResetAtMs = countResetAtMs, updatedAtMs = jsRound(v.updatedAtMs),
  }
end

-- Only these scripts write the scope keys; anything else found there (another version, a
-- hand-edited value) is read as readState reads it: malformed, the scope starts afresh.
local function decodeState(text)
  if not text then return nil end
  local ok, value = pcall(cjson.decode, text)
  if not ok then return nil end
  return readState(value)
end

local function emptyState(nowMs)
  return {
    v = 1, seq = 0, lastGrantMs = 0, notBeforeMs = 0, notBeforeReason = "", notBeforeType = "unknown",
    limit = nil, windowMs = nil, windowSource = nil, refill = "window", unitsPerRequest = 1,
    slots = {}, anchor = nil, probe = nil, inFlight = {}, inFlightCap = nil, inFlightCapGrows = false,
    throttleStreak = 0, breakerOpen = false, okInWindow = 0, windowStartMs = 0, learnedAtSeq = 0, lessonSentAtMs = 0, lessonSeq = 0,
    rttMs = 0, othersPerMs = 0, reserveUnits = 0, concurrency = "unknown", lastAnsweredAtMs = 0,
    refillSinceMs = 0, refillSeenUnits = 0, budgetOnSuccess = false, probedFromWindowMs = 0, pacedCleanUnits = 0, estimateProbeFailed = false, estimateFloorSeq = 0,
    windowFloorMs = 0, trialSeq = 0, countResetAtMs = 0, updatedAtMs = clampTime(nowMs),
  }
end

-- ------------------------------------------------------------------ the state's JSON writer

local function num(x)
  if x ~= x or x == INF or x == -INF then return "null" end
  if x == math.floor(x) and math.abs(x) < 1e15 then return string.format("%d", x) end
  return string.format("%.17g", x)
end

local function numOrNull(x)
  if x == nil then return "null" end
  return num(x)
end

local function strOrNull(s)
  if s == nil then return "null" end
  return cjson.encode(s)
end

local function bool(b)
  if b then return "true" end
  return "false"
end

local function encodeState(s)
  local slots = {}
  for i, t in ipairs(s.slots) do slots[i] = "[" .. num(t[1]) .. "," .. num(t[2]) .. "," .. num(t[3]) .. "]" end
  local inFlight = {}
  for i, f in ipairs(s.inFlight) do inFlight[i] = "[" .. num(f[1]) .. "," .. num(f[2]) .. "," .. num(f[3]) .. "]" end
  local anchor = "null"
  if s.anchor then
    local a = s.anchor
    anchor = '{"remaining":' .. num(a.remaining) .. ',"seq":' .. num(a.seq) .. ',"atMs":' .. num(a.atMs) .. ',"resetAtMs":' .. num(a.resetAtMs) .. ',"lateUnits":' .. num(a.lateUnits) .. ',"answeredAtMs":' .. num(a.answeredAtMs) .. ',"ownOutAtSend":' .. num(a.ownOutAtSend)
    if a.shownResetAtMs ~= nil then anchor = anchor .. ',"shownResetAtMs":' .. num(a.shownResetAtMs) end
    anchor = anchor .. "}"
  end
  local probe = "null"
  if s.probe then probe = '{"seq":' .. num(s.probe.seq) .. ',"atMs":' .. num(s.probe.atMs) .. ',"untilMs":' .. num(s.probe.untilMs) .. "}" end
  return '{"v":1,"seq":' .. num(s.seq) .. ',"lastGrantMs":' .. num(s.lastGrantMs) .. ',"notBeforeMs":' .. num(s.notBeforeMs)
    .. ',"notBeforeReason":' .. cjson.encode(s.notBeforeReason) .. ',"notBeforeType":' .. cjson.encode(s.notBeforeType)
    .. ',"limit":' .. numOrNull(s.limit) .. ',"windowMs":' .. numOrNull(s.windowMs) .. ',"windowSource":' .. strOrNull(s.windowSource)
    .. ',"refill":' .. cjson.encode(s.refill) .. ',"unitsPerRequest":' .. num(s.unitsPerRequest)
    .. ',"slots":[' .. table.concat(slots, ",") .. '],"anchor":' .. anchor .. ',"probe":' .. probe
    .. ',"inFlight":[' .. table.concat(inFlight, ",") .. '],"inFlightCap":' .. numOrNull(s.inFlightCap)
    .. ',"inFlightCapGrows":' .. bool(s.inFlightCapGrows) .. ',"throttleStreak":' .. num(s.throttleStreak)
    .. ',"breakerOpen":' .. bool(s.breakerOpen) .. ',"okInWindow":' .. num(s.okInWindow) .. ',"windowStartMs":' .. num(s.windowStartMs)
    .. ',"learnedAtSeq":' .. num(s.learnedAtSeq) .. ',"lessonSentAtMs":' .. num(s.lessonSentAtMs) .. ',"lessonSeq":' .. num(s.lessonSeq) .. ',"rttMs":' .. num(s.rttMs) .. ',"othersPerMs":' .. num(s.othersPerMs)
    .. ',"reserveUnits":' .. num(s.reserveUnits) .. ',"concurrency":' .. cjson.encode(s.concurrency) .. ',"lastAnsweredAtMs":' .. num(s.lastAnsweredAtMs)
    .. ',"refillSinceMs":' .. num(s.refillSinceMs) .. ',"refillSeenUnits":' .. num(s.refillSeenUnits) .. ',"budgetOnSuccess":' .. bool(s.budgetOnSuccess)
    .. ',"probedFromWindowMs":' .. num(s.probedFromWindowMs) .. ',"pacedCleanUnits":' .. num(s.pacedCleanUnits) .. ',"estimateProbeFailed":' .. bool(s.estimateProbeFailed) .. ',"estimateFloorSeq":' .. num(s.estimateFloorSeq)
    .. ',"windowFloorMs":' .. num(s.windowFloorMs) .. ',"trialSeq":' .. num(s.trialSeq) .. ',"countResetAtMs":' .. num(s.countResetAtMs) .. ',"updatedAtMs":' .. num(s.updatedAtMs) .. "}"
end

local function boundSlots(slots)
  -- state.ts boundSlotsInPlace: merge the two neighbours sent closest together (the smaller pair
  -- where gaps tie, the oldest where those tie too) at the later of their times, until MAX_SLOTS remain.
  if #slots <= MAX_SLOTS then return slots end
  local out = {}
  for k = 1, #slots do out[k] = slots[k] end
  while #out > MAX_SLOTS do
    local best, bestGap, bestUnits = 1, math.huge, math.huge
    for i = 1, #out - 1 do
      local gap = math.abs(out[i + 1][1] - out[i][1])
      local units = out[i][3] + out[i + 1][3]
      if gap < bestGap or (gap == bestGap and units < bestUnits) then
        best, bestGap, bestUnits = i, gap, units
        if gap == 0 and units <= 2 then break end
      end
    end
    local a, b = out[best], out[best + 1]
    out[best] = { math.max(a[1], b[1]), b[2], bestUnits }
    table.remove(out, best + 1)
  end
  return out
end
`;

/** model.ts: the earliest start a budget allows. */
const GOVERNOR_MODEL_LUA = String.raw`
local function unreflectedUnits(state, anchor)
  local units = anchor.lateUnits
  for _, slot in ipairs(state.slots) do
    if slot[2] > anchor.seq then units = units + slot[3] end
  end
  return units
end

local function contenders(state)
  return math.max(state.othersPerMs * math.max(1, state.rttMs), state.reserveUnits)
end

-- model.ts afterOthers: others take at most takenAtMostUnits (nil: no bound).
local function afterOthers(state, anchor, fromMs, available, takenAtMostUnits)
  local spentByOthers = 0
  if state.othersPerMs > 0 then spentByOthers = math.min(state.othersPerMs * math.max(0, fromMs - anchor.atMs), contenders(state)) end
  local taken = math.max(spentByOthers, state.reserveUnits)
  if takenAtMostUnits ~= nil then taken = math.min(takenAtMostUnits, taken) end
  return available - taken
end

local function spreadMs(state, draw)
  local rivals = contenders(state)
  if rivals <= 0 or draw == nil then return 0 end
  local unitMs
  if state.limit ~= nil and state.windowMs ~= nil then unitMs = state.windowMs / state.limit else unitMs = math.max(10, state.rttMs) end
  return jsRound(draw * rivals * unitMs)
end

-- model.ts bucketFullAtMs: when the bucket would be full again (GCRA's theoretical arrival time).
local function bucketFullAtMs(state, anchor, limit, perMs)
  local fullAtMs = anchor.atMs + (limit - anchor.remaining + anchor.lateUnits) / perMs
  for _, slot in ipairs(state.slots) do
    if slot[2] > anchor.seq then fullAtMs = math.max(fullAtMs, slot[1]) + slot[3] / perMs end
  end
  return fullAtMs
end

local function fromBucket(state, anchor, fromMs, units, limit, windowMs, draw)
  local perMs = limit / windowMs
  local fullAtMs = bucketFullAtMs(state, anchor, limit, perMs)
  local tokens = math.min(limit, limit - (fullAtMs - fromMs) * perMs)
  -- model.ts fromBucket: others take no more than a full bucket leaves us a request's units of.
  local left = afterOthers(state, anchor, fromMs, tokens, math.max(0, limit - units))
  if left >= units then return fromMs end
  return math.ceil(fromMs + (units - left) / perMs + spreadMs(state, draw))
end

local function isInFlight(state, seq)
  for _, f in ipairs(state.inFlight) do
    if f[1] == seq then return true end
  end
  return false
end

-- Returns first, last (1-based; last 0: none) and ownUnits. model.ts heldSlots: with skipLate,
-- claims still out that were late for the reading (up to anchor.lateUnits) are passed over.
local function heldSlots(state, anchor, skipLate)
  local slots = state.slots
  local last = 0
  for i = #slots, 1, -1 do
    if slots[i][2] <= anchor.seq then
      last = i
      break
    end
  end
  if last == 0 then return 1, 0, 0 end
  local counted
  if state.limit == nil then counted = INF else counted = state.limit - anchor.remaining end
  local lateLeft = 0
  if skipLate then lateLeft = anchor.lateUnits end
  local first = last + 1
  local ownUnits = 0
  while first > 1 and counted > 0 do
    first = first - 1
    local slot = slots[first]
    if lateLeft >= slot[3] and slot[2] < anchor.seq and isInFlight(state, slot[2]) then
      lateLeft = lateLeft - slot[3]
    else
      counted = counted - slot[3]
      ownUnits = ownUnits + slot[3]
    end
  end
  return first, last, ownUnits
end

local function fromAnchor(state, anchor, fromMs, units, draw)
  local available = afterOthers(state, anchor, fromMs, anchor.remaining - unreflectedUnits(state, anchor))
  if available >= units then return fromMs end
  local windowMs = state.windowMs
  if state.refill ~= "window" or windowMs == nil then return nil end
  local first, last = heldSlots(state, anchor, true)
  for i = first, last do
    local slot = state.slots[i]
    local freeAtMs = slot[1] + windowMs
    if anchor.resetAtMs > 0 and freeAtMs >= anchor.resetAtMs then return nil end
    available = available + slot[3]
    if available >= units then return math.max(fromMs, freeAtMs + spreadMs(state, draw)) end
  end
  return nil
end

-- model.ts fromLearnedBucket: one unit every windowMs / limit after the last start.
local function fromLearnedBucket(state, fromMs, limit, windowMs)
  local last = state.slots[#state.slots]
  if not last then return fromMs end
  return math.max(fromMs, math.ceil(last[1] + (last[3] * windowMs) / limit))
end

-- model.ts SHOWN_WINDOW_EDGE_MS: a unit still unanswered is counted 1 ms past a shown window.
local SHOWN_WINDOW_EDGE_MS = 1

local function fromOwnLog(state, fromMs, units, limit, windowMs)
  local slots = state.slots
  local edgeMs = 0
  if state.windowSource == "shown" then edgeMs = SHOWN_WINDOW_EDGE_MS end
  local function leavesAtMs(slot)
    if edgeMs > 0 then
      for _, f in ipairs(state.inFlight) do
        if f[1] == slot[2] then return slot[1] + windowMs + edgeMs end
      end
    end
    return slot[1] + windowMs
  end
  local used = 0
  local first = #slots + 1
  local i = #slots
  while i >= 1 and slots[i][1] > fromMs - windowMs - edgeMs do
    local slot = slots[i]
    if slot[1] + windowMs > fromMs or leavesAtMs(slot) > fromMs then used = used + slot[3] end
    first = i
    i = i - 1
  end
  if limit - used >= units then return fromMs end
  local leftAtMs = fromMs
  for j = first, #slots do
    local slot = slots[j]
    local slotLeavesAtMs = leavesAtMs(slot)
    if slotLeavesAtMs > fromMs then
      used = used - slot[3]
      leftAtMs = math.max(leftAtMs, slotLeavesAtMs)
      if limit - used >= units then return leftAtMs end
    end
  end
  local lastSlot = slots[#slots]
  if lastSlot then return math.max(fromMs, leavesAtMs(lastSlot)) end
  return math.max(fromMs, fromMs)
end

-- model.ts unitsInWindow: units of our starts in the fixed window that begins at windowStartMs.
local function unitsInWindow(state, windowStartMs)
  local used = 0
  local i = #state.slots
  -- model.ts RESET_DRIFT_MS: a start this close before the window's reset may be counted in it.
  while i >= 1 and state.slots[i][1] >= windowStartMs - 100 do
    used = used + state.slots[i][3]
    i = i - 1
  end
  return used
end

-- model.ts windowKindUntold: a fixed window's count not yet told from one of requests in flight, and tellable.
local function windowKindUntold(state, anchor, limit)
  return state.concurrency == "unknown" and limit >= 2 and anchor.resetAtMs > 0 and state.unitsPerRequest == 1 and state.othersPerMs == 0 and state.reserveUnits == 0
end

-- model.ts keepsLastUnitForTest: the window's last unit waits until one of its claims has answered.
local function keepsLastUnitForTest(state, windowStartMs, used, units, limit)
  if limit - used ~= units or used == 0 then return false end
  local out = {}
  for _, f in ipairs(state.inFlight) do out[f[1]] = true end
  local i = #state.slots
  while i >= 1 and state.slots[i][1] >= windowStartMs - 100 do
    if not out[state.slots[i][2]] then return false end
    i = i - 1
  end
  return true
end

local function afterReset(state, anchor, fromMs, units)
  local windowMs = state.windowMs
  local limit = nil
  if state.limit ~= nil then limit = math.max(units, state.limit - math.ceil(state.reserveUnits)) end
  if limit ~= nil and windowMs ~= nil and state.refill == "fixed" then
    -- model.ts afterReset: the fixed window fromMs falls in, laid end to end from the reset.
    local startMs = anchor.resetAtMs + math.floor((fromMs - anchor.resetAtMs) / windowMs) * windowMs
    local used = unitsInWindow(state, startMs)
    if limit - used < units then return { atMs = startMs + windowMs, why = "fixed window: the limit is back at each reset" } end
    if windowKindUntold(state, anchor, limit) and keepsLastUnitForTest(state, startMs, used, units, limit) then
      return { answersDue = true, atMs = fromMs, why = "fixed window: its last unit waits for an answer, which tells a window from a limit on requests in flight" }
    end
    return { atMs = fromMs, why = "fixed window: the limit is back at each reset" }
  end
  if limit ~= nil and windowMs ~= nil then
    local atMs = fromOwnLog(state, fromMs, units, limit, windowMs)
    local why = "own log: room in the last window"
    if atMs > fromMs then why = "own log: waits for units to leave the last window" end
    return { atMs = atMs, why = why }
  end
  return { probeWanted = true, atMs = fromMs, why = "after the server's reset: one request learns the new budget" }
end

local function withReset(anchor, resetAtMs)
  return { remaining = anchor.remaining, seq = anchor.seq, atMs = anchor.atMs, resetAtMs = resetAtMs, lateUnits = anchor.lateUnits }
end

-- model.ts answersMayFree: units held back for claims sent within two round trips, whose answers are due.
local function roundTripMs(state)
  if state.rttMs > 0 then return state.rttMs end
  return 100
end

-- model.ts unitsAnswersDue: units of claims sent within two round trips and still out, granted before or after the reading's.
local function unitsAnswersDue(state, fromMs, anchorSeq, side)
  local sinceMs = fromMs - 2 * roundTripMs(state)
  local units = 0
  for i = #state.slots, 1, -1 do
    local slot = state.slots[i]
    if slot[1] <= sinceMs then break end
    local onSide
    if side == "before" then onSide = slot[2] < anchorSeq else onSide = slot[2] > anchorSeq end
    if slot[1] <= fromMs and onSide then
      for _, f in ipairs(state.inFlight) do
        if f[1] == slot[2] then units = units + slot[3]; break end
      end
    end
  end
  return units
end

local function answersMayFree(state, anchor, fromMs, units)
  local answering = unitsAnswersDue(state, fromMs, anchor.seq, "before")
  return answering > 0 and afterOthers(state, anchor, fromMs, anchor.remaining - unreflectedUnits(state, anchor) + math.min(answering, anchor.lateUnits)) >= units
end

-- model.ts answersMayTellKind: the next fixed window waits for answers due to claims sent since the reading.
local function answersMayTellKind(state, anchor, fromMs)
  return state.refill == "fixed" and unitsAnswersDue(state, fromMs, anchor.seq, "after") > 0
end

-- model.ts windowTrialAtMs: a window learned from throttles alone, tried at the middle of its bounds.
local WINDOW_TRIAL_WHY = "a window learned from throttles alone may be shorter: one request tries the next window early, the others wait for its answer"
local WINDOW_TRIAL_MIN_GAIN_RTTS = 2
local WINDOW_TRIAL_MAX_LIMIT = 128

local function windowTrialAtMs(state, fromMs, units, limit, windowMs, regularAtMs)
  local floorMs = state.windowFloorMs
  if floorMs <= 0 or floorMs >= windowMs or state.windowSource ~= "inferred" or state.refill ~= "window" or state.trialSeq ~= 0 or limit > WINDOW_TRIAL_MAX_LIMIT then return nil end
  if regularAtMs <= fromMs then return nil end
  local midMs = math.ceil((floorMs + windowMs) / 2)
  local gainMs = windowMs - midMs
  -- model.ts WINDOW_TRIAL_MIN_GAIN_SHARE (inline: the queue script that includes this chunk is at Lua's 200 locals): nor under a twentieth of the window.
  if gainMs <= math.max(WINDOW_TRIAL_MIN_GAIN_RTTS * roundTripMs(state), windowMs * 0.05) then return nil end
  local trialAtMs = fromOwnLog(state, fromMs, units, limit, midMs)
  if trialAtMs <= regularAtMs - gainMs / 2 then return trialAtMs end
  return nil
end

local function earliestStart(state, fromMs, units, draw)
  local anchor = state.anchor
  local limit = state.limit
  local windowMs = state.windowMs
  if anchor and state.refill == "bucket" and limit ~= nil and windowMs ~= nil then
    local atMs = fromBucket(state, anchor, fromMs, units, limit, windowMs, draw)
    local why = "bucket: the units are there"
    if atMs > fromMs then why = "bucket: waits for the units to be restored" end
    return { atMs = atMs, why = why }
  end
  local resetAtMs = 0
  if anchor then
    if anchor.resetAtMs ~= 0 then resetAtMs = anchor.resetAtMs
    elseif windowMs ~= nil then resetAtMs = anchor.atMs + windowMs end
  end
  if anchor and (resetAtMs == 0 or fromMs < resetAtMs) then
    local reading = anchor
    if resetAtMs ~= anchor.resetAtMs then reading = withReset(anchor, resetAtMs) end
    local atMs = fromAnchor(state, reading, fromMs, units, draw)
    if atMs ~= nil then
      local why = "the server's count allows it"
      if atMs > fromMs then why = "the server's count: waits for units to leave the window" end
      return { atMs = atMs, why = why }
    end
    if resetAtMs == 0 then return { probeWanted = true, atMs = fromMs, why = "the budget is spent and the server shows neither reset nor window: one request probes" } end
    local nextStart = afterReset(state, reading, resetAtMs, units)
    if nextStart.atMs - fromMs > 2 * roundTripMs(state) and answersMayFree(state, reading, fromMs, units) then
      return { answersDue = true, atMs = nextStart.atMs, why = "answers still out may show units free before the reset: asking again when they are in" }
    end
    if nextStart.atMs - fromMs > 2 * roundTripMs(state) and answersMayTellKind(state, reading, fromMs) then
      return { answersDue = true, atMs = nextStart.atMs, why = "fixed window: answers still out may show it is none, before its next window is granted" }
    end
    return nextStart
  end
  if anchor then return afterReset(state, withReset(anchor, resetAtMs), fromMs, units) end
  if limit ~= nil and windowMs ~= nil and state.refill == "bucket" then return { atMs = fromLearnedBucket(state, fromMs, limit, windowMs), why = "learned rate: one unit at a time" } end
  if limit ~= nil and windowMs ~= nil then
    local atMs = fromOwnLog(state, fromMs, units, limit, windowMs)
    local trialAtMs = windowTrialAtMs(state, fromMs, units, limit, windowMs, atMs)
    if trialAtMs ~= nil then return { probeWanted = true, trial = true, atMs = trialAtMs, why = WINDOW_TRIAL_WHY } end
    return { atMs = atMs, why = "own log: learned limit per window" }
  end
  return { atMs = fromMs, why = "no budget known: slow start" }
end
`;

/** claim.ts: pruning, granting, holding and releasing slots. */
const GOVERNOR_CLAIM_LUA = String.raw`
local function rttOr100(state)
  if state.rttMs == 0 then return 100 end
  return state.rttMs
end

local function recheckMs(state)
  return math.min(1000, math.max(10, jsRound(rttOr100(state) / 2)))
end

local function isCold(state)
  return state.anchor == nil and state.limit == nil and state.inFlightCap == nil and state.windowMs == nil
end

local function filterSlots(slots, keep)
  local out = {}
  for _, s in ipairs(slots) do
    if keep(s) then out[#out + 1] = s end
  end
  return out
end

-- The JS index (0-based) of the first slot that passes, or -1.
local function findIndex(slots, test)
  for i, s in ipairs(slots) do
    if test(s) then return i - 1 end
  end
  return -1
end

local function pruneLeases(state, nowMs)
  local expired = false
  for _, f in ipairs(state.inFlight) do
    if f[2] <= nowMs then
      expired = true
      break
    end
  end
  if expired then state.inFlight = filterSlots(state.inFlight, function(f) return f[2] > nowMs end) end
  if state.probe and state.probe.untilMs <= nowMs then state.probe = nil end
  -- claim.ts prune: a trial whose lease ran out unanswered tried nothing.
  if state.trialSeq ~= 0 then
    local out = false
    for _, f in ipairs(state.inFlight) do
      if f[1] == state.trialSeq then out = true; break end
    end
    if not out then state.trialSeq = 0 end
  end
end

local function prune(state, nowMs)
  pruneLeases(state, nowMs)
  local anchor = state.anchor
  local n = #state.slots
  -- firstKept: how many of the oldest slots go (the JS index of the first one kept).
  local firstKept
  if not anchor and state.limit == nil then
    -- claim.ts prune: in a slow start the answered slots of the last minute stay too (the lesson
    -- places its units at their own sends).
    local out = {}
    for _, f in ipairs(state.inFlight) do out[f[1]] = true end
    local keepAfterMs = math.huge
    if state.inFlightCapGrows then keepAfterMs = nowMs - UNKNOWN_WINDOW_RETAIN_MS end
    state.slots = boundSlots(filterSlots(state.slots, function(s) return s[1] > keepAfterMs or out[s[2]] == true end))
    return
  elseif anchor and state.refill ~= "fixed" then
    local keepsHeld = state.refill == "window" and state.limit ~= nil and (state.windowMs ~= nil or state.limit <= MAX_SLOTS)
    if keepsHeld then
      local first = heldSlots(state, anchor, true)
      firstKept = first - 1
    else
      firstKept = findIndex(state.slots, function(s) return s[2] > anchor.seq end)
    end
    if firstKept < 0 then firstKept = n end
  else
    -- A second more than the window: ownStartsFillWindow reads where a throttle was counted through whole-second resets.
    local keepAfterMs = nowMs - (state.windowMs or UNKNOWN_WINDOW_RETAIN_MS) - ROUNDING_MS
    firstKept = findIndex(state.slots, function(s) return s[1] > keepAfterMs or (anchor ~= nil and s[2] > anchor.seq) end)
    if firstKept < 0 then firstKept = n end
  end
  if firstKept == 0 then
    state.slots = boundSlots(state.slots)
  else
    local kept = {}
    for i = firstKept + 1, n do kept[#kept + 1] = state.slots[i] end
    state.slots = boundSlots(kept)
  end
end

-- concurrency.ts holdsConcurrency: the scope holds a concurrency limit (an in-flight cap, no window).
local function holdsConcurrency(state)
  return state.concurrency == "shown" or state.concurrency == "testing" or state.concurrency == "inferred" or state.concurrency == "silent"
end

-- concurrency.ts inferenceHeld: a concurrency limit read from the count (under test or tested).
local function inferenceHeld(state)
  return state.concurrency == "testing" or state.concurrency == "inferred"
end

-- concurrency.ts startedBy: claims of ours still unanswered that had started by atMs.
local function startedBy(state, atMs, leaseMs)
  local started = 0
  for _, f in ipairs(state.inFlight) do
    if f[2] - leaseMs <= atMs then started = started + 1 end
  end
  return started
end

-- claim.ts startsRevisable: starts laid from a reading the answers still coming in may revise
-- (an estimated bucket rate while the count is shown; a fixed window not yet told from a concurrency limit).
local function startsRevisable(state)
  local anchor = state.anchor
  if anchor == nil then return false end
  if state.refill == "bucket" and state.windowSource == "inferred" then return true end
  return state.refill == "fixed" and state.limit ~= nil and windowKindUntold(state, anchor, state.limit)
end

local function grant(state, atMs, units, probe, why, options)
  local seq = state.seq + 1
  local startMs = clampTime(atMs)
  state.seq = seq
  state.lastGrantMs = math.max(state.lastGrantMs, startMs)
  -- claim.ts insertSlot: slots stay ascending by start; an earlier start goes in its place.
  local at = #state.slots + 1
  while at > 1 and state.slots[at - 1][1] > startMs do at = at - 1 end
  table.insert(state.slots, at, { startMs, seq, units })
  if #state.slots > MAX_SLOTS then state.slots = boundSlots(state.slots) end
  state.inFlight[#state.inFlight + 1] = { seq, clampTime(startMs + options.leaseMs), #state.inFlight + 1 }
  if probe then state.probe = { seq = seq, atMs = startMs, untilMs = clampTime(startMs + options.leaseMs) } end
  return { kind = "go", atMs = startMs, seq = seq, probe = probe, revisable = startsRevisable(state), why = why }
end

-- claim.ts probeOverdueMs: a probe this late is taken as lost, though its lease runs on.
local function probeOverdueMs(state)
  return math.max(2000, 10 * rttOr100(state))
end

-- claim.ts probeAnsweredByReading (inline: the chunk is at Lua's 200 locals): a reading whose reset lies
-- past a reset probe's start, with room left, answers what the probe was sent to learn.
local function heldByProbe(state, nowMs, units)
  local probe, anchor = state.probe, state.anchor
  if not probe or probe.untilMs <= nowMs or nowMs >= probe.atMs + probeOverdueMs(state) then return nil end
  if anchor ~= nil and anchor.seq ~= probe.seq and anchor.resetAtMs > probe.atMs and not state.breakerOpen and state.trialSeq ~= probe.seq
    and not holdsConcurrency(state) and not (state.refill == "bucket" and state.windowSource == "inferred")
    and anchor.remaining - unreflectedUnits(state, anchor) >= units then return nil end
  local answerExpectedMs = math.max(nowMs, state.probe.atMs + rttOr100(state))
  return { kind = "wait", untilMs = math.min(state.probe.untilMs, answerExpectedMs + recheckMs(state)), why = "one request is probing the scope; the others wait for its answer" }
end

-- claim.ts waitForAnAnswer: ask again at the first lease's end, or sooner; no sooner than the first
-- of the claims out (their starts may be ahead) can have answered.
local function waitForAnAnswer(state, nowMs, why)
  local leaseEndMs = INF
  local firstStartMs = INF
  for _, f in ipairs(state.inFlight) do
    leaseEndMs = math.min(leaseEndMs, f[2])
    local startMs = nowMs
    for _, slot in ipairs(state.slots) do
      if slot[2] == f[1] then
        startMs = slot[1]
        break
      end
    end
    firstStartMs = math.min(firstStartMs, startMs)
  end
  local answerExpectedMs = math.max(nowMs, firstStartMs + roundTripMs(state))
  return { kind = "wait", untilMs = math.min(leaseEndMs, answerExpectedMs + recheckMs(state)), why = why }
end

local function heldByInFlightCap(state, nowMs)
  if state.inFlightCap == nil or #state.inFlight < state.inFlightCap then return nil end
  return waitForAnAnswer(state, nowMs, string.format("%d request(s) in flight, the most this scope takes at once for now", #state.inFlight))
end

local CONCURRENCY_TEST_WHY = "the count came back as a concurrency limit's does: one request, sent with the others answered, tests it"

-- claim.ts countAllowsEitherWay: what the latest count read under test still allows after the claims since.
local function countAllowsEitherWay(state, units)
  return state.anchor ~= nil and state.anchor.remaining - unreflectedUnits(state, state.anchor) >= units
end

-- claim.ts heldForConcurrencyTest: the test goes with at most half the limit of ours due to answer (itself included).
local function heldForConcurrencyTest(state, nowMs)
  local dueFromMs = nowMs - math.max(2 * state.rttMs, LATE_CLAIM_MIN_MS)
  local due = 0
  for _, f in ipairs(state.inFlight) do
    for _, s in ipairs(state.slots) do
      if s[2] == f[1] then
        if s[1] >= dueFromMs and s[1] <= nowMs then due = due + 1 end
        break
      end
    end
  end
  if due + 1 <= math.max(1, math.floor((state.inFlightCap or 1) / 2)) then return nil end
  return waitForAnAnswer(state, nowMs, "the count came back as a concurrency limit's does: the answers still due come before the request that tests it")
end

-- claim.ts heldByLessonOut: a start laid more than an answer time ahead from a lesson (no count
-- shown) whose claims are still out waits for their answers.
local function heldByLessonOut(state, nowMs, atMs)
  if state.concurrency ~= "unknown" or state.anchor ~= nil or state.limit == nil or state.lessonSeq == 0 then return nil end
  if atMs - nowMs <= rttOr100(state) then return nil end
  local out = false
  for _, f in ipairs(state.inFlight) do
    if f[1] > state.lessonSeq and f[1] <= state.learnedAtSeq then out = true end
  end
  if not out then return nil end
  return { kind = "wait", untilMs = nowMs + recheckMs(state), why = "the claims out at the last throttle have not all answered: the rate it taught may still change" }
end

-- claim.ts heldByBucketSize: a bucket takes no more requests in flight at a start than it holds
-- (ours sent and unanswered, and those granted within two round trips before that start).
local function heldByBucketSize(state, nowMs, atMs, leaseMs)
  if state.refill ~= "bucket" or state.limit == nil then return nil end
  local sizeRequests = math.max(1, math.floor(state.limit / state.unitsPerRequest))
  local rttMs = rttOr100(state)
  local out = 0
  for _, f in ipairs(state.inFlight) do
    local startMs = f[2] - leaseMs
    if startMs <= atMs and (startMs <= nowMs or startMs >= atMs - 2 * rttMs) then out = out + 1 end
  end
  if out < sizeRequests then return nil end
  return waitForAnAnswer(state, nowMs, string.format("%d request(s) in flight at that start, as many as the bucket holds", out))
end

-- claim.ts beyondNextWindow: a start more than a window ahead is not reserved yet in a fixed window, or an assumed one.
-- claim.ts ESTIMATED_HORIZON_UNITS: an estimated bucket rate grants starts this many units' spacing
-- ahead, and at most ESTIMATED_HORIZON_MAX_MS (unless four answer times are longer).
local ESTIMATED_HORIZON_UNITS = 2
local ESTIMATED_HORIZON_MAX_MS = 2000

-- claim.ts SENIORITY_SHARE, SENIORITY_SCALE: the horizon grows with the time a request has waited.
local SENIORITY_SHARE = 0.25
local SENIORITY_SCALE = 10

local function beyondNextWindow(state, nowMs, atMs, waitedMs)
  local windowMs = state.windowMs
  if windowMs ~= nil and state.limit ~= nil and state.refill == "bucket" and state.windowSource == "inferred" then
    local baseMs = jsRound(math.max(math.min(ESTIMATED_HORIZON_UNITS * (windowMs / state.limit), ESTIMATED_HORIZON_MAX_MS), 4 * state.rttMs))
    local seniorityMs = 0
    if waitedMs > 0 then seniorityMs = (SENIORITY_SHARE * baseMs * waitedMs) / (waitedMs + SENIORITY_SCALE * baseMs) end
    local horizonMs = jsRound(baseMs + seniorityMs)
    if atMs - nowMs <= horizonMs then return nil end
    return { kind = "wait", untilMs = atMs - horizonMs, why = "estimated rate: a start far ahead is claimed when it is near, at the rate known then" }
  end
  if windowMs == nil or atMs - nowMs <= windowMs then return nil end
  local kind = nil
  if state.refill == "fixed" then
    kind = "fixed window"
  elseif windowIsGuessed(state) then
    kind = "assumed window"
  elseif state.windowSource == "inferred" then
    kind = "inferred window"
  end
  if kind == nil then return nil end
  return { kind = "wait", untilMs = atMs - windowMs, why = kind .. ": a start more than a window ahead is claimed when it is a window away" }
end

local function claimInPlace(state, request, options)
  local nowMs = clampTime(request.nowMs)
  state.updatedAtMs = nowMs
  prune(state, nowMs)
  local units = request.units
  if not isPositive(units) then units = state.unitsPerRequest end
  local concurrent = holdsConcurrency(state)
  local floorMs = math.max(nowMs, state.notBeforeMs, state.lastGrantMs)
  if concurrent then floorMs = math.max(nowMs, state.notBeforeMs) end
  local function defer(atMs, why)
    local limitType = "burst"
    if atMs == state.notBeforeMs then limitType = state.notBeforeType end
    return { kind = "defer", notBeforeMs = atMs, why = why, limitType = limitType }
  end
  if state.notBeforeMs > request.latestStartMs then
    local why = state.notBeforeReason
    if why == "" then why = "the server's wait" end
    return defer(state.notBeforeMs, why)
  end
  local held = heldByProbe(state, nowMs, units)
  if held then return held end
  if isCold(state) or state.breakerOpen then
    if floorMs > request.latestPacedStartMs then return defer(floorMs, "the slots already granted in this scope reach past the latest start") end
    local why = "first request of a cold scope: it learns the budget before the rest go"
    if state.breakerOpen then why = "the breaker is open: one request probes before the rest go" end
    return grant(state, floorMs, units, true, why, options)
  end
  local capped = heldByInFlightCap(state, nowMs)
  if capped then return capped end
  if concurrent then
    if floorMs > request.latestStartMs then
      local why = state.notBeforeReason
      if why == "" then why = "the server's wait" end
      return defer(floorMs, why)
    end
    if state.concurrency == "testing" and not countAllowsEitherWay(state, units) then
      state.anchor = nil
      local untested = heldForConcurrencyTest(state, nowMs)
      if untested then return untested end
      return grant(state, floorMs, units, true, CONCURRENCY_TEST_WHY, options)
    end
    local cap = state.inFlightCap or 1
    return grant(state, floorMs, units, false, string.format("a concurrency limit: fewer than %d requests in flight", cap), options)
  end
  local draw = request.random
  if draw ~= nil and not (draw >= 0 and draw < 1) then draw = nil end
  local earliest = earliestStart(state, floorMs, units, draw)
  if earliest.answersDue then return { kind = "wait", untilMs = nowMs + recheckMs(state), why = earliest.why } end
  -- claim.ts probeAtToldWaitMs: an estimated rate that would start later than a throttle's told wait sends one request then.
  local toldMs = state.countResetAtMs
  if state.refill == "bucket" and state.windowSource == "inferred" and state.budgetOnSuccess and state.anchor ~= nil and toldMs > state.anchor.atMs then
    local toldAtMs = math.max(nowMs, state.notBeforeMs, toldMs)
    if earliest.atMs > toldAtMs and toldAtMs <= request.latestPacedStartMs then
      return grant(state, toldAtMs, units, true, "an estimated rate, and the server's wait says it admits sooner: one request reads its count then", options)
    end
  end
  -- claim.ts PACED_PAST_LATEST_WHY: a paced turn past the latest start says so first.
  if earliest.atMs > request.latestPacedStartMs then return defer(earliest.atMs, "the scope's pacing gives its next turn after this request's latest start (" .. earliest.why .. ")") end
  local lessonOut = heldByLessonOut(state, nowMs, earliest.atMs)
  if lessonOut then return lessonOut end
  local full = heldByBucketSize(state, nowMs, earliest.atMs, options.leaseMs)
  if full then return full end
  -- claim.ts: a wait that is not a number of ms (negative, infinite) is none.
  local waitedMs = 0
  if isPositive(request.waitedMs) then waitedMs = request.waitedMs end
  local beyond = beyondNextWindow(state, nowMs, earliest.atMs, waitedMs)
  if beyond then return beyond end
  local result = grant(state, earliest.atMs, units, earliest.probeWanted == true, earliest.why, options)
  if earliest.probeWanted == true and earliest.trial == true then state.trialSeq = result.seq end
  return result
end

local function release(state, seq)
  state.slots = filterSlots(state.slots, function(s) return s[2] ~= seq end)
  state.inFlight = filterSlots(state.inFlight, function(f) return f[1] ~= seq end)
  if state.probe and state.probe.seq == seq then state.probe = nil end
  if state.trialSeq == seq then state.trialSeq = 0 end
  local latest = 0
  for _, s in ipairs(state.slots) do latest = math.max(latest, s[1]) end
  state.lastGrantMs = latest
end

-- claim.ts claimAgain: a held grant is kept unless an earlier start can be granted now; one the
-- state no longer counts is claimed afresh. Returns the answer and the state to save (a kept
-- grant's is untouched and not saved).
local function claimAgain(state, request, held, options)
  local counted = false
  for _, s in ipairs(state.slots) do
    if s[2] == held.seq then counted = true end
  end
  if not counted then
    release(state, held.seq)
    return claimInPlace(state, request, options), state
  end
  local trial = decodeState(encodeState(state))
  release(trial, held.seq)
  local r = claimInPlace(trial, request, options)
  if held.atMs < math.max(clampTime(request.nowMs), state.notBeforeMs) or held.atMs > request.latestPacedStartMs or state.notBeforeMs > request.latestStartMs then return r, trial end
  if r.kind == "go" and r.atMs < held.atMs then return r, trial end
  local probe = state.probe ~= nil and state.probe.seq == held.seq
  return { kind = "go", atMs = held.atMs, seq = held.seq, probe = probe, revisable = startsRevisable(state), why = "the start already granted is still the earliest", kept = true }, state
end
`;

/** observe.ts: learning from answers; and index.ts holdUntil. */
const GOVERNOR_OBSERVE_LUA = String.raw`
local FULL_REFILL_TOLERANCE = 0.02
-- state.ts fullRefillToleranceUnits: a count this short of the limit still reads as back in full.
local function fullRefillToleranceUnits(limit) return math.max(1, math.ceil(limit * FULL_REFILL_TOLERANCE)) end
local OTHERS_SMOOTHING = 0.3
local DECREASE = 0.8
local DEFAULT_LEARNED_WINDOW_MS = 1000
local LEFT_UNITS_MARGIN = 0.01

local function figureOrNull(value)
  if isPositive(value) then return value end
  return nil
end

-- The observation as the scripts receive it (JSON nulls already nil), made what a state can keep.
local function checked(o, state)
  local seq = 0
  if isCount(o.seq) and o.seq <= state.seq then seq = o.seq end
  local nowMs = clampTime(numberOrNaN(o.nowMs))
  local sentAtMs = math.min(clampTime(numberOrNaN(o.sentAtMs)), nowMs)
  local budget = o.budget
  local shown = nil
  if budget and isFiniteNumber(budget.remaining) then
    shown = {
      remaining = math.min(MAX_FIGURE, math.max(0, budget.remaining)),
      limit = figureOrNull(budget.limit),
      resetAtMs = budget.resetAtMs,
      windowMs = figureOrNull(budget.windowMs),
      policyWindowMs = figureOrNull(budget.policyWindowMs),
      restorePerSecond = figureOrNull(budget.restorePerSecond),
      restoreEstimated = budget.restoreEstimated == true,
      restoreFloorPerSecond = figureOrNull(budget.restoreFloorPerSecond),
      unitsPerRequest = figureOrNull(budget.unitsPerRequest),
      concurrent = budget.concurrent == true,
      resetCountsDown = budget.resetCountsDown == true,
    }
  end
  return {
    seq = seq, sentAtMs = sentAtMs, nowMs = nowMs, kind = o.kind, limitType = o.limitType, waitMs = o.waitMs,
    waitFromServer = o.waitFromServer, waitResolutionMs = o.waitResolutionMs, budget = shown, reason = o.reason, counted = o.counted,
  }
end

local function applyShape(state, budget)
  if budget.unitsPerRequest ~= nil then state.unitsPerRequest = budget.unitsPerRequest end
  if budget.limit ~= nil then state.limit = budget.limit end
  local bucketWindowMs = nil
  if budget.restorePerSecond ~= nil and state.limit ~= nil then bucketWindowMs = math.max(1, jsRound((state.limit / budget.restorePerSecond) * 1000)) end
  -- observe.ts: a count that came back as a window's (count-window.ts) is no bucket at the estimated rate.
  if budget.restoreEstimated and state.refill ~= "bucket" and state.countResetAtMs > 0 then return end
  if bucketWindowMs ~= nil and bucketWindowMs <= MAX_FIGURE and budget.restoreEstimated then
    -- observe.ts: a documented rate is an estimate; a window the count proved shorter stays.
    local provenMs = nil
    if state.refill == "bucket" and state.windowSource == "inferred" then provenMs = state.windowMs end
    state.refill = "bucket"
    -- observe.ts: a bucket shown smaller than the provider documents starts at its slowest documented rate.
    local floorMs = bucketWindowMs
    if budget.restoreFloorPerSecond ~= nil and budget.restoreFloorPerSecond > 0 and state.limit ~= nil then floorMs = math.max(1, jsRound((state.limit / budget.restoreFloorPerSecond) * 1000)) end
    if state.estimateFloorSeq == 0 and not state.estimateProbeFailed and state.probedFromWindowMs == 0 and floorMs < bucketWindowMs then
      state.estimateFloorSeq = math.max(1, state.seq)
      if provenMs == nil then state.windowMs = floorMs else state.windowMs = math.min(provenMs, floorMs) end
    elseif provenMs == nil then state.windowMs = bucketWindowMs else state.windowMs = math.min(provenMs, bucketWindowMs) end
    state.windowSource = "inferred"
  elseif bucketWindowMs ~= nil and bucketWindowMs <= MAX_FIGURE then
    state.refill = "bucket"
    state.windowMs = bucketWindowMs
    state.windowSource = "shown"
  elseif budget.windowMs ~= nil then
    state.windowMs = math.max(1, jsRound(budget.windowMs))
    state.windowSource = "shown"
  end
end

-- state.ts wholeSecondsNear: a distance between two whole-second resets is a whole number of seconds.
local function wholeSecondsNear(distanceMs)
  local seconds = jsRound(distanceMs / ROUNDING_MS)
  if seconds >= 1 and math.abs(distanceMs - seconds * ROUNDING_MS) <= ROUNDING_MS / 4 then return math.max(distanceMs, seconds * ROUNDING_MS) end
  return distanceMs
end

local function learnFromReset(state, previousResetMs, observation, remaining, resetAtMs)
  if state.refill == "bucket" or state.limit == nil then return end
  local shownWindowMs = nil
  if state.windowSource == "shown" then shownWindowMs = state.windowMs end
  local sinceReset = 0
  local slidingOnly = 0
  for _, s in ipairs(state.slots) do
    if s[2] <= observation.seq then
      if s[1] >= previousResetMs then
        sinceReset = sinceReset + s[3]
      elseif shownWindowMs ~= nil and s[1] > observation.sentAtMs - shownWindowMs then
        slidingOnly = slidingOnly + s[3]
      end
    end
  end
  local tolerance = fullRefillToleranceUnits(state.limit)
  -- observe.ts: a count that reads as full whatever it showed tells nothing of the units spent before it.
  if state.limit - sinceReset - tolerance < 1 then return end
  if remaining >= state.limit - sinceReset - tolerance then
    if shownWindowMs ~= nil and slidingOnly <= tolerance then return end
    -- observe.ts: resets further apart than the window already bound are not one window's length,
    -- where this reading's reset fits a sliding window nearly as long as the bound (slidingAtLeastMs).
    if state.windowSource == "inferred" and state.windowMs ~= nil and state.windowMs >= ROUNDING_MS and resetAtMs - previousResetMs > state.windowMs + ROUNDING_MS / 2 and resetAtMs - observation.sentAtMs - ROUNDING_MS - ROUNDING_MS / 4 > state.windowMs - ROUNDING_MS / 2 then return end
    -- observe.ts resetsCloserThanCounted: resets closer than a window that held our units are a sliding window's.
    if state.refill == "window" and state.windowSource == "inferred" and state.windowMs ~= nil and resetAtMs - previousResetMs < state.windowMs - ROUNDING_MS - ROUNDING_MS / 4 then return end
    state.refill = "fixed"
    if resetAtMs > previousResetMs + ROUNDING_MS / 2 and state.windowSource ~= "shown" then
      state.windowMs = math.min(MAX_FIGURE, wholeSecondsNear(resetAtMs - previousResetMs))
      state.windowSource = "inferred"
    end
  elseif state.refill == "fixed" then
    state.refill = "window"
  end
end

local function inferWindow(state, observation, remaining, resetAtMs)
  if observation.kind ~= "ok" or state.refill ~= "window" or state.windowSource == "shown" or resetAtMs == 0 or state.limit == nil or remaining > 0 then return end
  local first, last, ownUnits = heldSlots(state, { remaining = remaining, seq = observation.seq, atMs = observation.sentAtMs, resetAtMs = resetAtMs, lateUnits = 0 })
  if last == 0 or ownUnits < state.limit then return end
  local oldestMs = state.slots[first][1]
  if resetAtMs <= oldestMs then return end
  local observedMs = resetAtMs - oldestMs
  if state.windowSource == "inferred" and state.windowMs ~= nil then
    state.windowMs = math.min(MAX_FIGURE, math.min(state.windowMs, observedMs))
  else
    state.windowMs = math.min(MAX_FIGURE, observedMs)
  end
  state.windowSource = "inferred"
end

-- observe.ts unitsClaimedBetween: units of our claims granted after fromSeq, up to toSeq.
local function unitsClaimedBetween(state, fromSeq, toSeq)
  local units = 0
  for _, s in ipairs(state.slots) do
    if s[2] > fromSeq and s[2] <= toSeq then units = units + s[3] end
  end
  return units
end

local function learnOthers(state, previous, observation, remaining, lateUnits)
  local elapsedMs = observation.sentAtMs - previous.atMs
  if elapsedMs <= 0 or (state.refill ~= "bucket" and previous.resetAtMs > 0 and observation.sentAtMs >= previous.resetAtMs) then return end
  if elapsedMs < state.rttMs then return end
  local ours = previous.lateUnits - lateUnits + unitsClaimedBetween(state, previous.seq, observation.seq)
  local maybeOurs = lateUnits
  for _, s in ipairs(state.slots) do
    if s[2] > observation.seq and s[1] <= observation.nowMs then maybeOurs = maybeOurs + s[3] end
  end
  local limit = state.limit
  local windowMs = state.windowMs
  local refilled = previous.remaining
  if state.refill == "bucket" and limit ~= nil and windowMs ~= nil then refilled = math.min(limit, previous.remaining + (limit / windowMs) * elapsedMs) end
  local othersUnits = math.max(0, refilled - ours - maybeOurs - remaining)
  -- observe.ts: in a fixed window, the count since it began bounds others' spending by what we started in it.
  if othersUnits > 0 and state.refill == "fixed" and limit ~= nil and windowMs ~= nil and previous.resetAtMs > 0 then
    local windowStartMs = previous.resetAtMs - windowMs - ROUNDING_MS
    local oursInWindow = 0
    for _, s in ipairs(state.slots) do
      if s[1] >= windowStartMs and s[1] <= observation.nowMs then oursInWindow = oursInWindow + s[3] end
    end
    othersUnits = math.min(othersUnits, math.max(0, limit - remaining - oursInWindow))
  end
  local sample = othersUnits / elapsedMs
  if limit ~= nil and windowMs ~= nil and elapsedMs <= windowMs then state.reserveUnits = math.min(limit / 2, math.max(state.reserveUnits, othersUnits)) end
  local smoothed
  if state.othersPerMs == 0 then smoothed = sample else smoothed = state.othersPerMs * (1 - OTHERS_SMOOTHING) + sample * OTHERS_SMOOTHING end
  state.othersPerMs = math.min(MAX_OTHERS_PER_MS, smoothed)
end

local function unitsOfSeq(state, seq)
  for _, s in ipairs(state.slots) do
    if s[2] == seq then return s[3] end
  end
  return nil
end

-- observe.ts lateClaimUnits: claims still out granted before the observed one, but not one started
-- two round trips (LATE_CLAIM_MIN_MS at least) before the reading's send.
local function lateClaimUnits(state, observedSeq, sentAtMs)
  local countedBeforeMs = sentAtMs - math.max(2 * state.rttMs, LATE_CLAIM_MIN_MS)
  local units = 0
  for _, f in ipairs(state.inFlight) do
    if f[1] < observedSeq then
      local slotAtMs, slotUnits = nil, nil
      for _, s in ipairs(state.slots) do
        if s[2] == f[1] then
          slotAtMs, slotUnits = s[1], s[3]
          break
        end
      end
      if not (slotAtMs ~= nil and slotAtMs < countedBeforeMs) then units = units + (slotUnits or 0) end
    end
  end
  return units
end

-- observe.ts countedBeforeAnchor: the observed request reached the server before the anchor's (its answer shows more remaining).
-- sliding.ts leftAndOldestCounted: the newest send of ours the reading no longer counts.
local function leftAndOldestCounted(state, observation, remaining, limit)
  local sentAtMs = observation.sentAtMs
  local counted = limit - remaining - (unitsOfSeq(state, observation.seq) or state.unitsPerRequest)
  if counted < 0 then return nil end
  local out = {}
  for _, f in ipairs(state.inFlight) do out[f[1]] = true end
  local oldestCountedMs = sentAtMs
  for i = #state.slots, 1, -1 do
    local s = state.slots[i]
    if not (s[1] >= sentAtMs or s[2] == observation.seq or out[s[2]]) then
      if counted < s[3] then return s[1], oldestCountedMs end
      counted = counted - s[3]
      oldestCountedMs = s[1]
    end
  end
  return nil
end

-- sliding.ts trimWindow: units of ours the count no longer holds have left the window.
local function trimWindow(state, observation, remaining, resetAtMs)
  local limit, windowMs = state.limit, state.windowMs
  if observation.kind ~= "ok" or state.refill ~= "window" or state.windowSource ~= "inferred" or windowMs == nil or limit == nil or resetAtMs == 0 then return end
  local leftAtMs, oldestCountedMs = leftAndOldestCounted(state, observation, remaining, limit)
  if leftAtMs == nil then return end
  local boundMs = math.ceil((observation.sentAtMs - leftAtMs) * (1 + LEFT_UNITS_MARGIN))
  if boundMs >= windowMs or boundMs < windowMs - ROUNDING_MS / 2 then return end
  if boundMs < resetAtMs - oldestCountedMs - ROUNDING_MS - ROUNDING_MS / 4 then return end
  state.windowMs = boundMs
end

local function countedBeforeAnchor(state, anchor, observation)
  local budget = observation.budget
  if observation.kind ~= "ok" or budget == nil or state.refill == "bucket" or budget.remaining <= anchor.remaining then return false end
  if anchor.resetAtMs > 0 and observation.sentAtMs >= anchor.resetAtMs then return false end
  if anchor.resetAtMs > 0 and observation.sentAtMs >= anchor.resetAtMs - ROUNDING_MS then
    local windowMs = state.windowMs
    local shownResetMs = nn(budget.resetAtMs)
    if windowMs == nil or windowMs <= 2 * ROUNDING_MS or shownResetMs == nil or math.abs(shownResetMs - anchor.resetAtMs) >= windowMs / 2 then return false end
  end
  if state.refill == "fixed" then return true end
  -- observe.ts: sent before the reading's own request, it reached the server first.
  if observation.sentAtMs < anchor.atMs then return true end
  return state.othersPerMs == 0 and state.reserveUnits == 0 and math.abs(observation.sentAtMs - anchor.atMs) <= state.rttMs
end

-- state.ts bucketWindowBoundMs: a bucket whose reset is the time until full is whole within this.
local function bucketWindowBoundMs(limit, remaining, sentAtMs, resetAtMs)
  if remaining >= limit - 1 or resetAtMs <= sentAtMs then return nil end
  return math.min(MAX_FIGURE, math.ceil(((resetAtMs - sentAtMs) * limit) / (limit - remaining - 1)))
end

-- observe.ts learnBucketFromResets
local function learnBucketFromResets(state, previous, sentAtMs, remaining, resetAtMs)
  local limit = state.limit
  if limit == nil then return end
  local windowMs = INF
  local a = bucketWindowBoundMs(limit, previous.remaining, previous.atMs, previous.resetAtMs)
  if a ~= nil then windowMs = math.min(windowMs, a) end
  local b = bucketWindowBoundMs(limit, remaining, sentAtMs, resetAtMs)
  if b ~= nil then windowMs = math.min(windowMs, b) end
  if windowMs == INF then
    state.refill = "window"
    return
  end
  state.refill = "bucket"
  state.windowMs = windowMs
  state.windowSource = "inferred"
end

-- observe.ts tightenBucketWindow
local function tightenBucketWindow(state, sentAtMs, remaining, resetAtMs)
  if state.limit == nil or resetAtMs == 0 then return end
  local bound = bucketWindowBoundMs(state.limit, remaining, sentAtMs, resetAtMs)
  if bound ~= nil and state.windowMs ~= nil and bound < state.windowMs then state.windowMs = math.max(1, bound) end
end

-- observe.ts resetMovedOn: a reading continuing the count under a reset a second later is no window.
local function resetMovedOn(state, previous, observation, remaining, resetAtMs)
  -- observe.ts: against the reset the previous reading showed, not the earlier one it was merged with.
  local previousShownMs = previous.shownResetAtMs or previous.resetAtMs
  -- observe.ts resetMoveMinMs: a second on, give or take the Date's drift and a counted-down reset's time in flight.
  local moveMinMs = ROUNDING_MS - ROUNDING_MS / 4
  if observation.budget ~= nil and observation.budget.resetCountsDown == true then moveMinMs = moveMinMs + math.max(0, observation.nowMs - observation.sentAtMs) end
  if state.refill == "bucket" or previous.resetAtMs == 0 or resetAtMs < previousShownMs + moveMinMs or observation.seq <= previous.seq then return false end
  if observation.sentAtMs >= previous.resetAtMs - ROUNDING_MS / 4 then return false end
  if state.othersPerMs > 0 or state.reserveUnits > 0 then return false end
  local ours = unitsClaimedBetween(state, previous.seq, observation.seq)
  if ours <= 0 or remaining > previous.remaining then return false end
  -- observe.ts: sent over a second (and the drift) before the last shown reset, no window moves its reset on: a bucket's does.
  if observation.sentAtMs < previousShownMs - ROUNDING_MS - ROUNDING_MS / 4 then return true end
  return remaining == previous.remaining - ours
end

-- observe.ts fixedResetMoved: a window read as fixed whose reset moved on before it was reached is sliding.
local function fixedResetMoved(state, previous, observation, sentAtMs, resetAtMs)
  -- observe.ts resetMoveMinMs: a second on, give or take the Date's drift and a counted-down reset's time in flight.
  local moveMinMs = ROUNDING_MS - ROUNDING_MS / 4
  if observation.budget ~= nil and observation.budget.resetCountsDown == true then moveMinMs = moveMinMs + math.max(0, observation.nowMs - observation.sentAtMs) end
  if state.refill ~= "fixed" or previous.resetAtMs == 0 or resetAtMs < previous.resetAtMs + moveMinMs then return false end
  return sentAtMs < previous.resetAtMs - ROUNDING_MS / 4
end

-- observe.ts countRefillFrom: starts the refill count at sinceMs (0: not counting).
local function countRefillFrom(state, sinceMs)
  state.refillSinceMs = sinceMs
  state.refillSeenUnits = 0
end

-- observe.ts shortenToProvenRefill: an estimated bucket's window, shortened where provenUnits came back in the span.
local function shortenToProvenRefill(state, limit, windowMs, sinceMs, sentAtMs, provenUnits)
  if provenUnits < 2 or sentAtMs <= sinceMs then return end
  local spanMs = sentAtMs - sinceMs + math.max(1, state.rttMs)
  local provenWindowMs = math.ceil((limit * spanMs) / provenUnits)
  if provenWindowMs < windowMs then state.windowMs = math.max(1, provenWindowMs) end
end

-- observe.ts learnBucketRefill: an estimated bucket rate is shortened where its own count proves it faster.
local function learnBucketRefill(state, previous, observation, remaining, lateUnits)
  local limit, windowMs = state.limit, state.windowMs
  -- observe.ts: a window shown with no reset counts its own refill (learnRefillBehindShownWindow).
  if state.refill == "window" and state.windowSource == "shown" then return end
  if state.refill ~= "bucket" or state.windowSource ~= "inferred" or limit == nil or windowMs == nil or observation.seq <= previous.seq then
    return countRefillFrom(state, 0)
  end
  if remaining >= limit then return countRefillFrom(state, observation.sentAtMs) end
  if state.refillSinceMs == 0 or state.refillSinceMs > previous.atMs then countRefillFrom(state, previous.atMs) end
  -- observe.ts: a throttled reading's own request was rejected: it is not in the count.
  local rejectedUnits = 0
  if observation.kind == "throttled" then rejectedUnits = unitsOfSeq(state, observation.seq) or 0 end
  local ours = unitsClaimedBetween(state, previous.seq, observation.seq) - lateUnits - rejectedUnits
  state.refillSeenUnits = state.refillSeenUnits + remaining - previous.remaining + ours
  if math.abs(state.refillSeenUnits) > MAX_FIGURE then return countRefillFrom(state, 0) end
  shortenToProvenRefill(state, limit, windowMs, state.refillSinceMs, observation.sentAtMs, state.refillSeenUnits - 1)
end

-- observe.ts learnBucketFromAdmitted: successes that showed no count prove an estimated bucket's refill.
local function learnBucketFromAdmitted(state, observation, remaining)
  local limit, windowMs = state.limit, state.windowMs
  if state.refill ~= "bucket" or state.windowSource ~= "inferred" or limit == nil or windowMs == nil or state.okInWindow <= 0 or state.windowStartMs == 0 then return end
  shortenToProvenRefill(state, limit, windowMs, state.windowStartMs, observation.sentAtMs, state.okInWindow + remaining - limit - 1)
end

-- estimate.ts pacedByEstimate: the answered claim's start came a unit's spacing after the claim before it.
local PACED_SHARE = 0.9
-- estimate.ts FIRST_PROBE_UNITS: paced starts before the first probe (after a failed one, a bucketful).
local FIRST_PROBE_UNITS = 2
-- estimate.ts gapBeforeMs: how long after the start before it in the log the claim started (nil: first or absent).
local function gapBeforeMs(state, seq)
  local at = 0
  for i, slot in ipairs(state.slots) do
    if slot[2] == seq then
      at = i
      break
    end
  end
  if at <= 1 then return nil end
  return state.slots[at][1] - state.slots[at - 1][1]
end
local function pacedByEstimate(state, seq, units, limit, windowMs)
  local gapMs = gapBeforeMs(state, seq)
  return gapMs ~= nil and gapMs >= (PACED_SHARE * units * windowMs) / limit
end

-- estimate.ts probeEstimatedRate: a clean bucketful the estimate paced halves the window, from now on.
local function probeEstimatedRate(state, observation, units)
  local limit, windowMs, anchor = state.limit, state.windowMs, state.anchor
  if state.refill ~= "bucket" or state.windowSource ~= "inferred" or state.budgetOnSuccess or anchor == nil or limit == nil or windowMs == nil then return end
  if observation.seq <= anchor.seq or not pacedByEstimate(state, observation.seq, units, limit, windowMs) then return end
  state.pacedCleanUnits = math.min(MAX_FIGURE, state.pacedCleanUnits + units)
  local needed = limit
  if state.probedFromWindowMs == 0 and not state.estimateProbeFailed then needed = math.min(limit, FIRST_PROBE_UNITS) end
  if state.pacedCleanUnits < needed then return end
  local perMs = limit / windowMs
  local fullAtMs = bucketFullAtMs(state, anchor, limit, perMs)
  local nowMs = clampTime(observation.nowMs)
  local tokens = limit - (fullAtMs - nowMs) * perMs
  local atMs = nowMs
  if tokens < 0 then atMs = clampTime(math.ceil(fullAtMs - limit / perMs)) end
  state.anchor = { remaining = math.max(0, math.min(limit, math.floor(tokens))), seq = state.seq, atMs = atMs, resetAtMs = 0, lateUnits = 0, answeredAtMs = nowMs, ownOutAtSend = anchor.ownOutAtSend }
  state.probedFromWindowMs = windowMs
  state.windowMs = math.max(1, jsRound(windowMs / 2))
  state.pacedCleanUnits = 0
end

-- estimate.ts estimateThrottled: a throttle showing the count ends a probe at the window paced cleanly before it.
local function estimateThrottled(state, observation)
  state.pacedCleanUnits = 0
  local limit = state.limit
  if limit == nil then return end
  if state.probedFromWindowMs == 0 then
    -- estimate.ts floorThrottled: a throttle on a claim the floor paced doubles the window, up to the documented rate's.
    local rate = nil
    if observation.budget ~= nil and observation.budget.restoreEstimated == true then rate = observation.budget.restorePerSecond end
    if state.refill ~= "bucket" or state.windowSource ~= "inferred" or state.estimateFloorSeq == 0 or observation.seq <= state.estimateFloorSeq or rate == nil or not (rate > 0) or state.windowMs == nil then return end
    local documentedMs = jsRound((limit / rate) * 1000)
    if state.windowMs >= documentedMs then return end
    state.windowMs = math.min(documentedMs, state.windowMs * 2)
    state.estimateFloorSeq = math.max(1, state.seq)
    return
  end
  state.windowMs = math.max(state.windowMs or 0, state.probedFromWindowMs)
  state.probedFromWindowMs = 0
  state.estimateProbeFailed = true
  if state.refillSinceMs > 0 then shortenToProvenRefill(state, limit, state.windowMs, state.refillSinceMs, observation.sentAtMs, state.refillSeenUnits - 1) end
end

-- estimate.ts probeSilentRate: a bucketful paced cleanly at a rate learned from throttles alone adds a unit per window.
local SILENT_PACED_MAX_SHARE = 1.5
local SILENT_BUCKETFULS_AFTER_FAILED_PROBE = 8
local SILENT_PROBE_MIN_UNITS = 2
local function probeSilentRate(state, observation, units)
  local limit, windowMs = state.limit, state.windowMs
  if state.refill ~= "bucket" or state.anchor ~= nil or state.budgetOnSuccess or state.windowSource == "shown" or limit == nil or windowMs == nil then return end
  if observation.seq <= state.learnedAtSeq then return end
  local gapMs = gapBeforeMs(state, observation.seq)
  local spacingMs = (units * windowMs) / limit
  if gapMs == nil or gapMs < PACED_SHARE * spacingMs or gapMs > SILENT_PACED_MAX_SHARE * spacingMs then return end
  state.pacedCleanUnits = math.min(MAX_FIGURE, state.pacedCleanUnits + units)
  local bucketfuls = 1
  if state.estimateProbeFailed then bucketfuls = SILENT_BUCKETFULS_AFTER_FAILED_PROBE end
  if state.pacedCleanUnits < bucketfuls * limit then return end
  state.pacedCleanUnits = 0
  state.probedFromWindowMs = windowMs
  state.windowMs = math.max(1, jsRound(windowMs / (1 + 1 / math.max(limit, SILENT_PROBE_MIN_UNITS))))
end

-- estimate.ts silentProbeFailed: a fresh silent throttle before a probed rate was confirmed goes back to the rate paced cleanly.
local function silentProbeFailed(state, beforeLimit, beforeRefill)
  if state.anchor ~= nil or state.probedFromWindowMs == 0 or beforeLimit == nil then return end
  state.limit = beforeLimit
  state.refill = beforeRefill
  state.windowMs = state.probedFromWindowMs
  state.probedFromWindowMs = 0
  state.estimateProbeFailed = true
end

-- observe.ts startedWith: claims of ours started within half a round trip before sentAtMs (itself included).
local function startedWith(state, sentAtMs)
  local sinceMs = sentAtMs - math.max(1, state.rttMs / 2)
  local claims = 0
  local i = #state.slots
  while i >= 1 and state.slots[i][1] > sinceMs do
    if state.slots[i][1] <= sentAtMs then claims = claims + 1 end
    i = i - 1
  end
  return claims
end

-- sliding.ts cameBackBetween: units the count came back by between two readings beyond our units
-- leaving the shown window explain, or nil where the pair cannot tell (others in the count, a reset
-- shown, a throttle, units counted from before the window, a fixed window's reset between the two).
local REFILL_PROOF_UNITS = 2
local function cameBackBetween(state, previous, observation, remaining, lateUnits)
  local limit, windowMs = state.limit, state.windowMs
  if limit == nil or windowMs == nil or state.othersPerMs > 0 or state.reserveUnits > 0 then return nil end
  if observation.kind ~= "ok" or observation.seq <= previous.seq or previous.resetAtMs > 0 then return nil end
  if observation.budget and observation.budget.resetAtMs ~= nil then return nil end
  local first, last, ownUnits = heldSlots(state, previous, true)
  if ownUnits < limit - previous.remaining then return nil end
  if last > 0 and first <= last and state.slots[first][1] <= previous.atMs - windowMs then return nil end
  local leftUnits = 0
  for i = first, last do
    if state.slots[i][1] + windowMs <= observation.sentAtMs then leftUnits = leftUnits + state.slots[i][3] end
  end
  local claimedBetween = unitsClaimedBetween(state, previous.seq, observation.seq)
  if remaining >= limit - claimedBetween - 1 then return nil end
  return remaining - (previous.remaining - (previous.lateUnits - lateUnits + claimedBetween) + leftUnits)
end

-- sliding.ts learnRefillBehindShownWindow: a window shown with no reset (HubSpot's interval) whose
-- count comes back by more than our own units leaving it, added up across a run of readings
-- (refillSeenUnits since refillSinceMs), is a bucket refilling at the limit per interval; never more
-- than such a bucket refills over the count's span (and a unit for the floors).
local function learnRefillBehindShownWindow(state, previous, observation, remaining, lateUnits)
  local limit, windowMs = state.limit, state.windowMs
  if state.refill ~= "window" or state.windowSource ~= "shown" or limit == nil or windowMs == nil then return end
  local cameBackUnits = cameBackBetween(state, previous, observation, remaining, lateUnits)
  if cameBackUnits == nil then return countRefillFrom(state, 0) end
  if state.refillSinceMs == 0 or state.refillSinceMs > previous.atMs then countRefillFrom(state, previous.atMs) end
  state.refillSeenUnits = state.refillSeenUnits + cameBackUnits
  if math.abs(state.refillSeenUnits) > MAX_FIGURE then return countRefillFrom(state, 0) end
  local refillAtMostUnits = (limit * math.max(0, observation.sentAtMs - state.refillSinceMs)) / windowMs + 1
  if state.refillSeenUnits >= REFILL_PROOF_UNITS and state.refillSeenUnits <= refillAtMostUnits then state.refill = "bucket" end
end

-- count-window.ts: a count shown with no reset (Shopify REST's used/limit) read as a bucket at an
-- estimated rate, that came back in full at a throttle's told wait, is a window's. One table: a
-- script's main function holds at most 200 locals.
local CW = {}
function CW.probesForWindowLength(state)
  return state.countResetAtMs > 0 and state.refill == "fixed" and state.windowMs == nil and state.anchor ~= nil and state.anchor.resetAtMs == 0
end

function CW.countShowsNoReset(budget)
  return budget.resetAtMs == nil and budget.restoreEstimated == true
end

function CW.toldResetAtMs(observation, remaining)
  if observation.kind ~= "throttled" or not observation.waitFromServer or observation.waitMs == nil or observation.waitMs <= 0 or remaining > 0 then return 0 end
  return clampTime(observation.nowMs + observation.waitMs)
end

function CW.cameBackAsWindow(state, previous, observation, remaining)
  local limit, windowMs, resetMs = state.limit, state.windowMs, state.countResetAtMs
  if limit == nil or windowMs == nil or resetMs == 0 or observation.sentAtMs < resetMs or holdsConcurrency(state) or state.concurrency ~= "unknown" then return false end
  local ours = 0
  for _, s in ipairs(state.slots) do if s[2] <= observation.seq and s[1] >= resetMs then ours = ours + s[3] end end
  local fullUnits = limit - ours - fullRefillToleranceUnits(limit)
  if fullUnits < 1 or remaining < fullUnits then return false end
  local refilledUnits = ((observation.sentAtMs - previous.atMs) * limit) / windowMs
  return previous.remaining + refilledUnits < fullUnits
end

function CW.cameBackInFullSince(state, previous, observation, remaining)
  local limit = state.limit
  if limit == nil or observation.seq <= previous.seq or observation.sentAtMs < previous.answeredAtMs then return false end
  local claimedUnits = unitsClaimedBetween(state, previous.seq, observation.seq)
  local fullUnits = limit - claimedUnits - fullRefillToleranceUnits(limit)
  return remaining >= fullUnits and remaining > previous.remaining - claimedUnits + 1
end

function CW.nextResetAfterMs(resetMs, windowMs, sentAtMs)
  if sentAtMs < resetMs then return resetMs end
  return clampTime(resetMs + (math.floor((sentAtMs - resetMs) / windowMs) + 1) * windowMs)
end

function CW.turnWindow(state, previous, observation)
  previous.resetAtMs = state.countResetAtMs
  state.refill = "fixed"
  state.windowMs = nil
  state.windowSource = nil
  state.lastGrantMs = math.min(state.lastGrantMs, clampTime(observation.nowMs))
  state.reserveUnits = 0
  state.othersPerMs = 0
  state.learnedAtSeq = state.seq
  state.probedFromWindowMs = 0
  state.pacedCleanUnits = 0
  state.refillSinceMs = 0
  state.refillSeenUnits = 0
end

function CW.windowReset(state, previous, observation, remaining, toldMs)
  if toldMs == 0 and previous ~= nil and CW.cameBackInFullSince(state, previous, observation, remaining) then
    if state.windowMs == nil and observation.sentAtMs > state.countResetAtMs then
      state.windowMs = math.min(MAX_FIGURE, wholeSecondsNear(observation.sentAtMs - state.countResetAtMs))
      state.windowSource = "inferred"
      state.countResetAtMs = clampTime(observation.sentAtMs)
    elseif state.windowMs == nil or observation.sentAtMs < CW.nextResetAfterMs(state.countResetAtMs, state.windowMs, previous.atMs) then
      state.countResetAtMs = clampTime(observation.sentAtMs)
    end
  end
  if toldMs > 0 and observation.sentAtMs >= state.countResetAtMs then
    if state.windowMs == nil then
      state.windowMs = math.min(MAX_FIGURE, wholeSecondsNear(toldMs - state.countResetAtMs))
      state.windowSource = "inferred"
    end
    state.countResetAtMs = toldMs
    return toldMs
  end
  if state.refill ~= "fixed" or state.windowMs == nil then return 0 end
  local nextMs = CW.nextResetAfterMs(state.countResetAtMs, state.windowMs, observation.sentAtMs)
  if nextMs > observation.sentAtMs then return nextMs end
  return 0
end

function CW.resetBehindCount(state, previous, observation, remaining)
  local toldMs = CW.toldResetAtMs(observation, remaining)
  if state.refill == "bucket" and state.windowSource == "inferred" then
    if previous ~= nil and CW.cameBackAsWindow(state, previous, observation, remaining) then CW.turnWindow(state, previous, observation)
    elseif toldMs > 0 then state.countResetAtMs = toldMs end
    return 0
  end
  if state.countResetAtMs == 0 or state.refill == "bucket" then return 0 end
  return CW.windowReset(state, previous, observation, remaining, toldMs)
end

local function applyAnchor(state, observation, budget, leaseMs)
  local previous = state.anchor
  local sentAtMs = clampTime(observation.sentAtMs)
  -- observe.ts: a count with no reset reads its reset itself (count-window.ts); it may name the previous reading's.
  local countResetAtMs = nil
  if CW.countShowsNoReset(budget) then countResetAtMs = CW.resetBehindCount(state, previous, observation, budget.remaining) end
  local afterPreviousReset = previous ~= nil and previous.resetAtMs > 0 and sentAtMs >= previous.resetAtMs
  if previous and observation.seq < previous.seq and not afterPreviousReset then return end
  local resetAtMs = 0
  if countResetAtMs ~= nil then resetAtMs = countResetAtMs
  elseif budget.resetAtMs ~= nil and budget.resetAtMs > sentAtMs then resetAtMs = clampTime(budget.resetAtMs) end
  if previous and afterPreviousReset then
    learnFromReset(state, previous.resetAtMs, observation, budget.remaining, resetAtMs)
  elseif previous and resetMovedOn(state, previous, observation, budget.remaining, resetAtMs) then
    learnBucketFromResets(state, previous, sentAtMs, budget.remaining, resetAtMs)
  elseif state.refill == "bucket" and state.windowSource == "inferred" then
    tightenBucketWindow(state, sentAtMs, budget.remaining, resetAtMs)
  elseif previous and fixedResetMoved(state, previous, observation, sentAtMs, resetAtMs) then
    state.refill = "window"
  end
  -- observe.ts: the window is bounded by this reading's own reset, not the merged one.
  local shownResetAtMs = resetAtMs
  -- observe.ts: not where the count rose since (outside a bucket): the window's reset moved on.
  local countRose = state.refill ~= "bucket" and previous ~= nil and budget.remaining > previous.remaining
  if previous and not afterPreviousReset and not countRose and previous.resetAtMs > 0 and resetAtMs > 0 and math.abs(resetAtMs - previous.resetAtMs) < ROUNDING_MS then
    resetAtMs = math.min(resetAtMs, previous.resetAtMs)
  end
  local lateUnits = lateClaimUnits(state, observation.seq, sentAtMs)
  -- observe.ts: a later claim counted before the reading keeps the reading's (more recent) count.
  local remaining = budget.remaining
  if previous and not afterPreviousReset and countedBeforeAnchor(state, previous, observation) then remaining = previous.remaining end
  if previous then learnBucketRefill(state, previous, observation, remaining, lateUnits) end
  if previous and observation.seq > previous.seq then learnOthers(state, previous, observation, remaining, lateUnits) end
  if previous then learnRefillBehindShownWindow(state, previous, observation, remaining, lateUnits) end
  inferWindow(state, observation, remaining, shownResetAtMs)
  if previous and not afterPreviousReset then trimWindow(state, observation, remaining, shownResetAtMs) end
  local ownOutAtSend = math.max(startedBy(state, sentAtMs, leaseMs) + 1, startedWith(state, sentAtMs))
  -- observe.ts: claims granted before the first reading are that one lesson.
  if previous == nil then state.learnedAtSeq = math.max(state.learnedAtSeq, state.seq) end
  if observation.kind == "ok" then state.budgetOnSuccess = true end
  state.anchor = { remaining = math.max(0, remaining), seq = observation.seq, atMs = sentAtMs, resetAtMs = resetAtMs, lateUnits = lateUnits, answeredAtMs = observation.nowMs, ownOutAtSend = ownOutAtSend }
  if shownResetAtMs ~= resetAtMs then state.anchor.shownResetAtMs = shownResetAtMs end
end

-- concurrency.ts oursPossiblyOut: the most of ours in flight when a request sent after the previous answer was counted.
local function oursPossiblyOut(state, previous, observation, limit, leaseMs)
  local startedSince = 0
  for _, slot in ipairs(state.slots) do
    if slot[1] <= observation.sentAtMs and (slot[1] > previous.atMs or slot[2] > previous.seq) then startedSince = startedSince + slot[3] end
  end
  return math.max(startedBy(state, observation.sentAtMs, leaseMs) + 1, math.max(previous.ownOutAtSend, limit - previous.remaining) - 1 + startedSince)
end

-- concurrency.ts sameResetBefore: the later reading names the earlier one's reset, and was counted before it.
local function sameResetBefore(previous, observation, budget)
  local shownResetMs = nn(budget.resetAtMs)
  if previous.resetAtMs == 0 or shownResetMs == nil or math.abs(shownResetMs - previous.resetAtMs) >= ROUNDING_MS then return false end
  return observation.sentAtMs < previous.resetAtMs - ROUNDING_MS / 4
end

-- concurrency.ts countOutgrewOurs: a count of the same reset holding more than ours could have had out rules a concurrency limit out.
local function countOutgrewOurs(state, observation, budget, leaseMs)
  local previous = state.anchor
  local limit = budget.limit or state.limit
  if state.concurrency ~= "unknown" or previous == nil or observation.kind ~= "ok" or limit == nil or state.refill == "bucket" then return false end
  if state.unitsPerRequest ~= 1 or state.othersPerMs > 0 or state.reserveUnits > 0 then return false end
  if observation.seq <= previous.seq or observation.sentAtMs < previous.answeredAtMs or not sameResetBefore(previous, observation, budget) then return false end
  return limit - budget.remaining > oursPossiblyOut(state, previous, observation, limit, leaseMs)
end

-- concurrency.ts countCameBack: the count came back up between two readings of the same reset.
local function countCameBack(state, observation, budget, leaseMs)
  local previous = state.anchor
  if state.concurrency ~= "unknown" or previous == nil or observation.kind ~= "ok" then return false end
  local shownResetMs = nn(budget.resetAtMs)
  -- concurrency.ts estimatedBucketCount: a count shown with no reset, read as an estimated bucket.
  local estimated = state.refill == "bucket" and state.windowSource == "inferred" and previous.resetAtMs == 0 and shownResetMs == nil
  if state.refill == "bucket" and not estimated then return false end
  if observation.seq <= previous.seq or observation.sentAtMs < previous.answeredAtMs then return false end
  if not estimated and not sameResetBefore(previous, observation, budget) then return false end
  if budget.remaining < previous.remaining or state.limit == nil or state.unitsPerRequest ~= 1 or state.othersPerMs > 0 or state.reserveUnits > 0 then return false end
  if state.limit - previous.remaining > previous.ownOutAtSend or state.limit - budget.remaining > oursPossiblyOut(state, previous, observation, state.limit, leaseMs) then return false end
  -- Under an estimated bucket: the estimate gives back less than a quarter unit between the sends.
  -- Against the documented rate, not a floor it is paced at (concurrency.ts).
  if estimated then
    local documentedMs = 0
    if budget.restorePerSecond ~= nil and budget.restorePerSecond > 0 then documentedMs = (state.limit * 1000) / budget.restorePerSecond end
    return state.windowMs ~= nil and ((observation.sentAtMs - previous.atMs) * state.limit) / math.max(state.windowMs, documentedMs) < 0.25
  end
  local first, last, ownUnits = heldSlots(state, previous)
  if last == 0 or ownUnits < state.limit - previous.remaining then return false end
  local windowMs = ROUNDING_MS
  if state.windowMs ~= nil then
    if state.windowSource == "shown" then windowMs = state.windowMs
    elseif state.refill == "fixed" then windowMs = state.windowMs / 2
    else windowMs = state.windowMs - ROUNDING_MS end
  end
  return observation.sentAtMs - state.slots[first][1] < windowMs
end

-- concurrency.ts ruleOutInferredConcurrency: a throttle disproves an inferred concurrency limit.
local function ruleOutInferredConcurrency(state)
  if not inferenceHeld(state) then return end
  state.anchor = nil
  state.concurrency = "ruled-out"
  state.inFlightCap = nil
  state.inFlightCapGrows = false
  state.learnedAtSeq = state.seq
end

-- concurrency.ts ruleOutForRefill: a success disproves a concurrency limit read from a count that
-- came back: refill brought it back, so a bucket whose reset is its time until full.
local function ruleOutForRefill(state, observation, budget)
  ruleOutInferredConcurrency(state)
  local limit = budget.limit
  if limit == nil then limit = state.limit end
  local boundMs = nil
  if limit ~= nil and budget.resetAtMs ~= nil then boundMs = bucketWindowBoundMs(limit, budget.remaining, observation.sentAtMs, budget.resetAtMs) end
  if boundMs == nil or state.refill == "bucket" then return end
  state.refill = "bucket"
  state.windowMs = boundMs
  state.windowSource = "inferred"
end

-- concurrency.ts countsMoreThanOurs: an answer counting more than ours out at its send disproves an inferred limit.
-- concurrency.ts countHoldsMoreThanOurs: the count against ours out when the request was sent, itself included.
local function countHoldsMoreThanOurs(state, observation, budget, leaseMs, outAtGrant)
  local limit = budget.limit or state.inFlightCap
  if observation.kind ~= "ok" or limit == nil then return false end
  return limit - budget.remaining > math.max(outAtGrant, startedBy(state, observation.sentAtMs, leaseMs) + 1)
end

local function countsMoreThanOurs(state, observation, budget, leaseMs, outAtGrant)
  if state.lastAnsweredAtMs > observation.sentAtMs then return false end
  return countHoldsMoreThanOurs(state, observation, budget, leaseMs, outAtGrant)
end

-- concurrency.ts resetOutlastsAnswers: a reset further from its answer than rounding, drift and a round trip is no concurrency limit's.
local function resetOutlastsAnswers(state, observation, budget)
  local shownResetMs = nn(budget.resetAtMs)
  if observation.kind ~= "ok" or shownResetMs == nil or budget.concurrent then return false end
  return shownResetMs - observation.nowMs > ROUNDING_MS + ROUNDING_MS / 4 + math.max(state.rttMs, observation.nowMs - observation.sentAtMs)
end

-- concurrency.ts applyConcurrentBudget: a concurrency limit is an in-flight cap, and no window paces.
-- concurrency.ts readingUnderTest: the latest count read while a concurrency limit is under test (none once spent).
local function readingUnderTest(latest, observation, budget, first)
  if not first and latest == nil then return nil end
  if observation.kind ~= "ok" or (latest ~= nil and observation.seq <= latest.seq) then return latest end
  return { remaining = budget.remaining, seq = observation.seq, atMs = observation.sentAtMs, resetAtMs = 0, lateUnits = 0, answeredAtMs = observation.nowMs, ownOutAtSend = 1 }
end

-- concurrency.ts dropGrantsAhead: grants the window's model laid ahead are given back.
local function dropGrantsAhead(state, nowMs)
  local ahead, any = {}, false
  for _, s in ipairs(state.slots) do
    if s[1] > nowMs then ahead[s[2]] = true; any = true end
  end
  if not any then return end
  state.slots = filterSlots(state.slots, function(s) return not ahead[s[2]] end)
  local inFlight = {}
  for _, f in ipairs(state.inFlight) do
    if not ahead[f[1]] then inFlight[#inFlight + 1] = f end
  end
  state.inFlight = inFlight
end

local function applyConcurrentBudget(state, observation, budget, leaseMs, outAtGrant, answersTest)
  local before = state.concurrency
  -- concurrency.ts throttledPastTwiceTheCount: a count shown only on throttles, first read spent with
  -- more of ours in flight than it counts after twice it had succeeded, is a count of requests in flight.
  local pastTwice = state.concurrency == "unknown" and observation.kind == "throttled" and not state.budgetOnSuccess and state.anchor == nil and state.limit == nil
    and budget.limit ~= nil and budget.limit >= 1 and budget.remaining <= 0 and state.unitsPerRequest == 1 and state.othersPerMs == 0 and state.reserveUnits == 0
    and outAtGrant > budget.limit and state.okInWindow >= 2 * budget.limit
  if budget.concurrent then
    state.concurrency = "shown"
  elseif pastTwice then
    state.concurrency = "inferred"
    state.learnedAtSeq = state.seq
  elseif countOutgrewOurs(state, observation, budget, leaseMs) then
    state.concurrency = "ruled-out"
  elseif countCameBack(state, observation, budget, leaseMs) then
    state.concurrency = "testing"
  elseif state.concurrency == "testing" and answersTest and observation.kind == "ok" then
    if countHoldsMoreThanOurs(state, observation, budget, leaseMs, outAtGrant) or resetOutlastsAnswers(state, observation, budget) then
      ruleOutForRefill(state, observation, budget)
    else
      state.concurrency = "inferred"
    end
  elseif inferenceHeld(state) and (countsMoreThanOurs(state, observation, budget, leaseMs, outAtGrant) or resetOutlastsAnswers(state, observation, budget)) then
    ruleOutForRefill(state, observation, budget)
  end
  if not holdsConcurrency(state) then return false end
  if before ~= state.concurrency then state.probe = nil end
  if before ~= state.concurrency and state.concurrency == "testing" then dropGrantsAhead(state, observation.nowMs) end
  local limit = budget.limit or state.limit or state.inFlightCap or (budget.remaining + 1)
  state.inFlightCap = math.min(MAX_IN_FLIGHT, math.max(1, math.floor(limit)))
  state.inFlightCapGrows = false
  state.limit = nil
  state.windowMs = nil
  state.windowSource = nil
  state.refill = "window"
  if state.concurrency == "testing" then
    local latest = nil
    if before == "testing" then latest = state.anchor end
    state.anchor = readingUnderTest(latest, observation, budget, before ~= "testing")
  else
    state.anchor = nil
  end
  state.reserveUnits = 0
  state.othersPerMs = 0
  return true
end

-- The first lesson's units back in the log, timed at the throttled request's send (see observe.ts).
local function placeAdmitted(state, observation, episodeStartMs, admitted)
  local out = {}
  for _, f in ipairs(state.inFlight) do out[f[1]] = true end
  local placed = 0
  for _, s in ipairs(state.slots) do
    if s[1] >= episodeStartMs and not out[s[2]] then placed = placed + s[3] end
  end
  if admitted > placed then
    state.slots[#state.slots + 1] = { clampTime(observation.sentAtMs), observation.seq, admitted - placed }
    sortSlots(state.slots)
  end
end

-- observe.ts relearn: a later lesson measures the rate itself when it can.
-- observe.ts bucketRateMeasured: a bucket's refill between two throttles, over at least two of its
-- windows, one unit less, is its proven rate.
local MIN_MEASURED_WINDOWS = 2
local function bucketRateMeasured(state, limit, admitted, measuredMs)
  local windowMs = state.windowMs
  if state.refill ~= "bucket" or windowMs == nil or measuredMs < MIN_MEASURED_WINDOWS * windowMs then return false end
  local provenUnits = admitted - state.unitsPerRequest
  if provenUnits <= 0 or provenUnits / measuredMs >= limit / windowMs then return false end
  state.windowMs = math.min(MAX_FIGURE, math.max(1, jsRound((measuredMs * limit) / provenUnits)))
  return true
end

-- observe.ts admittedSinceLesson: the units admitted from the last lesson's throttle to this one are
-- what the server regained in that time; well below the rate learned, a token bucket.
local function admittedSinceLesson(state, limit, admitted, observation)
  local windowMs = state.windowMs
  local measuredMs = clampTime(observation.sentAtMs) - state.lessonSentAtMs
  if admitted <= 0 or state.lessonSentAtMs == 0 or windowMs == nil or state.windowSource == "shown" or measuredMs <= 0 then return false end
  if admitted / measuredMs >= (DECREASE * limit) / windowMs then return bucketRateMeasured(state, limit, admitted, measuredMs) end
  state.limit = math.max(state.unitsPerRequest, math.min(limit, admitted))
  state.windowMs = math.min(MAX_FIGURE, math.max(1, jsRound((measuredMs * state.limit) / admitted)))
  state.refill = "bucket"
  return true
end

local function relearn(state, limit, admitted, resetAtMs, episodeStartMs, observation)
  local windowMs = state.windowMs
  if resetAtMs == nil and admittedSinceLesson(state, limit, admitted, observation) then return end
  if admitted > 0 and resetAtMs ~= nil and state.windowSource ~= "shown" and resetAtMs > episodeStartMs then
    local measuredLimit = math.min(limit, admitted)
    local measuredWindowMs = resetAtMs - episodeStartMs
    -- observe.ts: the rate is what the episode admitted over its length, also beyond the limit.
    if windowMs == nil or admitted / measuredWindowMs <= limit / windowMs then
      state.limit = math.max(state.unitsPerRequest, measuredLimit)
      state.windowMs = math.min(MAX_FIGURE, math.max(1, jsRound((measuredWindowMs * measuredLimit) / admitted)))
      state.refill = "bucket"
      return
    end
  end
  local cutLimit = math.max(state.unitsPerRequest, math.floor(limit * DECREASE))
  -- observe.ts: a limit already down to one request's units is not cut; the window is lengthened.
  if cutLimit >= limit and windowMs ~= nil then state.windowMs = math.min(MAX_FIGURE, math.max(windowMs + 1, jsRound(windowMs / DECREASE))) end
  state.limit = cutLimit
end

-- observe.ts windowFromWaitMs: a wait rounded up to whole seconds bounds the window; the shortest whole seconds it allows.
local function windowFromWaitMs(observation, resetAtMs, episodeStartMs)
  local boundMs = resetAtMs - episodeStartMs
  local resolutionMs = observation.waitResolutionMs
  if not isPositive(resolutionMs) then return boundMs end
  -- The shortest whole seconds after what the throttle proves (its send, and its send plus the
  -- wait less the second it was rounded up by), plus the transit margin, within the bound.
  local sentMs = observation.sentAtMs - episodeStartMs
  local resetAfterMs = math.max(sentMs, sentMs + (observation.waitMs or 0) - resolutionMs)
  local wholeMs = math.max(resolutionMs, (math.floor(resetAfterMs / resolutionMs) + 1) * resolutionMs)
  local withMarginMs = wholeMs + math.min(wholeMs / 100, 100)
  if withMarginMs < boundMs then return withMarginMs end
  return boundMs
end

-- observe.ts windowOutlastsLesson: a throttle with no wait that finds the episode's units still counted lengthens the window.
-- observe.ts LONG_OUTLAST_MS: past a minute (an hourly limit or a quota) the next probe waits the whole time measured.
local LONG_OUTLAST_MS = 60000
-- observe.ts DOCUMENTED_WINDOWS_MS: the lengths APIs give their windows in (the probes' times and the snap's lengths).
local DOCUMENTED_WINDOWS_MS = { 100, 200, 250, 500, 1000, 2000, 3000, 5000, 10000, 15000, 20000, 30000, 60000, 120000, 300000, 600000, 900000, 1800000, 3600000 }
local function windowOutlastsLesson(state, observation, resetAtMs, episodeStartMs)
  local limit = state.limit
  local windowMs = state.windowMs
  if resetAtMs ~= nil or state.windowSource == "shown" or windowMs == nil or limit == nil or state.okInWindow > 0 then return false end
  local outlastedMs = observation.sentAtMs - episodeStartMs
  state.windowMs = math.min(MAX_FIGURE, math.max(windowMs, outlastedMs))
  state.windowSource = "outlasted"
  state.windowFloorMs = math.min(MAX_FIGURE, math.max(state.windowFloorMs, outlastedMs))
  -- observe.ts outlastProbeAtMs: up to a minute, the next probe goes at the first documented length
  -- (a hundredth longer) from the episode's start that is not yet passed.
  local probeAtMs = observation.nowMs + outlastedMs
  if outlastedMs <= LONG_OUTLAST_MS then
    for _, documentedMs in ipairs(DOCUMENTED_WINDOWS_MS) do
      local atMs = episodeStartMs + documentedMs + math.min(documentedMs / 100, 100)
      if documentedMs > outlastedMs and atMs > observation.nowMs then
        probeAtMs = atMs
        break
      end
    end
  end
  state.notBeforeMs = clampTime(math.max(state.notBeforeMs, probeAtMs))
  return true
end

-- observe.ts windowFromFirstSuccess: the first success after such throttles bounds the window.
local function windowFromFirstSuccess(state, observation)
  if state.windowSource ~= "outlasted" or state.okInWindow > 0 or state.windowMs == nil or state.windowStartMs == 0 or observation.seq <= state.learnedAtSeq then return end
  state.windowMs = math.min(MAX_FIGURE, math.max(state.windowMs, clampTime(observation.sentAtMs) - state.windowStartMs))
  state.windowSource = "inferred"
  state.windowStartMs = 0
  -- observe.ts snapToDocumentedWindow (inline: the chunk is at Lua's 200 locals): the longest documented length between close bounds, a hundredth longer; the floor a quarter of the way below it.
  local lengthMs = 0
  if state.windowMs > 1.5 * state.windowFloorMs then return end
  for _, documentedMs in ipairs(DOCUMENTED_WINDOWS_MS) do
    if documentedMs > state.windowFloorMs and documentedMs + math.min(documentedMs / 100, 100) <= state.windowMs then lengthMs = documentedMs end
  end
  if lengthMs > 0 then
    state.windowMs = lengthMs + math.min(lengthMs / 100, 100)
    state.windowFloorMs = jsRound(lengthMs - (lengthMs - state.windowFloorMs) / 4)
  end
end

local function learnFromThrottle(state, observation)
  if observation.seq <= state.learnedAtSeq then return false end
  local nowMs = clampTime(observation.nowMs)
  local resetAtMs = nil
  if observation.waitFromServer and observation.waitMs ~= nil then resetAtMs = clampTime(nowMs + observation.waitMs) end
  local episodeStartMs = state.windowStartMs
  if episodeStartMs == 0 then episodeStartMs = clampTime(observation.sentAtMs) end
  local outlasted = false
  if state.limit == nil then
    local admitted = math.min(MAX_FIGURE, state.okInWindow)
    if admitted == 0 then return false end
    state.limit = admitted
    placeAdmitted(state, observation, episodeStartMs, admitted)
    if state.windowSource ~= "shown" then
      local observedMs
      if resetAtMs ~= nil then observedMs = windowFromWaitMs(observation, resetAtMs, episodeStartMs) else observedMs = math.max(DEFAULT_LEARNED_WINDOW_MS, observation.sentAtMs - episodeStartMs) end
      state.windowMs = math.min(MAX_FIGURE, math.max(state.windowMs or 0, observedMs, 1))
      if resetAtMs ~= nil then state.windowSource = "inferred" else state.windowSource = "assumed" end
    end
  elseif windowOutlastsLesson(state, observation, resetAtMs, episodeStartMs) then
    outlasted = true
  else
    relearn(state, state.limit, math.min(MAX_FIGURE, state.okInWindow), resetAtMs, episodeStartMs, observation)
  end
  state.learnedAtSeq = state.seq
  state.lessonSentAtMs = clampTime(observation.sentAtMs)
  state.lessonSeq = observation.seq
  state.okInWindow = 0
  if resetAtMs ~= nil then
    state.windowStartMs = resetAtMs
  elseif windowIsGuessed(state) then
    state.windowStartMs = episodeStartMs
  else
    state.windowStartMs = 0
  end
  -- observe.ts restartSlowStart: after a lesson with no wait told, one in flight, growing to the limit learned.
  if resetAtMs == nil and not holdsConcurrency(state) and state.limit ~= nil and state.limit >= 2 then
    state.inFlightCap = 1
    state.inFlightCapGrows = true
  elseif state.inFlightCapGrows then
    state.inFlightCap = nil
    state.inFlightCapGrows = false
  end
  return outlasted
end

-- observe.ts ownStartsFillWindow: our own starts fill the limit where the throttled request was counted.
local function ownStartsFillWindow(state, anchor, observation)
  local limit = state.limit
  local windowMs = state.windowMs
  -- A window of unknown length is at least as long as the time to the reset it shows.
  if windowMs == nil and state.refill == "window" and anchor.resetAtMs > observation.nowMs then windowMs = anchor.resetAtMs - observation.nowMs end
  if limit == nil or windowMs == nil then return false end
  local fromMs, toMs
  -- Each range begins a little early: the server's clock and whole-second resets place the window's start.
  if state.refill == "window" then
    fromMs = observation.sentAtMs - windowMs + 1 - ROUNDING_MS / 4
    toMs = observation.sentAtMs
  elseif state.refill == "fixed" and anchor.resetAtMs > 0 and observation.nowMs < anchor.resetAtMs then
    fromMs = anchor.resetAtMs - windowMs - ROUNDING_MS
    toMs = observation.nowMs
  else
    return false
  end
  local ours = 0
  for _, s in ipairs(state.slots) do
    if s[1] >= fromMs and s[1] <= toMs then ours = ours + s[3] end
  end
  return ours >= limit
end

local function learnReserve(state, observation, units, probedSpent)
  if state.anchor == nil or state.limit == nil then return end
  -- observe.ts: a probe sent to learn when a window behind a count comes back was expected to be throttled.
  if observation.kind == "throttled" and observation.limitType ~= "quota" and not probedSpent then
    if observation.seq <= state.learnedAtSeq or ownStartsFillWindow(state, state.anchor, observation) then return end
    state.reserveUnits = math.min(state.limit / 2, state.reserveUnits + units)
  elseif observation.kind == "ok" and state.reserveUnits > 0 then
    state.reserveUnits = math.max(0, state.reserveUnits - units / state.limit)
  end
end

-- concurrency.ts admittedAfterLesson: our successes sent within a round trip after the lesson's throttled request, in send order.
local function admittedAfterLesson(state)
  local out = {}
  for _, f in ipairs(state.inFlight) do out[f[1]] = true end
  local untilMs = state.lessonSentAtMs + math.max(1, state.rttMs)
  local admitted = {}
  for _, s in ipairs(state.slots) do
    if s[2] > state.lessonSeq and s[2] <= state.learnedAtSeq and not out[s[2]] and s[1] >= state.lessonSentAtMs and s[1] <= untilMs then
      admitted[#admitted + 1] = { s[1], s[3] }
    end
  end
  table.sort(admitted, function(a, b) return a[1] < b[1] end)
  return admitted
end

local SILENT_EVIDENCE_RATIO = 1.2

-- concurrency.ts forgetRate: a budget read as a rate turns out to be a concurrency limit: the rate's window, reserve and probe go.
local function forgetRate(state)
  state.limit = nil
  state.windowMs = nil
  state.windowSource = nil
  state.refill = "window"
  state.reserveUnits = 0
  state.othersPerMs = 0
  state.probe = nil
  state.okInWindow = 0
  state.windowStartMs = 0
end

-- concurrency.ts learnSilentConcurrency: successes right after a lesson's throttle, beyond what its rate gives back, are a concurrency limit's.
local function learnSilentConcurrency(state, observation)
  local limit, windowMs = state.limit, state.windowMs
  if state.concurrency ~= "unknown" or state.anchor ~= nil or limit == nil or windowMs == nil or state.lessonSeq == 0 then return end
  if observation.seq <= state.lessonSeq or observation.seq > state.learnedAtSeq then return end
  for _, f in ipairs(state.inFlight) do
    if f[1] > state.lessonSeq and f[1] <= state.learnedAtSeq then return end
  end
  -- concurrency.ts admittedBeyondRate: counted to each instant of their sends in turn, well above what the rate gives back by then.
  local admitted = admittedAfterLesson(state)
  local units, beyond = 0, false
  for i, a in ipairs(admitted) do
    units = units + a[2]
    if i == #admitted or admitted[i + 1][1] ~= a[1] then
      local spanMs = a[1] - state.lessonSentAtMs + math.max(1, state.rttMs / 2)
      local lessonLimit = limit
      if not windowIsGuessed(state) and state.windowStartMs > state.lessonSentAtMs then lessonLimit = math.max(1, limit - units) end
      if units >= 2 and units > SILENT_EVIDENCE_RATIO * ((lessonLimit * spanMs) / windowMs + 1) then beyond = true end
    end
  end
  if not beyond then return end
  state.concurrency = "silent"
  state.inFlightCap = math.min(MAX_IN_FLIGHT, math.max(1, floor(units / state.unitsPerRequest)))
  local waitsWereOurs = windowIsGuessed(state)
  state.inFlightCapGrows = waitsWereOurs
  -- The hold is the lesson's own backoffs (no wait told): a concurrency limit frees a place per answer.
  if waitsWereOurs and state.notBeforeMs > observation.nowMs then state.notBeforeMs = clampTime(observation.nowMs) end
  forgetRate(state)
  state.learnedAtSeq = state.seq
end

-- concurrency.ts growSilentCap: one more in flight per cap's worth of successes answered while it was full, until a throttle.
local function growSilentCap(state, units, inFlightBefore)
  local cap = state.inFlightCap
  if not state.inFlightCapGrows or cap == nil or inFlightBefore < cap then return end
  state.okInWindow = state.okInWindow + units
  if state.okInWindow < cap * state.unitsPerRequest then return end
  state.okInWindow = 0
  state.inFlightCap = math.min(MAX_IN_FLIGHT, cap + 1)
end

-- concurrency.ts silentThrottle: a throttle under a silent concurrency limit lowers the cap once per cap, or at one rules it out.
local function silentThrottle(state, observation)
  if observation.seq <= state.learnedAtSeq then return end
  state.inFlightCapGrows = false
  local cap = state.inFlightCap or 1
  if cap <= 1 then
    state.concurrency = "ruled-out"
    state.inFlightCap = nil
    state.learnedAtSeq = state.seq
    return
  end
  state.inFlightCap = cap - 1
  state.learnedAtSeq = state.seq
end

local function applyThrottle(state, observation, options, inFlightBefore)
  if observation.budget ~= nil then estimateThrottled(state, observation) end
  -- concurrency.ts toldConcurrency: the answer names a concurrency limit where no count shows one (Redis sees every claim).
  local told = observation.limitType == "concurrency" and observation.budget == nil and state.anchor == nil and (state.concurrency == "unknown" or state.concurrency == "silent")
  local sameLesson = told and state.concurrency == "silent" and observation.seq <= state.learnedAtSeq
  if not sameLesson then state.throttleStreak = state.throttleStreak + 1 end
  if state.throttleStreak >= options.breakerThreshold then state.breakerOpen = true end
  state.slots = filterSlots(state.slots, function(s) return s[2] ~= observation.seq end)
  local concurrent = told or holdsConcurrency(state)
  local outlasted = false
  if sameLesson then
    -- concurrency.ts toldConcurrencyThrottle (inline: the chunk is at Lua's 200 locals): each further throttle of the lesson's claims is one more over.
    state.inFlightCap = math.max(1, (state.inFlightCap or 1) - 1)
  elseif told then
    -- concurrency.ts oursOutAtSend: those still out, or, where more, our log's units sent within a round trip before it.
    local fromMs, units = observation.sentAtMs - math.max(1, state.rttMs), 0
    for _, slot in ipairs(state.slots) do
      if slot[1] > fromMs and slot[1] <= observation.sentAtMs then units = units + slot[3] end
    end
    local cap = math.max(1, math.min(state.inFlightCap or MAX_IN_FLIGHT, math.max(inFlightBefore - 1, floor(units / state.unitsPerRequest))))
    if state.concurrency == "unknown" then
      if windowIsGuessed(state) and state.notBeforeMs > observation.nowMs then state.notBeforeMs = clampTime(observation.nowMs) end
      forgetRate(state)
      state.concurrency = "silent"
    end
    state.inFlightCap = cap
    state.inFlightCapGrows = false
    state.learnedAtSeq = state.seq
  elseif state.concurrency == "silent" then
    silentThrottle(state, observation)
  elseif observation.limitType == "concurrency" or concurrent then
    -- concurrency.ts concurrencyThrottle (inline: the chunk is at Lua's 200 locals): once per lesson, and no higher than a limit shown.
    if not (observation.seq <= state.learnedAtSeq and state.inFlightCap ~= nil) then
      state.inFlightCap = math.max(1, math.min(state.inFlightCap or MAX_IN_FLIGHT, inFlightBefore - 1))
      state.inFlightCapGrows = false
      state.learnedAtSeq = state.seq
    end
  elseif observation.budget == nil then
    local beforeLimit, beforeRefill = state.limit, state.refill
    local fresh = observation.seq > state.learnedAtSeq
    outlasted = learnFromThrottle(state, observation)
    if state.anchor == nil then state.pacedCleanUnits = 0 end
    if fresh then silentProbeFailed(state, beforeLimit, beforeRefill) end
  elseif observation.budget.remaining > 0 and state.inFlightCap == nil then
    state.inFlightCap = 1
    state.inFlightCapGrows = true
  end
  -- observe.ts: the scope holds for the throttle's wait (not our backoff under a concurrency limit,
  -- nor where the throttle found the window longer: that holds a quarter of the time measured).
  if outlasted or observation.waitMs == nil or observation.waitMs < 0 or (observation.waitFromServer ~= true and concurrent) then return end
  local untilMs = clampTime(observation.nowMs + observation.waitMs)
  if untilMs > state.notBeforeMs then
    state.notBeforeMs = untilMs
    state.notBeforeReason = observation.reason
    state.notBeforeType = observation.limitType
  end
end

-- observe.ts budgetShownOnlyOnThrottles: a probe's success after the reading's reset that shows no budget;
-- the reset brought the limit back, less our starts since.
local function budgetShownOnlyOnThrottles(state, observation)
  local anchor = state.anchor
  local limit = state.limit
  if not anchor or state.budgetOnSuccess or anchor.resetAtMs == 0 or observation.sentAtMs < anchor.resetAtMs or limit == nil or holdsConcurrency(state) then return end
  local sinceResetUnits = 0
  for _, slot in ipairs(state.slots) do
    if slot[1] >= anchor.resetAtMs then sinceResetUnits = sinceResetUnits + slot[3] end
  end
  state.anchor = { remaining = math.max(0, limit - sinceResetUnits), seq = state.seq, atMs = observation.sentAtMs, resetAtMs = 0, lateUnits = 0, answeredAtMs = observation.nowMs, ownOutAtSend = 0 }
end

-- observe.ts spentReadingAnswered: a success after a reading taken back at a reset, with no reset of
-- its own and no window known, takes the reading again: what it left less ours since, plus two units.
local function spentReadingAnswered(state, observation, units)
  local anchor = state.anchor
  local limit = state.limit
  if not anchor or state.budgetOnSuccess or anchor.resetAtMs ~= 0 or state.windowMs ~= nil or limit == nil or holdsConcurrency(state) or observation.seq <= anchor.seq then return end
  local left = anchor.remaining - unreflectedUnits(state, anchor)
  state.anchor = { remaining = math.max(0, math.min(limit, left + 2 * units)), seq = state.seq, atMs = clampTime(observation.nowMs), resetAtMs = anchor.resetAtMs, lateUnits = 0, answeredAtMs = anchor.answeredAtMs, ownOutAtSend = anchor.ownOutAtSend }
end

-- observe.ts SLOW_START_INITIAL_IN_FLIGHT: in flight once a cold scope's probe came back showing nothing.
local SLOW_START_INITIAL_IN_FLIGHT = 4

local function applyOk(state, observation, units, inFlightBefore, options)
  state.throttleStreak = 0
  state.breakerOpen = false
  -- observe.ts applyOk: a replayed answer was not admitted and teaches nothing of the budget.
  if observation.counted == false then return end
  if state.concurrency == "silent" then return growSilentCap(state, units, inFlightBefore) end
  if state.inFlightCapGrows and state.inFlightCap ~= nil then
    -- observe.ts slowStartGrows (SLOW_START_FREE_IN_FLIGHT 8, SLOW_START_DOUBLING_MS 1000; no room for
    -- more locals in the main chunk): past 8 in flight, the cap grows by rttMs / 1000 per success.
    local rttMs = math.min(1000, math.max(1, state.rttMs))
    local seq = observation.seq
    if state.inFlightCap < 8 or floor((seq * rttMs) / 1000) ~= floor(((seq - 1) * rttMs) / 1000) then
      state.inFlightCap = math.min(MAX_IN_FLIGHT, state.inFlightCap + 1)
    end
    if state.inFlightCap == MAX_IN_FLIGHT then state.inFlightCapGrows = false end
    if state.limit ~= nil and state.inFlightCap >= state.limit then
      state.inFlightCap = nil
      state.inFlightCapGrows = false
    end
  elseif observation.budget == nil and state.anchor == nil and state.limit == nil and state.inFlightCap == nil then
    state.inFlightCap = SLOW_START_INITIAL_IN_FLIGHT
    state.inFlightCapGrows = true
  end
  if observation.budget ~= nil then return end
  probeEstimatedRate(state, observation, units)
  if options.probeSilentRate ~= false then probeSilentRate(state, observation, units) end
  windowFromFirstSuccess(state, observation)
  local sentAtMs = clampTime(observation.sentAtMs)
  if state.anchor == nil and state.learnedAtSeq > 0 and observation.seq <= state.learnedAtSeq and state.windowStartMs > 0 and sentAtMs < state.windowStartMs then
    if state.limit ~= nil then state.limit = math.min(MAX_FIGURE, state.limit + units) end
    return
  end
  -- observe.ts: the first success after a lesson on an assumed window begins the next lesson's units.
  local nextEpisode = windowIsGuessed(state) and state.okInWindow == 0 and observation.seq > state.learnedAtSeq
  if state.windowStartMs == 0 or sentAtMs < state.windowStartMs or nextEpisode then state.windowStartMs = sentAtMs end
  state.okInWindow = state.okInWindow + units
end

-- observe.ts windowTrialAnswered: a trial's throttle raises the floor (and is taken: true); its
-- success moves the window's units earlier by what it saved (false: the answer goes on as any other).
local function windowTrialAnswered(state, observation)
  local windowMs = state.windowMs
  if windowMs == nil or state.anchor ~= nil or state.windowSource ~= "inferred" or state.refill ~= "window" then return false end
  if observation.kind ~= "ok" and observation.kind ~= "throttled" then return false end
  local sentAtMs = clampTime(observation.sentAtMs)
  local firstMs = nil
  for _, s in ipairs(state.slots) do
    if s[2] ~= observation.seq and s[1] < sentAtMs and s[1] > sentAtMs - windowMs then
      firstMs = s[1]
      break
    end
  end
  if firstMs == nil then return false end
  local distanceMs = sentAtMs - firstMs
  if observation.kind == "throttled" then
    state.windowFloorMs = math.max(state.windowFloorMs, distanceMs)
    state.slots = filterSlots(state.slots, function(s) return s[2] ~= observation.seq end)
    return true
  end
  local savedMs = windowMs - distanceMs
  for _, s in ipairs(state.slots) do
    if s[1] < sentAtMs and s[2] ~= observation.seq then s[1] = math.max(0, s[1] - savedMs) end
  end
  return false
end

-- observe.ts holdPolicyWindow: a sliding log's length is the policy's w= where it names one.
local function holdPolicyWindow(state, policyWindowMs)
  if policyWindowMs == nil or state.refill ~= "window" or state.windowSource == "shown" or state.windowMs == nil then return end
  state.windowMs = policyWindowMs
end

local function observeInPlace(state, given, options)
  local observation = checked(given, state)
  local nowMs = observation.nowMs
  state.updatedAtMs = math.max(state.updatedAtMs, nowMs)
  local inFlightBefore = 0
  for _, f in ipairs(state.inFlight) do
    if f[2] > nowMs then inFlightBefore = inFlightBefore + 1 end
  end
  local units = unitsOfSeq(state, observation.seq) or state.unitsPerRequest
  local wasInFlight = false
  local outAtGrant = 0
  for _, f in ipairs(state.inFlight) do
    if f[1] == observation.seq then
      wasInFlight = true
      outAtGrant = f[3]
    end
  end
  state.inFlight = filterSlots(state.inFlight, function(f) return f[1] ~= observation.seq end)
  -- observe.ts: a late claim the server did not count after all gives its unit back.
  local anchor = state.anchor
  if anchor and wasInFlight and observation.seq < anchor.seq and (observation.kind == "throttled" or observation.counted == false or countedBeforeAnchor(state, anchor, observation)) then
    anchor.lateUnits = math.max(0, anchor.lateUnits - units)
  end
  if observation.kind ~= "lost" then
    local sampleMs = math.max(0, nowMs - observation.sentAtMs)
    if state.rttMs == 0 then state.rttMs = sampleMs else state.rttMs = jsRound(state.rttMs * 0.8 + sampleMs * 0.2) end
  end
  local answersProbe = state.probe ~= nil and state.probe.seq == observation.seq
  if answersProbe then state.probe = nil end
  local answersTrial = state.trialSeq ~= 0 and state.trialSeq == observation.seq
  if answersTrial then state.trialSeq = 0 end
  if answersTrial and observation.budget == nil and windowTrialAnswered(state, observation) then
    if wasInFlight then state.lastAnsweredAtMs = math.max(state.lastAnsweredAtMs, nowMs) end
    prune(state, nowMs)
    return
  end
  if observation.kind == "throttled" and observation.seq > state.learnedAtSeq then ruleOutInferredConcurrency(state) end
  local probedSpent = answersProbe and CW.probesForWindowLength(state)
  if observation.budget and not applyConcurrentBudget(state, observation, observation.budget, options.leaseMs, outAtGrant, answersProbe) then
    applyShape(state, observation.budget)
    learnBucketFromAdmitted(state, observation, observation.budget.remaining)
    applyAnchor(state, observation, observation.budget, options.leaseMs)
    -- sliding.ts lengthenFromThrottle (inline: the chunk is at Lua's 200 locals; Redis sees every claim):
    -- a spent throttle's reset, less the rounding, less the send of the limit-th newest unit of ours, bounds the window below.
    local resetAtMs, limit, windowMs = nn(observation.budget.resetAtMs) or 0, state.limit, state.windowMs
    if observation.kind == "throttled" and state.refill == "window" and state.windowSource == "inferred" and windowMs ~= nil and limit ~= nil
      and observation.budget.remaining <= 0 and resetAtMs > observation.sentAtMs and state.othersPerMs == 0 and state.reserveUnits == 0 then
      local uncounted = limit
      for i = #state.slots, 1, -1 do
        local slot = state.slots[i]
        if slot[1] <= observation.sentAtMs and slot[2] ~= observation.seq then
          uncounted = uncounted - slot[3]
          if uncounted <= 0 then
            local boundMs = resetAtMs - ROUNDING_MS - slot[1]
            if boundMs > windowMs then state.windowMs = math.min(MAX_FIGURE, boundMs) end
            break
          end
        end
      end
    end
    holdPolicyWindow(state, observation.budget.policyWindowMs)
  end
  if observation.counted == false then state.slots = filterSlots(state.slots, function(s) return s[2] ~= observation.seq end) end
  if observation.kind == "throttled" then
    applyThrottle(state, observation, options, inFlightBefore)
  elseif observation.kind == "ok" then
    applyOk(state, observation, units, inFlightBefore, options)
  end
  if observation.budget == nil and (observation.kind == "ok" or observation.kind == "throttled") then learnSilentConcurrency(state, observation) end
  if answersProbe and observation.kind == "ok" and observation.budget == nil then
    budgetShownOnlyOnThrottles(state, observation)
  elseif observation.kind == "ok" and observation.budget == nil then
    spentReadingAnswered(state, observation, units)
  end
  learnReserve(state, observation, units, probedSpent)
  if wasInFlight then state.lastAnsweredAtMs = math.max(state.lastAnsweredAtMs, nowMs) end
  prune(state, nowMs)
end

-- index.ts holdUntil (the reason arrives clipped).
local function holdUntil(state, untilMs, reason, limitType)
  local atMs = clampTime(untilMs)
  if atMs > state.notBeforeMs then
    state.notBeforeMs = atMs
    state.notBeforeReason = reason
    state.notBeforeType = limitType
  end
end
`;

/** The library: the governor's functions and the state's JSON codec. Every script starts with it. */
export const GOVERNOR_LUA = [GOVERNOR_STATE_LUA, GOVERNOR_MODEL_LUA, GOVERNOR_CLAIM_LUA, GOVERNOR_OBSERVE_LUA].join("\n");
