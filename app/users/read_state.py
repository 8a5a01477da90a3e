"""Per-user read state: which notifications a user has read, shared by all their tabs.

Stored as a watermark plus exceptions: everything up to ``upto`` is read
("mark all read"), except the ids in ``herald:{u:<user>}:unreadids`` (marked
unread again, or come back from a snooze), and ``herald:{u:<user>}:readids``
holds ids read one by one above it. Both are sorted sets of zero-padded ids,
so lexical order is id order; at most MAX_IDS are kept of each. ``upto``,
``seen`` and ``version`` are the hash ``herald:{u:<user>}:read``. The three
keys share the user's hash tag (app/key_layout.py), so that one transaction
changes them on a Redis Cluster too. Each change is announced on
``herald:control`` in its transaction, and every web process passes it to that
user's connections as a ``read`` event, ``{"upto": ID or null, "ids": [...],
"unread": [...], "version": N}``, so every tab's unread badge follows in real time.

``version`` counts the user's changes (one transaction each, in order), and
the whole state carries the version it is at. A tab that has just changed an
id itself knows the version its change got (the answer carries it) and leaves
an older announcement about that id alone: announcements and answers travel
different paths, and an echo of an earlier change arriving after a later one
once flipped an item back to read for a moment (and redrew it under the
keyboard focus).

Nothing newer than the newest notification in history can be marked: ``upto``
is clamped to it, and newer ids in ``ids`` and ``unread`` are left out of the
change (it says what was applied). A watermark set to the greatest id once
made every later notification read, forever, since it never goes back.

In a sharded history (``STREAM_SHARDS=N``, app/stream/shards.py) an id is
``<ms>-<seq>-<k>`` in shard k: its member keeps the shard (``<padded>-<k>``), and
"the newest notification" is that of the id's own shard (:func:`newest_of_shards`).
The watermarks ``upto`` and ``seen`` compare ids by time, whatever their shards
(between shards there is no other order).
"""
import redis

from app.key_layout import user_tag
from app.stream import control
from app.stream.envelope import EnvelopeError, check_stream_id, id_key
from app.stream.history import newest_id
from app.stream.shards import configured as configured_shards
from app.users.announce import announce

MAX_IDS = 5000
MAX_IDS_PER_CALL = 500
FIELDS = ("ids", "upto", "unread", "seen")


class ReadStateError(ValueError):
    """A malformed read-state change; the message names the field."""


def _keys(user):
    """``user``'s (watermark hash, read ids, unread ids): one hash slot."""
    tag = user_tag(user)
    return f"herald:{tag}:read", f"herald:{tag}:readids", f"herald:{tag}:unreadids"


def pad(entry_id):
    """A notification id as a zero-padded member: lexical order is id order (a shard's
    ``-<k>`` after it, in a sharded history)."""
    ms, seq = id_key(entry_id)
    shard = entry_id.split("-")[2:]
    return f"{ms:020d}-{seq:020d}" + (f"-{int(shard[0])}" if shard else "")


def unpad(member):
    if isinstance(member, bytes):
        member = member.decode()
    ms, seq, *shard = member.split("-")
    return f"{int(ms)}-{int(seq)}" + (f"-{int(shard[0])}" if shard else "")


def _through(entry_id):
    """The ZRANGEBYLEX bound that takes in every member whose id is at or below
    ``entry_id``'s time (in any shard: ``<padded>`` and ``<padded>-<k>`` alike)."""
    ms, seq = id_key(entry_id)
    return f"[{ms:020d}-{seq:020d}-~"  # "~" sorts after "-<k>"'s digits and after ""


def _shard_index(entry_id):
    try:
        return configured_shards().locate(entry_id)[0].index
    except (IndexError, ValueError):  # of a shard this deployment does not have
        return None


def newest_of_shards(client, ids):
    """``{shard index: its newest notification id, None when it has none}`` for the
    shards that ``ids`` (notification ids) are in: what :func:`given` checks them by.
    With one shard, the newest notification's id."""
    newest = {}
    shards = configured_shards()
    for entry_id in ids:
        index = _shard_index(entry_id)
        if index is not None and index not in newest:
            found = newest_id(client, shards[index])  # "0-0" when that shard has none
            newest[index] = shards[index].public(found) if found != "0-0" else None
    return newest


def given(newest, entry_id):
    """Whether ``entry_id`` is not above its shard's newest notification (``newest``:
    :func:`newest_of_shards`): only such an id names a notification given already."""
    index = _shard_index(entry_id)
    return index in newest and id_key(entry_id) <= id_key(newest[index] or "0-0")


def _id_list(data, field):
    values = data.get(field, [])
    if not isinstance(values, list) or len(values) > MAX_IDS_PER_CALL:
        raise ReadStateError(f"{field}: must be a list of at most {MAX_IDS_PER_CALL} ids")
    try:
        for index, entry_id in enumerate(values):
            check_stream_id(entry_id, f"{field}[{index}]")
    except EnvelopeError as exc:
        raise ReadStateError(str(exc)) from None
    return values


def parse(data):
    """``(ids, upto, unread, seen)`` from ``{"ids": [...], "upto": ID, "unread": [...],
    "seen": ID}`` (any may be left out, not all)."""
    if not isinstance(data, dict) or not (set(FIELDS) & set(data)):
        raise ReadStateError('payload: must be {"ids": [id, ...]}, {"upto": id}, '
                             '{"unread": [id, ...]} and/or {"seen": id}')
    unknown = set(data) - set(FIELDS)
    if unknown:
        raise ReadStateError(f"{sorted(unknown)[0]}: is not a known field")
    ids, unread = _id_list(data, "ids"), _id_list(data, "unread")
    upto, seen = data.get("upto"), data.get("seen")
    try:
        if upto is not None:
            check_stream_id(upto, "upto")
        if seen is not None:
            check_stream_id(seen, "seen")
    except EnvelopeError as exc:
        raise ReadStateError(str(exc)) from None
    return ids, upto, unread, seen


def get(client, user):
    """``{"upto": ID or None, "ids": [read ids above upto], "unread": [unread ids at or
    below it], "seen": ID or None, "version": changes so far}``, ids in id order,
    read in one transaction. Everything up to ``seen`` has been shown to the user
    (the unread badge counts only what is newer and unread)."""
    upto_key, ids_key, unread_key = _keys(user)
    with client.pipeline(transaction=True) as pipe:  # MULTI: the three parts and the version agree
        pipe.hmget(upto_key, "upto", "version", "seen")
        pipe.zrange(ids_key, 0, -1)
        pipe.zrange(unread_key, 0, -1)
        (upto, version, seen), ids, unread = pipe.execute()
    return {"upto": upto.decode() if upto else None,
            "ids": [unpad(m) for m in ids],
            "unread": [unpad(m) for m in unread],
            "seen": seen.decode() if seen else None,
            "version": int(version or 0)}


def is_read(state, entry_id):
    """Whether ``entry_id`` is read in ``state`` (as :func:`get` returns it)."""
    if entry_id in state["ids"]:
        return True
    return (state["upto"] is not None and id_key(entry_id) <= id_key(state["upto"])
            and entry_id not in state["unread"])


def mark(client, user, data):
    """Apply a change (see :func:`parse`), announce it, and return the change applied."""
    return apply(client, user, *parse(data))


def apply(client, user, ids, upto, unread=(), seen=None):
    """Apply checked ``ids`` (read), ``upto`` (all read up to it), ``unread`` and
    ``seen`` (all shown up to it: only ever forward) in one transaction, announce
    the change, and return it: ``{"upto", "ids", "unread", "seen", "version"}``.
    Every change writes the watched hash (its version), so changes
    to one user's state are applied one after another, in version order.

    Marking all read up to ``upto`` also ends any unread exception below it.
    An id both marked read and unread in one change ends unread.

    The newest id is read from the history outside the transaction (the history
    is in another hash slot on a cluster): it only bounds what may be marked, and
    one published meanwhile is simply left out of this change, as if it came after.
    In a sharded history each id is bounded by its own shard's newest id.
    """
    upto_key, ids_key, unread_key = _keys(user)
    with client.pipeline(transaction=True) as pipe:
        while True:
            try:
                pipe.watch(upto_key)
                current, version, seen_now = pipe.hmget(upto_key, "upto", "version", "seen")
                current = current.decode() if current else None
                seen_now = seen_now.decode() if seen_now else None
                version = int(version or 0) + 1
                named = [*ids, *unread, *(i for i in (upto, seen) if i)]
                newest = newest_of_shards(client, named)  # None: a shard with none
                ids = [i for i in ids if given(newest, i)]
                unread = {i for i in unread if given(newest, i)}
                if upto and not given(newest, upto):
                    upto = newest.get(_shard_index(upto))
                if seen and not given(newest, seen):
                    seen = newest.get(_shard_index(seen))
                new_seen = seen_now
                if seen and (seen_now is None or id_key(seen) > id_key(seen_now)):
                    new_seen = seen
                new_upto = current
                if upto and (current is None or id_key(upto) > id_key(current)):
                    new_upto = upto
                floor = id_key(new_upto) if new_upto else (0, 0)
                read_now = {i for i in ids if i not in unread}
                fresh = sorted((i for i in read_now if id_key(i) > floor), key=id_key)
                under = [i for i in read_now if id_key(i) <= floor]  # unread exceptions ending
                again = sorted(unread, key=id_key)
                change = {"upto": new_upto, "ids": sorted(fresh + under, key=id_key),
                          "unread": again, "seen": new_seen, "version": version}
                pipe.multi()
                pipe.hset(upto_key, "version", version)
                if new_seen != seen_now:
                    pipe.hset(upto_key, "seen", new_seen)
                if new_upto != current:
                    pipe.hset(upto_key, "upto", new_upto)
                    pipe.zremrangebylex(ids_key, "-", _through(new_upto))
                    pipe.zremrangebylex(unread_key, "-", _through(new_upto))
                if fresh:
                    pipe.zadd(ids_key, {pad(i): 0 for i in fresh})
                    pipe.zremrangebyrank(ids_key, 0, -MAX_IDS - 1)
                if read_now:
                    pipe.zrem(unread_key, *[pad(i) for i in read_now])
                if again:
                    pipe.zrem(ids_key, *[pad(i) for i in again])
                    below = [pad(i) for i in again if new_upto and id_key(i) <= id_key(new_upto)]
                    if below:
                        pipe.zadd(unread_key, {member: 0 for member in below})
                        pipe.zremrangebyrank(unread_key, 0, -MAX_IDS - 1)
                announce(pipe, upto_key, control.read(user, change))
                pipe.execute()
                return change
            except redis.WatchError:
                continue


def keys_of(user):
    """Every key of ``user``'s read state (app.users.purge removes them)."""
    return list(_keys(user))
