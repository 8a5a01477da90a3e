"""Reading notification history from ``herald:stream``.

A user's feed is what they may see: notifications private to them, and
public ones whose topic matches one of their subscriptions. Filtering uses
the stream entries' ``topic`` and ``user`` fields, so only the entries that
pass are decoded.
"""
import orjson

from .bus import STREAM
from .notifications import visible_to, with_id

SCAN_CHUNK = 500


def _envelope(entry_id, fields):
    return orjson.loads(with_id(fields[b"envelope"], entry_id))


def _visible(fields, user, subscriptions):
    owner = fields.get(b"user", b"").decode()
    return visible_to(user, subscriptions, fields[b"topic"].decode(), owner)


def _collect(read, user, subscriptions, bound, limit):
    """Read chunks with ``read(bound)`` until ``limit`` visible entries are found.

    ``bound`` is where the next chunk starts (exclusive after the first);
    the scan ends at the end of the stream.
    """
    found = []
    while len(found) < limit:
        entries = read(bound)
        for entry_id, fields in entries:
            if _visible(fields, user, subscriptions):
                found.append(_envelope(entry_id, fields))
                if len(found) == limit:
                    break
        if len(entries) < SCAN_CHUNK:
            break
        bound = f"({entries[-1][0].decode()}"
    return found


def feed_after(client, user, subscriptions, after, limit):
    """Up to ``limit`` of the user's notifications with id > ``after``, in id order."""
    def read(start):
        return client.xrange(STREAM, min=start, max="+", count=SCAN_CHUNK)
    return _collect(read, user, subscriptions, f"({after}", limit)


def feed_latest(client, user, subscriptions, limit):
    """The user's ``limit`` newest notifications, in id order (oldest first)."""
    def read(end):
        return client.xrevrange(STREAM, max=end, min="-", count=SCAN_CHUNK)
    found = _collect(read, user, subscriptions, "+", limit)
    found.reverse()
    return found
