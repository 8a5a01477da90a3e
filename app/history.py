"""Reading notification history from ``herald:stream``.

A user's feed is what they may see: notifications private to them, and
public ones whose topic matches one of their subscriptions. Filtering uses
the stream entries' ``topic`` and ``user`` fields, so only the entries that
pass are decoded.

Reads report a *cursor*: the id of the last stream entry examined, visible or
not. A client that resumes from the cursor misses nothing and re-reads nothing.
"""
import orjson
import redis

from .bus import STREAM
from .notifications import id_key, visible_to, with_id

SCAN_CHUNK = 500


def _envelope(entry_id, fields):
    return orjson.loads(with_id(fields[b"envelope"], entry_id))


def _visible(fields, user, subscriptions):
    owner = fields.get(b"user", b"").decode()
    return visible_to(user, subscriptions, fields[b"topic"].decode(), owner)


def _collect(read, user, subscriptions, bound, limit):
    """Read chunks with ``read(bound)`` until ``limit`` visible entries are found.

    ``bound`` is where the next chunk starts (exclusive after the first);
    the scan ends at the end of the stream. Returns (found, cursor).
    """
    found, cursor = [], None
    while len(found) < limit:
        entries = read(bound)
        for entry_id, fields in entries:
            cursor = entry_id
            if _visible(fields, user, subscriptions):
                found.append(_envelope(entry_id, fields))
                if len(found) == limit:
                    break
        if len(entries) < SCAN_CHUNK:
            break
        bound = f"({entries[-1][0].decode()}"
    return found, cursor.decode() if cursor else None


def feed_after(client, user, subscriptions, after, limit):
    """Up to ``limit`` of the user's notifications with id > ``after``, in id order.

    Returns (notifications, cursor); the cursor is ``after`` when nothing newer exists.
    """
    def read(start):
        return client.xrange(STREAM, min=start, max="+", count=SCAN_CHUNK)
    found, cursor = _collect(read, user, subscriptions, f"({after}", limit)
    return found, cursor or after


def feed_latest(client, user, subscriptions, limit):
    """The user's ``limit`` newest notifications, oldest first, and the stream's newest id."""
    newest = client.xrevrange(STREAM, count=1)

    def read(end):
        return client.xrevrange(STREAM, max=end, min="-", count=SCAN_CHUNK)
    if not newest:
        return [], None
    end = newest[0][0].decode()
    found, _ = _collect(read, user, subscriptions, end, limit)
    found.reverse()
    return found, end


def replay(client, user, subscriptions, after, chunk=SCAN_CHUNK):
    """Yield (visible notifications, cursor) chunk by chunk from ``after`` to the stream's end."""
    start = f"({after}"
    while True:
        entries = client.xrange(STREAM, min=start, max="+", count=chunk)
        if not entries:
            return
        visible = [_envelope(entry_id, fields) for entry_id, fields in entries
                   if _visible(fields, user, subscriptions)]
        cursor = entries[-1][0].decode()
        yield visible, cursor
        if len(entries) < chunk:
            return
        start = f"({cursor}"


def newest_id(client):
    """The id of the newest entry in the stream, or "0-0" when it is empty."""
    newest = client.xrevrange(STREAM, count=1)
    return newest[0][0].decode() if newest else "0-0"


def missed_history(client, last_id):
    """True when notifications after ``last_id`` may have been trimmed away (or lost).

    Trimming removes the oldest entries, so that is the case when ``last_id``
    is older than the first retained entry and something was ever removed;
    and when ``last_id`` is newer than anything the stream ever generated
    (Redis lost its data), the client's picture cannot be repaired by replay.
    """
    try:
        info = client.xinfo_stream(STREAM)
    except redis.ResponseError:  # no such key: nothing was ever published
        return id_key(last_id) > (0, 0)
    if id_key(last_id) > id_key(info["last-generated-id"]):
        return True
    first = info.get("first-entry")
    if not first:
        return info["entries-added"] > 0 and id_key(last_id) < id_key(info["last-generated-id"])
    return info["entries-added"] > info["length"] and id_key(last_id) < id_key(first[0])
