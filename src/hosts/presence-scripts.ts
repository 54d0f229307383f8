// The Lua scripts of the Redis presence (presence-redis.ts): each reads and
// writes a host's entry, and where it matters its node's liveness key, in
// one step on the Redis server.
// KEYS: presence keys. ARGV[1]: node key prefix. Returns, per key, the five
// fields, or nils when absent or when its node is dead or has restarted since
// it wrote the entry (its key holds another boot). A live node's entry reads
// last seen at the node's latest renewal ('<boot>:<ms>'), when that is later.
// An entry without a boot (a node of an earlier version) is judged by its
// node key's existence alone.
export const GET = `
local out = {}
for i, k in ipairs(KEYS) do
  local v = redis.call('HMGET', k, 'n', 'r', 'c', 'e', 's', 'b')
  if v[1] and v[1] ~= '' then
    local live = redis.call('GET', ARGV[1] .. v[1])
    if not live then
      v = {}
    elseif v[6] and v[6] ~= '' then
      local sep = string.find(live, ':', 1, true)
      if not sep or string.sub(live, 1, sep - 1) ~= v[6] then
        v = {}
      else
        local stamp = string.sub(live, sep + 1)
        if (tonumber(stamp) or 0) > (tonumber(v[5]) or 0) then v[5] = stamp end
      end
    end
  end
  v[6] = nil
  out[i] = v
end
return out
`;
// KEYS: presence keys. ARGV: per key, in order: node, running, capacity,
// engines, lastSeen, ttl, boot. Replaces each entry (a key given twice is
// written twice, in order); returns, per key, the node that held it before
// ('' for none) and this write's epoch 'q': Redis's clock in microseconds, or
// one more than the entry's when that is not larger. The clock keeps epochs
// rising across an entry removed, expired or lost with a restarted Redis, with
// no key of its own. The consecutive sets of one event-loop turn are one call.
export const SET = `
local out = {}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
for i, k in ipairs(KEYS) do
  local a = (i - 1) * 7
  local was = redis.call('HMGET', k, 'n', 'q')
  local epoch = now
  local last = was[2] and tonumber(was[2])
  if last and epoch <= last then epoch = last + 1 end
  redis.call('DEL', k)
  redis.call('HSET', k, 'n', ARGV[a + 1], 'r', ARGV[a + 2], 'c', ARGV[a + 3], 'e', ARGV[a + 4], 's', ARGV[a + 5], 'q', string.format('%.0f', epoch), 'b', ARGV[a + 7])
  redis.call('PEXPIRE', k, ARGV[a + 6])
  out[#out + 1] = was[1] or ''
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

// KEYS[1]: presence key. ARGV[1..7]: the entry's fields as SET's (node ''),
// ARGV[8]: node key prefix. The write of a host that polls over HTTP: it
// replaces no entry of a channel a live node holds (the GET's judgement), so
// a heartbeat that read no channel just before a hello wrote one cannot
// shadow that channel. Returns 1 when written, 0 when left alone.
export const SET_POLLED = `
local v = redis.call('HMGET', KEYS[1], 'n', 'q', 'b')
if v[1] and v[1] ~= '' then
  local live = redis.call('GET', ARGV[8] .. v[1])
  if live and (not v[3] or v[3] == '' or string.sub(live, 1, #v[3] + 1) == v[3] .. ':') then return 0 end
end
local t = redis.call('TIME')
local epoch = tonumber(t[1]) * 1000000 + tonumber(t[2])
local last = v[2] and tonumber(v[2])
if last and epoch <= last then epoch = last + 1 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'n', ARGV[1], 'r', ARGV[2], 'c', ARGV[3], 'e', ARGV[4], 's', ARGV[5], 'q', string.format('%.0f', epoch), 'b', ARGV[7])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1
`;
