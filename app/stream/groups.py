"""Consumer groups on the history that follow each stream across a recreate.

The webhook and digest workers each read the history as a consumer group. A
group lives inside the stream's key, so when the stream is recreated
(deleted, replaced, lost with Redis' data) the group goes with it and has to
be made again. Made "from now on" (``$``), it would skip whatever was
published between the recreate and that moment. So :func:`ensure` keeps,
per group, the stream epoch (the shard's ``epoch`` key: the first id of the
stream's life) it was made in, under the shard's ``group_epoch(group)`` (in
the stream's slot):

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
  stream's last, the shard's ``last_id`` key, when the clock is not past it:
  at or below any id the new stream will give, which go on above the old
  ones), in one step, so that a client's cursor from the old stream is still
  known to be from another stream (state.missed_history).

    ensure(client, "herald:webhooks")       # shard 0: "exists", "$", "0" or "new stream"
    ensure_all(client, "herald:webhooks")   # every shard: [one of those per shard]

**A sharded history** (``STREAM_SHARDS=N``, app/stream/shards.py) is N streams,
and a group is N groups of the same name, one in each shard's stream, each made
and remade by the rules above with that shard's own keys (its epoch, its last
id, its marker), in a script of its own: on a Redis Cluster a command reaches
one slot only, and on one Redis the same rule is kept (every command here, the
reads included, touches one shard's keys), so nothing counts on two shards
changing together. :func:`ensure_all` makes a group in every shard (what
the workers and the stores call); :func:`ensure` (like app.stream.history's
functions) works in one shard, shard 0 unless told. A notification read from
shard k is handed on under its notification id (``<ms>-<seq>-<k>``:
``Shard.public``), which names its shard, so that :func:`ack` acknowledges it
there. With one shard every key, id and command is as it always was.

Every reader of the history as a group (the webhook dispatcher, the digest
collector) reads through a :class:`Reader`, which reads every shard and remakes
a shard's group when it went with that shard's stream, so that a ``DEL
herald:stream`` (or of any shard's stream) never ends a worker.
"""
import heapq
from contextlib import contextmanager

import redis

from app.stream import shard_wait
from app.stream.envelope import id_key
from app.stream.publish_scripts import ABOVE_LAST_LUA
from app.stream.shards import configured as configured_shards

# KEYS: a shard's stream, its epoch, the group's epoch marker, its last id (all in the
# stream's slot: app/stream/shards.py). ARGV: group, "1" when the stream is known to have
# been deleted since the group was made (then from 0).
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


def _shard(shard):
    """``shard``, or the first of the deployment's (the only one, with STREAM_SHARDS=1)."""
    return shard if shard is not None else configured_shards()[0]


def marker_key(group, shard=None):
    """Where the epoch the group was made in is kept, in ``shard`` (in its stream's slot,
    as the script that makes the group reads it with the stream)."""
    return _shard(shard).group_epoch(group)


def ensure(client, group, deleted=False, shard=None):
    """Make consumer group ``group`` on ``shard``'s stream (shard 0 by default) unless it
    exists (see the module doc; ``deleted``: the stream is known to have been deleted
    since the group was made); returns what was done: ``"exists"``, ``"$"``, ``"0"`` or
    ``"new stream"``."""
    shard = _shard(shard)
    done = client.eval(_ENSURE_LUA, 4, shard.stream, shard.epoch, marker_key(group, shard),
                       shard.last_id, group, "1" if deleted else "0")
    return done.decode() if isinstance(done, bytes) else done


def ensure_all(client, group, shards=None):
    """:func:`ensure` ``group`` in every shard (``shards``: the deployment's by default),
    one shard after another; what was done in each, in shard order."""
    return [ensure(client, group, shard=shard) for shard in shards or configured_shards()]


def locate(notification_id, shards=None):
    """``(shard, stream id)`` of a notification id as a :class:`Reader` hands it on (str
    or bytes)."""
    if isinstance(notification_id, bytes):
        notification_id = notification_id.decode()
    return (shards or configured_shards()).locate(notification_id)


def ack(client, group, notification_ids, shards=None):
    """``XACK`` notifications (ids as a :class:`Reader` hands them on) in ``group``: one
    XACK per shard they are in, each with its own stream ids. Returns how many were
    acknowledged."""
    by_shard = {}
    for notification_id in notification_ids:
        shard, entry_id = locate(notification_id, shards)
        by_shard.setdefault(shard, []).append(entry_id)
    done = 0
    for shard, entry_ids in by_shard.items():
        with in_shard(shard):
            done += client.xack(shard.stream, group, *entry_ids)
    return done


@contextmanager
def in_shard(shard):
    """Around a command on ``shard``'s group: a Redis error it raises is tagged with the
    shard (``exc.shard``), so that :meth:`Reader.regrouped` remakes the group there only."""
    try:
        yield
    except redis.ResponseError as exc:
        exc.shard = shard
        raise


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
    """Reads the history as ``consumer`` of ``group``, ``count`` entries at most (per
    shard), riding out a stream's deletion.

    A consumer group lives in the stream's key: ``DEL herald:stream`` takes it
    along, ending a read waiting on the stream with ``UNBLOCKED the stream key
    no longer exists`` and any later one with NOGROUP. Either way the reader
    makes the group again (:func:`ensure`, in that shard), logs one warning
    saying so, calls ``on_regroup`` (the caller's own pending entries went with
    the group: it starts over) and answers no entries from that shard; the
    next read goes on.

    Where the remade group starts: from the new stream's beginning (``0``),
    never from "now" (``$``). The stream was deleted, so everything in it was
    published after the delete and nothing is read twice, while ``$`` would
    skip what was published between the delete and the remake. (Only a group
    destroyed on a stream still of the same epoch is remade from ``$``; see
    the module doc.)

    With one shard a read is one ``XREADGROUP``, as it always was. With several
    (STREAM_SHARDS > 1), each read reads every shard, one ``XREADGROUP`` each (a
    command reaches one shard's slot), ``count`` entries at most from each, so a
    busy shard neither starves the others nor is held back by them; a read that
    waits (``block_ms``) sends each shard's ``XREADGROUP … BLOCK`` at once, on a
    connection of its own, and the first shard to answer ends the others' waits
    (``CLIENT UNBLOCK``), so that an entry in any shard is read as soon as it
    comes, as with one stream. Entries come in their shard's id order, and the
    shards' entries of one read merged by time (their ids' ``<ms>-<seq>``, a tie in
    shard order: two shards' entries of one millisecond have no order to keep); between
    reads there is no order across shards but that. Each entry is handed on under
    its notification id (bytes), which names its shard (:func:`ack`).
    """

    def __init__(self, client, group, consumer, count, log, on_regroup=lambda: None,
                 shards=None):
        self.client, self.group, self.consumer, self.count = client, group, consumer, count
        self.log, self.on_regroup = log, on_regroup
        self.shards = shards or configured_shards()

    def read(self, start, block_ms=None):
        """``XREADGROUP`` from ``start`` (``"0"``: our own pending entries, ``">"``: new
        ones), waiting up to ``block_ms`` when given; its entries (``[(notification id,
        fields)]``)."""
        if len(self.shards) == 1:
            return self._read(self.shards[0], start, block_ms)
        if block_ms is None or start != ">":  # no wait: each shard in turn
            return _by_time([self._read(shard, start, None) for shard in self.shards])
        return self._wait_any(block_ms)

    def _read(self, shard, start, block_ms):
        """One ``XREADGROUP`` in ``shard``."""
        try:
            replies = self.client.xreadgroup(self.group, self.consumer, {shard.stream: start},
                                             count=self.count, block=block_ms)
        except redis.ResponseError as exc:
            if not self.regrouped(exc, shard):
                raise
            return []
        entries = replies[0][1] if replies else []
        if not shard.index:  # shard 0's notification ids are its stream ids
            return entries
        return [(shard.public(entry_id).encode(), fields) for entry_id, fields in entries]

    def _wait_any(self, block_ms):
        """New entries of every shard, waiting up to ``block_ms`` for the first (see the
        class doc and app/stream/shard_wait.py)."""
        found = []
        for shard, reply in shard_wait.wait_any(self.client, self.shards, self.group,
                                                self.consumer, self.count, block_ms):
            if isinstance(reply, redis.exceptions.AskError):  # a cluster's slot moved: the
                found.append(self._read(shard, ">", None))     # client follows it
            elif isinstance(reply, redis.ResponseError):
                if not self.regrouped(reply, shard):
                    raise reply
            else:
                found.append(reply)
        return _by_time(found)

    def regrouped(self, exc, shard=None):
        """When ``exc`` (from any command on the group) says the group is gone: make it
        again (in ``shard``, or the shard :func:`in_shard` tagged ``exc`` with, or else in
        every shard), say so, call ``on_regroup``, and answer True; False for any other
        error (the caller raises it)."""
        if not missing(exc):
            return False
        shard = shard if shard is not None else getattr(exc, "shard", None)
        targets = [shard] if shard is not None else list(self.shards)
        deleted = _deleted_under_us(exc)
        for target in targets:
            done = ensure(self.client, self.group, deleted=deleted, shard=target)
            if done == "exists" and len(targets) > 1:
                continue  # a shard whose group was there: nothing to say
            what = (f"{target.stream} was deleted while this worker waited on it" if deleted
                    else f"consumer group {self.group} is gone ({target.stream} was deleted "
                         "or recreated, or the group destroyed)")
            self.log.warning("%s (Redis: %s); the group is made again %s", what, exc,
                             _DONE.get(done, done))
        self.on_regroup()
        return True


def _by_time(lists):
    """The shards' entry lists (each in id order) as one, by time; a tie in shard order."""
    lists = [entries for entries in lists if entries]
    if len(lists) <= 1:
        return lists[0] if lists else []
    return list(heapq.merge(*lists, key=lambda entry: id_key(entry[0])))
