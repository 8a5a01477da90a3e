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
from .notifications import id_key, topic_matches, visible_to, with_id
from .read_state import is_read

SCAN_CHUNK = 500


def _envelope(entry_id, fields):
    return orjson.loads(with_id(fields[b"envelope"], entry_id))


def _visible(fields, user, subscriptions):
    owner = fields.get(b"user", b"").decode()
    return visible_to(user, subscriptions, fields[b"topic"].decode(), owner)


class Filter:
    """Which of a user's notifications a read returns, besides what they may see.

    ``unread`` (a read state from app.read_state.get: only those not read),
    ``severities`` (a set), ``topic`` (a prefix), ``text`` (in the title or body,
    any case), and ``hidden``/``only``: the ids archived or snoozed, left out
    (``hidden``) or the only ones wanted (``only``). All optional.
    """

    __slots__ = ("unread", "severities", "topic", "text", "hidden", "only")

    def __init__(self, unread=None, severities=None, topic=None, text=None, hidden=(),
                 only=None):
        self.unread, self.severities, self.topic = unread, severities, topic
        self.text = text.casefold() if text else None
        self.hidden, self.only = hidden, only

    def keep(self, entry_id, fields):
        """The envelope when the entry passes, else None (decoding only what passes ids)."""
        entry = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
        if self.only is not None and entry not in self.only:
            return None
        if entry in self.hidden:
            return None
        if self.topic and not topic_matches(self.topic, fields[b"topic"].decode()):
            return None
        if self.unread is not None and is_read(self.unread, entry):
            return None
        envelope = _envelope(entry_id, fields)
        if self.severities and envelope.get("severity", "info") not in self.severities:
            return None
        if self.text and self.text not in envelope["title"].casefold() \
                and self.text not in envelope.get("body", "").casefold():
            return None
        return envelope


EVERYTHING = Filter()


def _collect(read, user, subscriptions, bound, limit, wanted=EVERYTHING):
    """Read chunks with ``read(bound)`` until ``limit`` entries pass are found.

    ``bound`` is where the next chunk starts (exclusive after the first);
    the scan ends at the end of the stream. Returns (found, cursor, more):
    ``cursor`` is the last entry examined, ``more`` whether the scan stopped
    before the end.
    """
    found, cursor = [], None
    while True:
        entries = read(bound)
        for index, (entry_id, fields) in enumerate(entries):
            cursor = entry_id
            if _visible(fields, user, subscriptions):
                envelope = wanted.keep(entry_id, fields)
                if envelope is not None:
                    found.append(envelope)
                    if len(found) == limit:
                        more = index < len(entries) - 1 or len(entries) == SCAN_CHUNK
                        return found, cursor.decode(), more
        if len(entries) < SCAN_CHUNK:
            return found, cursor.decode() if cursor else None, False
        bound = f"({entries[-1][0].decode()}"


def feed_after(client, user, subscriptions, after, limit, wanted=EVERYTHING):
    """Up to ``limit`` of the user's notifications with id > ``after``, in id order.

    Returns (notifications, cursor); the cursor is ``after`` when nothing newer exists.
    """
    def read(start):
        return client.xrange(STREAM, min=start, max="+", count=SCAN_CHUNK)
    found, cursor, _more = _collect(read, user, subscriptions, f"({after}", limit, wanted)
    return found, cursor or after


def feed_latest(client, user, subscriptions, limit, wanted=EVERYTHING, before=None):
    """The user's ``limit`` newest notifications (older than ``before``, if given),
    oldest first; the stream's newest id; and where to read on for older ones
    (``before`` of the next page; None when the start of history was reached)."""
    newest = client.xrevrange(STREAM, count=1)

    def read(end):
        return client.xrevrange(STREAM, max=end, min="-", count=SCAN_CHUNK)
    if not newest:
        return [], None, None
    end = newest[0][0].decode()
    found, cursor, more = _collect(read, user, subscriptions,
                                   f"({before}" if before else end, limit, wanted)
    found.reverse()
    return found, end, cursor if more else None


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


def one(client, user, subscriptions, entry_id):
    """The envelope of ``entry_id`` when it is in history and ``user`` may see it, else None."""
    entries = client.xrange(STREAM, min=entry_id, max=entry_id, count=1)
    if not entries or not _visible(entries[0][1], user, subscriptions):
        return None
    return _envelope(*entries[0])


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
