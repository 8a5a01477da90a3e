"""Consumer groups on ``herald:stream`` that follow the stream across a recreate.

The webhook and digest workers each read the stream as a consumer group. A
group lives inside the stream's key, so when the stream is recreated
(deleted, replaced, lost with Redis' data) the group goes with it and has to
be made again. Made "from now on" (``$``), it would skip whatever was
published between the recreate and that moment. So :func:`ensure` keeps,
per group, the stream epoch (keys.EPOCH: the first id of the stream's life)
it was made in, under ``<group>:epoch``:

- no group yet on a stream of that same epoch (or ever): from now on (``$``),
  since a new endpoint or digest wants only what comes after it;
- no group, and the epoch changed since the group was made: the stream was
  recreated, so from its beginning (``0``): everything in it was published
  after the recreate;
- no stream at all: it is made empty, with the group (from ``0``), and with
  an epoch (the current time, ``<ms>-0``, at or below any id the new stream
  will give), in one step, so that a client's cursor from the old stream is
  still known to be from another stream (state.missed_history).

    ensure(client, "herald:webhooks")   # "exists", "$", "0" or "new stream"
"""
from app.stream.keys import EPOCH, STREAM

# KEYS: stream, epoch, the group's epoch marker. ARGV: group.
_ENSURE_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then
  local t = redis.call('TIME')
  local epoch = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000)) .. '-0'
  redis.call('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
  redis.call('SET', KEYS[2], epoch)
  redis.call('SET', KEYS[3], epoch)
  return 'new stream'
end
local epoch = redis.call('GET', KEYS[2]) or ''
for _, group in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  if group[2] == ARGV[1] then
    redis.call('SET', KEYS[3], epoch)
    return 'exists'
  end
end
local made_in = redis.call('GET', KEYS[3])
local start = '$'
if made_in and made_in ~= epoch then start = '0' end
redis.call('XGROUP', 'CREATE', KEYS[1], ARGV[1], start)
redis.call('SET', KEYS[3], epoch)
return start
"""


def marker_key(group):
    """Where the epoch the group was made in is kept."""
    return f"{group}:epoch"


def ensure(client, group):
    """Make consumer group ``group`` on the stream unless it exists (see the module doc);
    returns what was done: ``"exists"``, ``"$"``, ``"0"`` or ``"new stream"``."""
    done = client.eval(_ENSURE_LUA, 3, STREAM, EPOCH, marker_key(group), group)
    return done.decode() if isinstance(done, bytes) else done


def missing(exc):
    """True when a Redis error says the group (or the stream) is gone."""
    return "NOGROUP" in str(exc)
