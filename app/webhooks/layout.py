"""Where the webhooks' keys live, and the move of their old names (app/key_layout.py).

Every key of the webhook family shares the hash tag ``{webhooks}``, so the whole
family sits in one hash slot of a Redis Cluster: an endpoint is made or deleted
with the set of all of them and the change counter in one MULTI/EXEC; a
notification is queued (or parked) for every endpoint that wants it, with its
dispatch marker, the lease that fences the dispatcher and the figures, in one
script; a delivery's outcome is written with the endpoint's stats and the
figures in one script. One slot rather than one per endpoint: at most
``MAX_ENDPOINTS`` (100) endpoints, all sent by the one active worker, so one
node has ample room for it, and one slot keeps a notification's fan-out to all
its endpoints atomic and the figures exact.

The consumer group ``herald:webhooks`` is not a key: it lives in ``herald:stream``
(with ``STREAM_SHARDS=N``, one in each shard's stream), in the stream's slot, so its
``XACK`` cannot join the fan-out on a cluster; dispatch.py says why acknowledging
just after it is still correct. The group's
epoch marker (``herald:webhooks:epoch`` before) belongs to app/stream (its layout.py).

Before (layout 1)                      after
``herald:webhooks``                    ``herald:{webhooks}:endpoints``
``herald:webhooks:changed``            ``herald:{webhooks}:changed``
``herald:webhooks:lease``              ``herald:{webhooks}:lease``
``herald:webhook:<id>``                ``herald:{webhooks}:endpoint:<id>``
``herald:webhook:<id>:<kind>``         ``herald:{webhooks}:endpoint:<id>:<kind>``
(counters in ``herald:metrics:workers``)  ``herald:{webhooks}:figures``
(none)                                 ``herald:{webhooks}:dispatched``

where ``<id>`` is an endpoint's id (12 hex digits) and ``<kind>`` one of ``queue``,
``attempt``, ``parked``, ``stats``. A RENAME keeps a key's time to live (the
lease's). The counters kept in ``herald:metrics:workers`` before stay there and
are added to the new ones (figures.py), so no counter goes back.
"""

PREFIX = "herald:{webhooks}:"
ENDPOINTS = PREFIX + "endpoints"     # set of endpoint ids
CHANGED = PREFIX + "changed"         # bumped on every change, so the worker reloads
LEASE = PREFIX + "lease"             # the active worker's lease (worker.py)
FIGURES = PREFIX + "figures"         # the webhook counters of /metrics (figures.py)
DISPATCHED = PREFIX + "dispatched"   # entries queued, not yet acknowledged (dispatch.py)
KINDS = ("queue", "attempt", "parked", "stats")

OLD_PREFIX = "herald:webhook:"  # the colon matters: "herald:webhooks..." is another name
OLD_NAMES = {"herald:webhooks": ENDPOINTS, "herald:webhooks:changed": CHANGED,
             "herald:webhooks:lease": LEASE}


def endpoint(endpoint_id, kind=None):
    """The key of endpoint ``endpoint_id`` (its hash), or of its ``kind`` of list/hash."""
    name = f"{PREFIX}endpoint:{endpoint_id}"
    return f"{name}:{kind}" if kind else name


def moved(old):
    """The new name of the webhooks' key ``old`` (a layout 1 name), or None when ``old``
    is not one of theirs (``herald:webhooks:epoch`` is app/stream's)."""
    if old in OLD_NAMES:
        return OLD_NAMES[old]
    if not old.startswith(OLD_PREFIX):
        return None
    endpoint_id, _, kind = old[len(OLD_PREFIX):].partition(":")
    if not endpoint_id or "{" in endpoint_id or (kind and kind not in KINDS):
        return None
    return endpoint(endpoint_id, kind or None)


# One glob, so one SCAN: it matches every old webhook name and the stream's
# ``herald:webhooks:epoch``, which ``moved`` leaves alone.
RENAMES = [("herald:webhook*", moved)]
