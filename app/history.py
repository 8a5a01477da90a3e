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


def feed_after(client, user, subscriptions, after, limit):
    """Up to ``limit`` of the user's notifications with id > ``after``, in id order."""
    found = []
    start = f"({after}"
    while len(found) < limit:
        entries = client.xrange(STREAM, min=start, max="+", count=SCAN_CHUNK)
        for entry_id, fields in entries:
            if _visible(fields, user, subscriptions):
                found.append(_envelope(entry_id, fields))
                if len(found) == limit:
                    break
        if len(entries) < SCAN_CHUNK:
            break
        start = f"({entries[-1][0].decode()}"
    return found


def feed_latest(client, user, subscriptions, limit):
    """The user's ``limit`` newest notifications, in id order (oldest first)."""
    found = []
    end = "+"
    while len(found) < limit:
        entries = client.xrevrange(STREAM, max=end, min="-", count=SCAN_CHUNK)
        for entry_id, fields in entries:
            if _visible(fields, user, subscriptions):
                found.append(_envelope(entry_id, fields))
                if len(found) == limit:
                    break
        if len(entries) < SCAN_CHUNK:
            break
        end = f"({entries[-1][0].decode()}"
    found.reverse()
    return found
