"""The Lua scripts that write notifications (app/stream/publish.py): each runs
atomically in Redis, so a notification is never half-written and its checks
(credential, rate limit, idempotency key) hold at the moment it is written."""

# The stream's epoch (keys.EPOCH): the id of the first entry of the stream's life, set by the
# publish that creates the stream (after it was deleted, replaced, or lost with
# Redis's data). A client's last_id from before it comes from another stream:
# not recoverable by replay (state.missed_history).
_NEW_EPOCH_LUA = """
local function add(stream, epoch, ...)
  local fresh = redis.call('EXISTS', stream) == 0
  local id = redis.call('XADD', stream, ...)
  if fresh then redis.call('SET', epoch, id) end
  return id
end
"""

# KEYS: stream, live channel, epoch, idempotency key ("": none), credential key ("":
# none), then one counter key per rate limit.
# ARGV: maxlen, key ttl, "fingerprint", the credential's holder, the number of rate
# limits n, n (amount, window seconds) pairs, then one (envelope JSON without id,
# topic, user, ts) quadruple per notification.
# Checked in this order, each answering without writing a notification:
# - a credential key that no longer names its holder (an API key revoked since
#   this process last looked it up): {-1, ""};
# - each rate limit's count is raised by one (a fixed window, as the limits
#   library counts: the first hit starts the window); the first one past its
#   amount: {-2, its position (1-based)};
# - an idempotency key already seen: {0, what the first publish stored:
#   "fingerprint id ts id ts ..."}.
# Else it writes them all, in order, and answers {1, "id ts id ts ..."}; a new
# idempotency key remembers this publish, in the same atomic step.
PUBLISH = _NEW_EPOCH_LUA + """
if KEYS[5] ~= '' and redis.call('GET', KEYS[5]) ~= ARGV[4] then return {-1, ''} end
local limits = tonumber(ARGV[5])
for i = 1, limits do
  local key, amount = KEYS[5 + i], tonumber(ARGV[4 + 2 * i])
  local count = redis.call('INCR', key)
  if count == 1 then redis.call('EXPIRE', key, ARGV[5 + 2 * i]) end
  if count > amount then return {-2, i} end
end
if KEYS[4] ~= '' then
  local seen = redis.call('GET', KEYS[4])
  if seen then return {0, seen} end
end
local written = {}
for i = 6 + 2 * limits, #ARGV, 4 do
  local id = add(KEYS[1], KEYS[3], 'MAXLEN', '~', ARGV[1], '*',
                 'topic', ARGV[i + 1], 'user', ARGV[i + 2], 'envelope', ARGV[i])
  redis.call('PUBLISH', KEYS[2], '{"id":"' .. id .. '",' .. string.sub(ARGV[i], 2))
  written[#written + 1] = id .. ' ' .. ARGV[i + 3]
end
local answer = table.concat(written, ' ')
if KEYS[4] ~= '' then redis.call('SET', KEYS[4], ARGV[3] .. ' ' .. answer, 'EX', ARGV[2]) end
return {1, answer}
"""

# KEYS: one counter key per rate limit. ARGV: (amount, window seconds) per limit.
# Counts one request against each, as PUBLISH does, for a publish refused before
# it got that far (a body that is not JSON, a bad envelope); answers the first
# limit's position past its amount, or 0.
SPEND = """
for i = 1, #KEYS do
  local count = redis.call('INCR', KEYS[i])
  if count == 1 then redis.call('EXPIRE', KEYS[i], ARGV[2 * i]) end
  if count > tonumber(ARGV[2 * i - 1]) then return i end
end
return 0
"""

# KEYS: stream, live channel, batch key, epoch. ARGV: maxlen, batch-key ttl, then
# one triple (envelope JSON without id, topic, user) per notification. The ids
# are kept under the batch key, in the same atomic step, so that a caller who
# lost the reply can learn whether the batch was written, and its ids.
PUBLISH_BATCH = _NEW_EPOCH_LUA + """
local ids = {}
for i = 3, #ARGV, 3 do
  local id = add(KEYS[1], KEYS[4], 'MAXLEN', '~', ARGV[1], '*',
                 'topic', ARGV[i + 1], 'user', ARGV[i + 2], 'envelope', ARGV[i])
  redis.call('PUBLISH', KEYS[2], '{"id":"' .. id .. '",' .. string.sub(ARGV[i], 2))
  ids[#ids + 1] = id
end
redis.call('SET', KEYS[3], table.concat(ids, ' '), 'EX', ARGV[2])
return ids
"""
