/**
 * The Redis limiter's Lua scripts. Each runs atomically on the server, on the server's clock
 * (`TIME`), so no replica's clock and no read-modify-write between replicas decides anything.
 * Every key a script touches carries the same tenant hash tag and is passed in KEYS: one slot.
 *
 * Layout per check (tenant-relative key `K`, all under `{t:<tenant>}`):
 *   rate    K        sorted set: grant id → admission time (ms)
 *   budget  K        hash: `w` window index, `used` booked, `held` sum of reservations, `r:<id>` each one
 *           K:exp    sorted set: grant id → reservation expiry (ms)
 *   lease   K        sorted set: grant id → lease expiry (ms)
 *   repeat  K        counter, expiring `windowMs` after the first hit
 *   denied           hash: `<minute>|<label>` → refusals (for `throttled`)
 */
import { createHash } from "node:crypto";
import type { Redis } from "./redis.ts";
import { DENIAL_MINUTE_MS } from "./limiter.ts";

/** What every script starts with: the server's clock. Numbers handed to `redis.call` are formatted exactly by Redis 7. */
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
`;

/**
 * KEYS: each check's keys in order (a budget's hash then its expiry set), then the denial hash.
 * ARGV: grant id, hold TTL (ms), then per check: kind, limit, amount, window (ms), label.
 * Returns {1, now µs, remaining per check…} or {0, failed check index (0-based), retry ms, used, now µs}.
 * Key lifetimes are set with plain PEXPIRE (one call): a rate log lives its window, a lease set
 * the hold TTL, a budget a window + the hold TTL; this assumes one hold TTL per deployment.
 */
const ADMIT = `${PRELUDE}
local id, ttl = ARGV[1], tonumber(ARGV[2])
local n = (#ARGV - 2) / 5
local remaining = {}

-- A budget moved to the window holding now (what was booked belongs to the old window; held
-- reservations carry over), after booking at their estimate the reservations past their TTL
-- (never settled: a crashed replica). Returns the window index and used + held.
local function budget(hash, exp, win)
  local w = math.floor(now / win)
  local state = redis.call('HMGET', hash, 'w', 'used', 'held')
  local booked, held = tonumber(state[2]) or 0, tonumber(state[3]) or 0
  if tonumber(state[1]) ~= w then
    redis.call('HSET', hash, 'w', w, 'used', 0)
    booked = 0
  end
  for _, rid in ipairs(redis.call('ZRANGEBYSCORE', exp, '-inf', now, 'LIMIT', 0, 100)) do
    local amount = redis.call('HGET', hash, 'r:' .. rid)
    if amount then
      redis.call('HINCRBY', hash, 'held', 0 - tonumber(amount))
      redis.call('HINCRBY', hash, 'used', amount)
      redis.call('HDEL', hash, 'r:' .. rid)
      booked, held = booked + tonumber(amount), held - tonumber(amount)
    end
    redis.call('ZREM', exp, rid)
  end
  return w, booked + held
end

local k = 1
for i = 1, n do
  local a = 2 + (i - 1) * 5
  local kind, limit, amount, win = ARGV[a + 1], tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local key = KEYS[k]
  local used, retry
  if kind == 'rate' then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - win)
    used = redis.call('ZCARD', key)
    if used >= limit then
      -- The slot that frees first is the (used - limit + 1)-th oldest admission.
      retry = tonumber(redis.call('ZRANGE', key, used - limit, used - limit, 'WITHSCORES')[2]) + win - now
    end
    k = k + 1
  elseif kind == 'budget' then
    local w
    w, used = budget(key, KEYS[k + 1], win)
    if used + amount > limit then retry = (w + 1) * win - now end
    k = k + 2
  elseif kind == 'lease' then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    used = redis.call('ZCARD', key)
    if used >= limit then retry = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2]) - now end
    k = k + 1
  else
    used = tonumber(redis.call('GET', key) or 0)
    if used >= limit then retry = redis.call('PTTL', key) end
    k = k + 1
  end
  if retry then
    local denied = KEYS[#KEYS]
    local minute = math.floor(now / ${DENIAL_MINUTE_MS})
    redis.call('HINCRBY', denied, minute .. '|' .. ARGV[a + 5], 1)
    redis.call('HDEL', denied, (minute - 2) .. '|' .. ARGV[a + 5])
    redis.call('PEXPIRE', denied, ${2 * DENIAL_MINUTE_MS})
    return {0, i - 1, math.max(0, math.ceil(retry)), used, math.floor(now * 1000)}
  end
  if kind == 'budget' then remaining[i] = limit - used - amount else remaining[i] = limit - used - 1 end
end

k = 1
for i = 1, n do
  local a = 2 + (i - 1) * 5
  local kind, win = ARGV[a + 1], tonumber(ARGV[a + 4])
  local key = KEYS[k]
  if kind == 'rate' then
    redis.call('ZADD', key, now, id)
    redis.call('PEXPIRE', key, math.ceil(win))
    k = k + 1
  elseif kind == 'budget' then
    redis.call('HSET', key, 'r:' .. id, ARGV[a + 3])
    redis.call('HINCRBY', key, 'held', ARGV[a + 3])
    redis.call('ZADD', KEYS[k + 1], now + ttl, id)
    redis.call('PEXPIRE', key, math.ceil(win + ttl))
    redis.call('PEXPIRE', KEYS[k + 1], math.ceil(win + ttl))
    k = k + 2
  elseif kind == 'lease' then
    redis.call('ZADD', key, now + ttl, id)
    redis.call('PEXPIRE', key, math.ceil(ttl))
    k = k + 1
  else
    if redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, math.ceil(win)) end
    k = k + 1
  end
end
return {1, math.floor(now * 1000), unpack(remaining)}
`;

/**
 * KEYS: each hold's keys in order (a lease's set; a budget's hash then its expiry set).
 * ARGV: grant id, then per hold: kind, actual amount, estimate, window (ms).
 * The usage is booked in the window current now; a budget recreated here (expired meanwhile)
 * lives one window.
 */
const SETTLE = `${PRELUDE}
local id = ARGV[1]
local k = 1
for a = 2, #ARGV, 4 do
  if ARGV[a] == 'lease' then
    redis.call('ZREM', KEYS[k], id)
    k = k + 1
  else
    local hash, exp = KEYS[k], KEYS[k + 1]
    local actual, estimate, win = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
    local w = math.floor(now / win)
    local state = redis.call('HMGET', hash, 'w', 'r:' .. id)
    if tonumber(state[1]) ~= w then
      redis.call('HSET', hash, 'w', w, 'used', 0)
      if not state[1] then redis.call('PEXPIRE', hash, math.ceil(win)) end
    end
    local amount = state[2]
    if amount then
      redis.call('HINCRBY', hash, 'held', 0 - tonumber(amount))
      redis.call('HDEL', hash, 'r:' .. id)
      redis.call('ZREM', exp, id)
      redis.call('HINCRBY', hash, 'used', actual)
    elseif actual > estimate then
      -- Expired and already booked at its estimate: only the overrun is added.
      redis.call('HINCRBY', hash, 'used', actual - estimate)
    end
    k = k + 2
  end
end
return 1
`;

/** KEYS: as SETTLE. ARGV: grant id, hold TTL (ms), then per hold its kind. */
const RENEW = `${PRELUDE}
local id, ttl = ARGV[1], tonumber(ARGV[2])

-- Lengthens a key's life to at least ms (never shortens it).
local function extend(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, math.ceil(ms)) end
end

local k = 1
for a = 3, #ARGV do
  local set = KEYS[k]
  if ARGV[a] == 'budget' then set = KEYS[k + 1] end
  if redis.call('ZADD', set, 'XX', 'CH', now + ttl, id) == 1 then
    extend(set, ttl)
    if ARGV[a] == 'budget' then extend(KEYS[k], ttl) end
  end
  if ARGV[a] == 'budget' then k = k + 2 else k = k + 1 end
end
return 1
`;

/** A script run by its SHA, loaded on first use and again after a Redis restart (NOSCRIPT). */
export class LuaScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash("sha1").update(source).digest("hex");
  }

  async run(client: Redis, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
      return client.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

export const SCRIPTS = { admit: new LuaScript(ADMIT), settle: new LuaScript(SETTLE), renew: new LuaScript(RENEW) };
