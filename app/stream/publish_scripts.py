"""The Lua scripts that write notifications (app/stream/publish.py): each runs
atomically in Redis, so a notification is never half-written and its checks
(credential, rate limit, idempotency key) hold at the moment it is written."""

# Where a stream made anew starts (keys.LAST_ID): given the key of the greatest id the
# stream ever gave, nil when Redis's own ids (from its clock) are greater anyway (or
# there is no such key: a new Redis, or one that lost its data), else the smallest id
# above it ("<ms>-<seq + 1>"), for an explicit XADD. Without it a stream recreated within
# the millisecond of the old one's last entry (or after the clock stepped back) started
# at or below the old ids, and whoever follows the stream by the last id it saw (the
# relay, the bridge's egress, the archiver, a client's cursor) skipped them. An id past
# what Lua counts exactly (2^53 ms: never Redis's own) is left to Redis.
ABOVE_LAST_LUA = """
local function above_last(last_key)
  local last = redis.call('GET', last_key)
  if not last then return nil end
  local ms, seq = string.match(last, '^(%d+)-(%d+)$')
  ms, seq = tonumber(ms), tonumber(seq)
  if not ms or ms >= 2^53 then return nil end
  local t = redis.call('TIME')
  if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > ms then return nil end
  if seq < 2^53 - 1 then return string.format('%d-%d', ms, seq + 1) end
  return string.format('%d-0', ms + 1)
end
"""

# The stream's epoch (keys.EPOCH): the id of the first entry of the stream's life, set by the
# publish that creates the stream (after it was deleted, replaced, or lost with
# Redis's data). A client's last_id from before it comes from another stream:
# not recoverable by replay (state.missed_history). A stream made anew starts above
# keys.LAST_ID (above_last), and every script remembers its last id there (remember).
_NEW_EPOCH_LUA = ABOVE_LAST_LUA + """
local function add(stream, epoch, last_key, maxlen, ...)
  local fresh = redis.call('EXISTS', stream) == 0
  local start = fresh and above_last(last_key) or '*'
  local id = redis.call('XADD', stream, 'MAXLEN', '~', maxlen, start, ...)
  if fresh then redis.call('SET', epoch, id) end
  return id
end
local function remember(last_key, id)
  if id then redis.call('SET', last_key, id) end
end
"""

# KEYS: stream, epoch, the last id (keys.LAST_ID), then the idempotency key and the
# credential key when there are, then one counter key per rate limit: only keys, all
# in the stream's hash slot, as a Redis Cluster requires (the live channel is not a
# key, so it is an argument).
# ARGV: the publish command (PUBLISH, or SPUBLISH for a sharded history: app/stream/
# shards.py), what follows the stream id in a notification id (the shard's suffix: ""
# in shard 0), live channel, maxlen, key ttl, "fingerprint", the credential's holder,
# the idempotency key's position in KEYS (0: none), the credential key's (0: none), the
# number of rate limits n, n (amount, window seconds) pairs, then one (envelope JSON
# without id, topic, user, ts) quadruple per notification. The ids answered (and kept
# under the idempotency key) are notification ids: the stream id and the suffix.
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
local command, suffix = ARGV[1], ARGV[2]
local once, credential, limits = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
if credential > 0 and redis.call('GET', KEYS[credential]) ~= ARGV[7] then return {-1, ''} end
local first_limit = #KEYS - limits
for i = 1, limits do
  local key, amount = KEYS[first_limit + i], tonumber(ARGV[9 + 2 * i])
  local count = redis.call('INCR', key)
  if count == 1 then redis.call('EXPIRE', key, ARGV[10 + 2 * i]) end
  if count > amount then return {-2, i} end
end
if once > 0 then
  local seen = redis.call('GET', KEYS[once])
  if seen then
    -- Written again (the same value): a write, so a WAIT after it (PUBLISH_REPLICAS)
    -- confirms that the replicas have everything up to it, the first publish included.
    redis.call('SET', KEYS[once], seen, 'KEEPTTL')
    return {0, seen}
  end
end
local written, id = {}, nil
for i = 11 + 2 * limits, #ARGV, 4 do
  id = add(KEYS[1], KEYS[2], KEYS[3], ARGV[4],
           'topic', ARGV[i + 1], 'user', ARGV[i + 2], 'envelope', ARGV[i])
  redis.call(command, ARGV[3], '{"id":"' .. id .. suffix .. '",' .. string.sub(ARGV[i], 2))
  written[#written + 1] = id .. suffix .. ' ' .. ARGV[i + 3]
end
remember(KEYS[3], id)
local answer = table.concat(written, ' ')
if once > 0 then redis.call('SET', KEYS[once], ARGV[6] .. ' ' .. answer, 'EX', ARGV[5]) end
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

# KEYS: stream, batch key, epoch, last id. ARGV: the publish command, the shard's id
# suffix (as PUBLISH's), live channel, maxlen, batch-key ttl, then one triple
# (envelope JSON without id, topic, user) per notification.
# A batch already written (its key there: a retry after a lost reply) is not written
# again: its ids are answered, and its key written again (the same value) so that a
# WAIT after it confirms the replicas have the batch. The ids
# are kept under the batch key, in the same atomic step, so that a caller who
# lost the reply can learn whether the batch was written, and its ids.
PUBLISH_BATCH = _NEW_EPOCH_LUA + """
local done = redis.call('GET', KEYS[2])
if done then
  redis.call('SET', KEYS[2], done, 'KEEPTTL')
  local written = {}
  for id in string.gmatch(done, '%S+') do written[#written + 1] = id end
  return written
end
local ids, id = {}, nil
for i = 6, #ARGV, 3 do
  id = add(KEYS[1], KEYS[3], KEYS[4], ARGV[4],
           'topic', ARGV[i + 1], 'user', ARGV[i + 2], 'envelope', ARGV[i])
  redis.call(ARGV[1], ARGV[3], '{"id":"' .. id .. ARGV[2] .. '",' .. string.sub(ARGV[i], 2))
  ids[#ids + 1] = id .. ARGV[2]
end
remember(KEYS[4], id)
redis.call('SET', KEYS[2], table.concat(ids, ' '), 'EX', ARGV[5])
return ids
"""


# -- Reading the scripts' replies (app/stream/publish.py) --

def live_command(shard):
    """How a shard's live copy is published: sharded pub/sub when the history is."""
    return "SPUBLISH" if shard.sharded else "PUBLISH"


def text(value):
    """A reply as text, whether it came as bytes or as str."""
    return value.decode() if isinstance(value, bytes) else value


def pairs(words):
    """``[{"id", "ts"}]`` from ``["id", "ts", "id", "ts", ...]``."""
    return [{"id": words[i], "ts": words[i + 1]} for i in range(0, len(words), 2)]


def stored_answer(value):
    """``(fingerprint, [{"id", "ts"}])`` of what an idempotency key keeps.

    Keys written before batches existed (kept a day) hold "id ts fingerprint".
    """
    words = value.split(" ")
    if "-" in words[0]:
        return words[2], [{"id": words[0], "ts": words[1]}]
    return words[0], pairs(words[1:])
