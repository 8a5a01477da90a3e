"""Where the digests' keys live, and the move of their old names (app/key_layout.py).

Every key of the digest family shares the hash tag ``{digests}``, so it sits in one
hash slot of a Redis Cluster: a subscription is made, changed or deleted with the
set of all of them and the change counter in one MULTI/EXEC; a notification is
collected into several subscriptions' windows (or the critical outbox) with its
collected marker in one; a window is deleted with its email's sent mark in one.
One slot is plenty for this control data (one small write per collected
notification and subscription).

The consumer group ``herald:digests`` is not a key: it lives in ``herald:stream``
(with ``STREAM_SHARDS=N``, one in each shard's stream), in the stream's slot, so
acknowledging an entry (``XACK``) cannot join those transactions on a cluster;
collect.py says why acknowledging just after them is still exactly once. The group's
epoch marker belongs to app/stream (layout.py there).

Before (layout 1)                     after
``herald:digests``                    ``herald:{digests}:all``
``herald:digests:changed``            ``herald:{digests}:changed``
``herald:digest:<rest>``              ``herald:{digests}:<rest>``

where ``<rest>`` is a subscription's id (12 hex digits) and what follows it
(``:windows``, ``:closed``, ``:w:<due>:counts``, ``:w:<due>:items``), or ``outbox``,
``sent:<key>``, ``sending:<key>``, ``collected:<entry id>``. A RENAME keeps a key's
time to live, so sent and collected marks and send leases lapse when they would have.
"""

PREFIX = "herald:{digests}:"
OLD_PREFIX = "herald:digest:"  # the colon matters: "herald:digests..." is another name
OLD_ALL, OLD_CHANGED = "herald:digests", "herald:digests:changed"


def name(rest):
    """The digest key ``herald:{digests}:<rest>``."""
    return PREFIX + rest


def moved(old):
    """The new name of the digests' key ``old`` (a layout 1 name), or None when ``old``
    is not one of theirs (``herald:digests:epoch`` is app/stream's)."""
    if old == OLD_ALL:
        return name("all")
    if old == OLD_CHANGED:
        return name("changed")
    if old.startswith(OLD_PREFIX) and len(old) > len(OLD_PREFIX):
        return name(old[len(OLD_PREFIX):])
    return None


RENAMES = [
    (OLD_PREFIX + "*", moved),
    (OLD_ALL, moved),
    (OLD_CHANGED, moved),
]
