"""Per-user read state: which notifications a user has read, shared by all their tabs.

Stored as a watermark plus exceptions: everything up to ``upto`` is read
("mark all read"), and ``herald:readids:<user>`` holds ids read one by one
above it (a sorted set of zero-padded ids, so lexical order is id order;
at most MAX_IDS are kept). Each change is announced on ``herald:control``,
and every web process passes it to that user's connections as a ``read``
event, ``{"upto": ID or null, "ids": [...]}``, so every tab's unread badge
follows in real time.
"""
import orjson
import redis

from .bus import CONTROL
from .notifications import EnvelopeError, check_stream_id, id_key

MAX_IDS = 5000
MAX_IDS_PER_CALL = 500


class ReadStateError(ValueError):
    """A malformed read-state change; the message names the field."""


def _keys(user):
    return f"herald:read:{user}", f"herald:readids:{user}"


def _pad(entry_id):
    ms, seq = id_key(entry_id)
    return f"{ms:020d}-{seq:020d}"


def _unpad(member):
    if isinstance(member, bytes):
        member = member.decode()
    ms, seq = member.split("-")
    return f"{int(ms)}-{int(seq)}"


def parse(data):
    """``(ids, upto)`` from ``{"ids": [...], "upto": ID}`` (either may be left out)."""
    if not isinstance(data, dict) or not ({"ids", "upto"} & set(data)):
        raise ReadStateError('payload: must be {"ids": [id, ...]} and/or {"upto": id}')
    unknown = set(data) - {"ids", "upto"}
    if unknown:
        raise ReadStateError(f"{sorted(unknown)[0]}: is not a known field")
    ids = data.get("ids", [])
    if not isinstance(ids, list) or len(ids) > MAX_IDS_PER_CALL:
        raise ReadStateError(f"ids: must be a list of at most {MAX_IDS_PER_CALL} ids")
    upto = data.get("upto")
    try:
        for index, entry_id in enumerate(ids):
            check_stream_id(entry_id, f"ids[{index}]")
        if upto is not None:
            check_stream_id(upto, "upto")
    except EnvelopeError as exc:
        raise ReadStateError(str(exc)) from None
    return ids, upto


def get(client, user):
    """``{"upto": ID or None, "ids": [read ids above upto, in id order]}``."""
    upto_key, ids_key = _keys(user)
    upto = client.hget(upto_key, "upto")
    members = client.zrange(ids_key, 0, -1)
    return {"upto": upto.decode() if upto else None, "ids": [_unpad(m) for m in members]}


def mark(client, user, data):
    """Apply a change (see :func:`parse`), announce it, and return the change applied."""
    return apply(client, user, *parse(data))


def apply(client, user, ids, upto):
    """Apply checked ``ids`` and ``upto`` (see :func:`parse`) in one transaction,
    announce the change, and return it: ``{"upto", "ids"}`` as applied."""
    upto_key, ids_key = _keys(user)
    with client.pipeline() as pipe:
        while True:
            try:
                pipe.watch(upto_key)
                current = pipe.hget(upto_key, "upto")
                current = current.decode() if current else None
                new_upto = current
                if upto and (current is None or id_key(upto) > id_key(current)):
                    new_upto = upto
                floor = id_key(new_upto) if new_upto else (0, 0)
                fresh = sorted({i for i in ids if id_key(i) > floor}, key=id_key)
                change = {"upto": new_upto, "ids": fresh}
                pipe.multi()
                if new_upto != current:
                    pipe.hset(upto_key, "upto", new_upto)
                    pipe.zremrangebylex(ids_key, "-", f"[{_pad(new_upto)}")
                if fresh:
                    pipe.zadd(ids_key, {_pad(i): 0 for i in fresh})
                    pipe.zremrangebyrank(ids_key, 0, -MAX_IDS - 1)
                pipe.publish(CONTROL, orjson.dumps({"user": user, "read": change}))
                pipe.execute()
                return change
            except redis.WatchError:
                continue
