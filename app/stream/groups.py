"""Consumer groups on ``herald:stream`` that follow the stream across a recreate.

The webhook and digest workers each read the stream as a consumer group. A
group lives inside the stream's key, so when the stream is recreated
(deleted, replaced, lost with Redis' data) the group goes with it and has to
be made again. Made "from now on" (``$``), it would skip whatever was
published between the recreate and that moment. So :func:`ensure` keeps,
per group, the stream epoch (keys.EPOCH: the first id of the stream's life)
it was made in, under ``keys.group_epoch(group)`` (in the stream's slot):

- no group yet on a stream of that same epoch (or ever): from now on (``$``),
  since a new endpoint or digest wants only what comes after it;
- no group, and the epoch changed since the group was made: the stream was
  recreated, so from its beginning (``0``): everything in it was published
  after the recreate;
- no group, and the caller knows the stream was deleted (``deleted=True``:
  Redis said so, UNBLOCKED, to a read waiting on it): from its beginning
  (``0``), whatever the epoch says: whatever the stream holds now was
  published after the delete;
- no stream at all: it is made empty, with the group (from ``0``), and with
  an epoch (the current time, ``<ms>-0``, or the id just above the old
  stream's last, keys.LAST_ID, when the clock is not past it: at or below any
  id the new stream will give, which go on above the old ones), in one step,
  so that a client's cursor from the old stream is still known to be from
  another stream (state.missed_history).

    ensure(client, "herald:webhooks")   # "exists", "$", "0" or "new stream"

Every reader of the stream as a group (the webhook dispatcher, the digest
collector) reads through a :class:`Reader`, which remakes its group when it
went with the stream, so that a ``DEL herald:stream`` never ends a worker.
"""
import redis

from app.stream.keys import EPOCH, LAST_ID, STREAM, group_epoch
from app.stream.publish_scripts import ABOVE_LAST_LUA

# KEYS: stream, epoch, the group's epoch marker, the last id (keys.LAST_ID). ARGV: group,
# "1" when the stream is known to have been deleted since the group was made (then from 0).
# A stream made here goes on above the old one's ids (publish_scripts.ABOVE_LAST_LUA): its
# last id is set to the old one's (XSETID), so the first publish on it gives a greater id,
# and its epoch is that id when the clock is not past it yet.
_ENSURE_LUA = ABOVE_LAST_LUA + """
if redis.call('EXISTS', KEYS[1]) == 0 then
  local t = redis.call('TIME')
  local epoch = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000)) .. '-0'
  redis.call('XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
  local above = above_last(KEYS[4])
  if above then
    redis.call('XSETID', KEYS[1], redis.call('GET', KEYS[4]))
    epoch = above
  end
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
if (made_in and made_in ~= epoch) or ARGV[2] == '1' then start = '0' end
redis.call('XGROUP', 'CREATE', KEYS[1], ARGV[1], start)
redis.call('SET', KEYS[3], epoch)
return start
"""


def marker_key(group):
    """Where the epoch the group was made in is kept (in the stream's slot, as the
    script that makes the group reads it with the stream)."""
    return group_epoch(group)


def ensure(client, group, deleted=False):
    """Make consumer group ``group`` on the stream unless it exists (see the module doc;
    ``deleted``: the stream is known to have been deleted since the group was made);
    returns what was done: ``"exists"``, ``"$"``, ``"0"`` or ``"new stream"``."""
    done = client.eval(_ENSURE_LUA, 4, STREAM, EPOCH, marker_key(group), LAST_ID, group,
                       "1" if deleted else "0")
    return done.decode() if isinstance(done, bytes) else done


def missing(exc):
    """True when a Redis error says the group is gone (with its stream, most often):
    NOGROUP from any group command, or UNBLOCKED, which ends an ``XREADGROUP … BLOCK``
    waiting on a stream (or group) that is deleted meanwhile."""
    text = str(exc)
    return "NOGROUP" in text or text.startswith("UNBLOCKED")


def _deleted_under_us(exc):
    """Redis ended a waiting read because the stream's key was deleted."""
    text = str(exc)
    return text.startswith("UNBLOCKED") and "stream key" in text


_DONE = {"new stream": "with the stream, empty: what is published next is read",
         "0": "from the new stream's beginning: nothing published since is skipped",
         "$": "from now on", "exists": "(a peer had made it already)"}


class Reader:
    """Reads ``herald:stream`` as ``consumer`` of ``group``, ``count`` entries at most,
    riding out the stream's deletion.

    A consumer group lives in the stream's key: ``DEL herald:stream`` takes it
    along, ending a read waiting on the stream with ``UNBLOCKED the stream key
    no longer exists`` and any later one with NOGROUP. Either way the reader
    makes the group again (:func:`ensure`), logs one warning saying so, calls
    ``on_regroup`` (the caller's own pending entries went with the group: it
    starts over) and answers no entries; the next read goes on.

    Where the remade group starts: from the new stream's beginning (``0``),
    never from "now" (``$``). The stream was deleted, so everything in it was
    published after the delete and nothing is read twice, while ``$`` would
    skip what was published between the delete and the remake. (Only a group
    destroyed on a stream still of the same epoch is remade from ``$``; see
    the module doc.)
    """

    def __init__(self, client, group, consumer, count, log, on_regroup=lambda: None):
        self.client, self.group, self.consumer, self.count = client, group, consumer, count
        self.log, self.on_regroup = log, on_regroup

    def read(self, start, block_ms=None):
        """``XREADGROUP`` from ``start`` (``"0"``: our own pending entries, ``">"``: new
        ones), waiting up to ``block_ms`` when given; its entries (``[(id, fields)]``)."""
        try:
            replies = self.client.xreadgroup(self.group, self.consumer, {STREAM: start},
                                             count=self.count, block=block_ms)
        except redis.ResponseError as exc:
            if not self.regrouped(exc):
                raise
            return []
        return replies[0][1] if replies else []

    def regrouped(self, exc):
        """When ``exc`` (from any command on the group) says the group is gone: make it
        again, say so, call ``on_regroup``, and answer True; False for any other error
        (the caller raises it)."""
        if not missing(exc):
            return False
        deleted = _deleted_under_us(exc)
        done = ensure(self.client, self.group, deleted=deleted)
        what = ("herald:stream was deleted while this worker waited on it" if deleted else
                f"consumer group {self.group} is gone (herald:stream was deleted or recreated, "
                "or the group destroyed)")
        self.log.warning("%s (Redis: %s); the group is made again %s", what, exc,
                         _DONE.get(done, done))
        self.on_regroup()
        return True
