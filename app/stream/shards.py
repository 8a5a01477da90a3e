"""The history's shards: where a notification is kept, what its id says, and cursors.

With ``STREAM_SHARDS=1`` (the default) there is one shard, and everything is as it
always was: the stream ``herald:stream``, the live copy on ``herald:live`` by plain
``PUBLISH``, ids ``<ms>-<seq>``, and a cursor that is one such id.

With ``STREAM_SHARDS=N`` (N > 1, for a Redis Cluster: docs/capacity.md) the history is
N streams, each with its own live channel, each in a hash slot of its own, so that
the publishes, the stream writes and the live copies spread over the cluster's
masters:

- shard 0 keeps ``herald:stream`` (so a deployment that grows from one shard keeps
  every id it gave) and its companions tagged ``{herald:stream}``; shard k > 0 is
  ``herald:stream:<k>`` (or ``herald:stream:<k>.<j>``, chosen so that the shards'
  hash slots spread evenly over a cluster's masters: :func:`_stream_name`), its
  companions tagged with its name;
- each shard's live copy goes by sharded pub/sub (``SPUBLISH``, Redis 7) on
  ``herald:{<stream>}:live``, in the stream's slot, from the same script that
  writes the stream, so a web process that follows a shard reads it from the one
  node that holds it, and only the processes that follow it are written to;
- a notification goes to the shard of its owner (``u:<user>``) when private, else
  to that of its topic's first segment, so a subscription (a topic prefix) lives in
  one shard, ``*`` in all of them, and a user's private notifications in one;
- a notification's id is its stream id in shard 0, and ``<ms>-<seq>-<k>`` in shard
  k: the id says where the notification is;
- a *cursor* is one position per shard, ``<id0>_<id1>_..._<id(N-1)>`` (stream ids,
  ``0-0`` for the start), one opaque string to clients as the contract has it
  (docs/contract.md, "Cursors").

Ids within a shard rise; between shards there is no order but time. A replay sends
each shard's notifications in id order, the shards one after another.
"""
import functools
import zlib
from typing import NamedTuple

from redis.crc import key_slot

from app.stream.keys import LIVE, STREAM

MAX_SHARDS = 64
SEPARATOR = "_"


class Shard(NamedTuple):
    """One shard of ``count``: its stream and the keys written with it, in its slot."""

    index: int
    count: int

    @property
    def stream(self):
        return _stream_name(self.index, self.count)

    @property
    def tag(self):
        return "{" + self.stream + "}"

    def key(self, name):
        """A key kept in this shard's slot: ``herald:{<stream>}:<name>``."""
        return f"herald:{self.tag}:{name}"

    @property
    def epoch(self):
        return self.key("epoch")

    @property
    def last_id(self):
        return self.key("last-id")

    @property
    def once(self):
        return self.key("once:")

    @property
    def batch(self):
        return self.key("batch:")

    @property
    def quota(self):
        return self.key("quota:")

    def group_epoch(self, group):
        return self.key(f"group-epoch:{group}")

    @property
    def live(self):
        """The live copy's channel: ``herald:live`` with one shard, else a shard
        channel in the stream's slot."""
        return LIVE if self.count == 1 else self.key("live")

    @property
    def sharded(self):
        """True when the live copy goes by sharded pub/sub (SPUBLISH / SSUBSCRIBE)."""
        return self.count > 1

    @property
    def suffix(self):
        """What follows a stream id in this shard's notification ids."""
        return "" if self.index == 0 else f"-{self.index}"

    def public(self, entry_id):
        """The notification id of this shard's stream entry ``entry_id`` (str or bytes)."""
        if isinstance(entry_id, bytes):
            entry_id = entry_id.decode()
        return entry_id + self.suffix


class Shards(NamedTuple):
    """The deployment's shards (``STREAM_SHARDS``)."""

    count: int = 1

    def __iter__(self):  # noqa: D105  (the shards, in order)
        return (Shard(k, self.count) for k in range(self.count))

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        if not 0 <= index < self.count:
            raise IndexError(index)
        return Shard(index, self.count)

    def of_topic(self, topic):
        """The shard of public notifications on ``topic`` (and of a subscription to it)."""
        if self.count == 1:
            return self[0]
        return self[_hash(topic.partition(".")[0]) % self.count]

    def of_user(self, user):
        """The shard of ``user``'s private notifications."""
        if self.count == 1:
            return self[0]
        return self[_hash("u:" + user) % self.count]

    def of(self, topic, user=None):
        """Where a notification on ``topic`` (private to ``user``, if given) is kept."""
        return self.of_user(user) if user else self.of_topic(topic)

    def needed(self, user, topics):
        """The indexes of the shards a connection of ``user`` subscribed to ``topics``
        (prefixes, ``*``) can receive anything from, as a frozenset."""
        if self.count == 1 or "*" in topics:
            return frozenset(range(self.count))
        return frozenset([self.of_user(user).index] + [self.of_topic(t).index for t in topics])

    def locate(self, notification_id):
        """``(shard, stream id)`` of a notification id (checked by field_rules)."""
        ms, _, rest = notification_id.partition("-")
        seq, _, index = rest.partition("-")
        return self[int(index) if index else 0], f"{ms}-{seq}"

    # -- cursors ---------------------------------------------------------------------

    def start(self):
        """The cursor of the start of history."""
        return ("0-0",) * self.count

    def parse(self, text):
        """``(positions, exact)`` of a cursor: one stream id per shard, and whether it says
        exactly where each shard was. ``text`` was checked (field_rules.check_cursor).

        A cursor of another form (a single id in a sharded deployment: a client of
        before the history was sharded, or one that passes back a notification id; or
        another number of shards) is not exact: each shard is taken from that id's time
        on, and a replay says ``recovered: false``, so the client reads its feed again."""
        if text in ("0", "0-0"):
            return self.start(), True
        parts = text.split(SEPARATOR)
        if len(parts) == self.count and (self.count > 1 or parts[0].count("-") == 1):
            return tuple(parts), True
        newest = max(parts, key=_id_tuple)
        positions = [f"{newest.partition('-')[0]}-0"] * self.count
        ms, seq, index = (parts[0].split("-") + ["0"])[:3]
        if len(parts) == 1 and int(index) < self.count:  # that id's own shard: exactly
            positions[int(index)] = f"{ms}-{seq}"
        return tuple(positions), False

    def format(self, positions):
        """The cursor string of ``positions`` (one stream id per shard)."""
        return positions[0] if self.count == 1 else SEPARATOR.join(positions)

    def advance(self, positions, notification_id):
        """``positions`` moved on to ``notification_id`` in its shard (never back)."""
        shard, entry_id = self.locate(notification_id)
        if _id_tuple(entry_id) <= _id_tuple(positions[shard.index]):
            return positions
        return positions[:shard.index] + (entry_id,) + positions[shard.index + 1:]


SLOTS = 16384  # a Redis Cluster's hash slots


@functools.lru_cache(maxsize=MAX_SHARDS * 4)
def _stream_name(index, count):
    """Shard ``index`` of ``count``'s stream: ``herald:stream`` for the first; for shard
    k, ``herald:stream:<k>`` or ``herald:stream:<k>.<j>``, the first of those whose
    hash slot falls in the k-th of the ``count`` equal ranges of slots left when the
    one of ``herald:stream`` is taken out. A cluster splits its slots into equal
    ranges, one per master (redis-cli --cluster create), so ``count`` shards, a
    multiple of the masters, are spread evenly over them: with plain names, all three
    of three shards hash onto one master of three."""
    if index == 0:
        return STREAM
    taken = key_slot(STREAM.encode()) * count // SLOTS
    wanted = [r for r in range(count) if r != taken][index - 1]
    for j in range(100_000):
        name = f"{STREAM}:{index}" if j == 0 else f"{STREAM}:{index}.{j}"
        if key_slot(name.encode()) * count // SLOTS == wanted:
            return name
    raise AssertionError(f"no stream name for shard {index} of {count}")


def stream_id(notification_id):
    """The stream id of a notification id (its shard's suffix left out): what Redis
    knows it by in its shard's stream."""
    if isinstance(notification_id, bytes):
        notification_id = notification_id.decode()
    ms, _, rest = notification_id.partition("-")
    return f"{ms}-{rest.partition('-')[0] or 0}"


def _id_tuple(entry_id):
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq.partition("-")[0] or 0)


def _hash(text):
    return zlib.crc32(text.encode())


_configured = None


def configured():
    """The deployment's :class:`Shards`, from ``STREAM_SHARDS`` (read once per process)."""
    global _configured
    if _configured is None:
        from app.settings import get
        _configured = Shards(get("STREAM_SHARDS"))
    return _configured


def use(count):
    """Set this process's shards (the app factory does, from its config; tests)."""
    global _configured
    _configured = Shards(count)
    return _configured
