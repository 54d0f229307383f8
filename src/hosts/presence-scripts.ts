// The Lua scripts of the Redis presence (presence-redis.ts): each reads and
// writes a host's entry, and where it matters its node's liveness key, in
// one step on the Redis server. The rules two scripts share are Lua
// functions defined once here (LIVE_STAMP, WRITE_ENTRY) and put at the head
// of each script that needs them.

// Whether node `n` that wrote an entry with boot `b` lives: nil when its key
// (prefix .. n) is gone or holds another boot; else the time of its latest
// renewal ('' for an entry without a boot, judged by the key's existence alone).
const LIVE_STAMP = `
local function live_stamp(prefix, n, b)
  local live = redis.call('GET', prefix .. n)
  if not live then return nil end
  if not b or b == '' then return '' end
  local sep = string.find(live, ':', 1, true)
  if not sep or string.sub(live, 1, sep - 1) ~= b then return nil end
  return string.sub(live, sep + 1)
end
`;

// Replaces entry `k` with the seven fields at ARGV[a + 1 .. a + 7] (node,
// running, capacity, engines, lastSeen, ttl, boot); returns the node that held
// it before ('' for none) and this write's epoch 'q': `now` (Redis's clock in
// microseconds), or one more than the entry's when that is not larger. The
// clock keeps epochs rising across an entry removed, expired or lost with a
// restarted Redis, with no key of its own.
const WRITE_ENTRY = `
local function write_entry(k, a, now)
  local was = redis.call('HMGET', k, 'n', 'q')
  local epoch = now
  local last = was[2] and tonumber(was[2])
  if last and epoch <= last then epoch = last + 1 end
  redis.call('DEL', k)
  redis.call('HSET', k, 'n', ARGV[a + 1], 'r', ARGV[a + 2], 'c', ARGV[a + 3], 'e', ARGV[a + 4], 's', ARGV[a + 5], 'q', string.format('%.0f', epoch), 'b', ARGV[a + 7])
  redis.call('PEXPIRE', k, ARGV[a + 6])
  return was[1] or '', epoch
end
`;

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
`;

// KEYS: presence keys. ARGV[1]: node key prefix. Returns, per key, the five
// fields, or nils when absent or when its node is dead or has restarted since
// it wrote the entry (its key holds another boot). A live node's entry reads
// last seen at the node's latest renewal ('<boot>:<ms>'), when that is later.
// An entry without a boot (a node of an earlier version) is judged by its
// node key's existence alone.
export const GET = `${LIVE_STAMP}
local out = {}
for i, k in ipairs(KEYS) do
  local v = redis.call('HMGET', k, 'n', 'r', 'c', 'e', 's', 'b')
  if v[1] and v[1] ~= '' then
    local stamp = live_stamp(ARGV[1], v[1], v[6])
    if not stamp then
      v = {}
    elseif (tonumber(stamp) or 0) > (tonumber(v[5]) or 0) then
      v[5] = stamp
    end
  end
  v[6] = nil
  out[i] = v
end
return out
`;
// KEYS: presence keys. ARGV: per key, the seven fields of WRITE_ENTRY.
// Replaces each entry (a key given twice is written twice, in order);
// returns, per key, the node that held it before ('' for none) and this
// write's epoch. The consecutive sets of one event-loop turn are one call.
export const SET = `${WRITE_ENTRY}${NOW}
local out = {}
for i, k in ipairs(KEYS) do
  local prev, epoch = write_entry(k, (i - 1) * 7, now)
  out[#out + 1] = prev
  out[#out + 1] = epoch
end
return out
`;
// KEYS: presence keys. ARGV: node, ttl ms, boot. Extends the entries this
// node wrote since it booted (two commands a host); returns the (1-based)
// positions of keys gone (Redis restarted empty) or written under this
// node's name by an earlier boot of it.
export const REFRESH = `
local gone = {}
for i, k in ipairs(KEYS) do
  local v = redis.call('HMGET', k, 'n', 'b')
  if v[1] == ARGV[1] and v[2] == ARGV[3] then
    redis.call('PEXPIRE', k, ARGV[2])
  elseif not v[1] or v[1] == ARGV[1] then
    gone[#gone + 1] = i
  end
end
return gone
`;
// KEYS[1]: the node's liveness key. ARGV[1]: its boot. Deleted only while it is this boot's.
export const NODE_DEL = `
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then redis.call('DEL', KEYS[1]) end
return 0
`;
// KEYS[1]: presence key. ARGV: field, value pairs. Only a live entry changes.
export const PATCH = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
return 0
`;
// KEYS[1]: presence key. ARGV[1]: node. Only the holder may remove it.
export const REMOVE = `
if redis.call('HGET', KEYS[1], 'n') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`;

// KEYS[1]: presence key. ARGV[1..7]: the entry's fields (node ''), ARGV[8]:
// node key prefix. The write of a host that polls over HTTP: it replaces no
// entry of a channel a live node holds (GET's judgement, live_stamp), so a
// heartbeat that read no channel just before a hello wrote one cannot shadow
// that channel. Returns 1 when written, 0 when left alone.
export const SET_POLLED = `${LIVE_STAMP}${WRITE_ENTRY}${NOW}
local v = redis.call('HMGET', KEYS[1], 'n', 'b')
if v[1] and v[1] ~= '' and live_stamp(ARGV[8], v[1], v[2]) then return 0 end
write_entry(KEYS[1], 0, now)
return 1
`;
