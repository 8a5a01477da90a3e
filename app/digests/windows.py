"""Digest windows in Redis: what one subscription has collected for one due time.

For subscription S and window W (its due time, UNIX seconds):

- ``herald:{digests}:S:w:W:counts``: a hash "topic<TAB>severity" -> count;
- ``herald:{digests}:S:w:W:items``: the KEEP_ITEMS most severe, then latest,
  envelopes (a sorted set scored by severity, then time);
- ``herald:{digests}:S:windows``: the windows of S that hold something;
- ``herald:{digests}:S:closed``: the due time of the last window closed; a
  notification never goes into a closed window, only the next one.

``herald:{digests}:outbox`` lists critical notifications to email at once;
``herald:{digests}:sent:<key>`` marks each email sent (its idempotency key).
All in the digests' one hash slot (layout.py), as collect.py and send.py write
them together.
"""
import orjson

from app.digests.layout import name
from app.digests.store import key
from app.stream.envelope import SEVERITY_RANK, id_key

KEEP_ITEMS = 50
OUTBOX = name("outbox")
SENT_TTL = 30 * 86400


def windows_key(digest_id):
    return f"{key(digest_id)}:windows"


def closed_key(digest_id):
    return f"{key(digest_id)}:closed"


def counts_key(digest_id, window):
    return f"{key(digest_id)}:w:{int(window)}:counts"


def items_key(digest_id, window):
    return f"{key(digest_id)}:w:{int(window)}:items"


def sent_key(idempotency_key):
    return name(f"sent:{idempotency_key}")


def digest_key(digest_id, window):
    """The idempotency key of subscription ``digest_id``'s digest for window ``window``."""
    return f"digest-{digest_id}-{int(window)}"


def critical_key(digest_id, envelope):
    return f"critical-{digest_id}-{envelope['id']}"


def item_score(envelope):
    """Most severe first, then latest: severity rank, then the id's milliseconds."""
    return SEVERITY_RANK[envelope.get("severity", "info")] * 1e13 + id_key(envelope["id"])[0]


def add(pipe, digest_id, window, envelope):
    """Queue on ``pipe`` (in MULTI) the commands that put ``envelope`` in a window."""
    severity = envelope.get("severity", "info")
    pipe.hincrby(counts_key(digest_id, window), f"{envelope['topic']}\t{severity}", 1)
    pipe.zadd(items_key(digest_id, window), {orjson.dumps(envelope): item_score(envelope)})
    pipe.zremrangebyrank(items_key(digest_id, window), 0, -KEEP_ITEMS - 1)
    pipe.zadd(windows_key(digest_id), {str(int(window)): window})


def read(client, digest_id, window):
    """(counts {(topic, severity): n}, items [envelope, most severe then latest], total)."""
    raw = client.hgetall(counts_key(digest_id, window))
    counts = {tuple(k.decode().split("\t", 1)): int(v) for k, v in raw.items()}
    items = [orjson.loads(m) for m in client.zrevrange(items_key(digest_id, window), 0, -1)]
    return counts, items, sum(counts.values())


def closed_upto(client, digest_id):
    value = client.get(closed_key(digest_id))
    return float(value) if value else 0.0
