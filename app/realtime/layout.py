"""The presence keys, moved under the hash tag ``{presence}`` for a Redis Cluster
(app/key_layout.py): (glob of the old names, old name -> new name or None)."""
from app.realtime import presence

_OLD = "herald:presence:"


def _moved(old):
    rest = old[len(_OLD):]
    for part, new in (("proc:", presence.PROC), ("where:", presence.WHERE)):
        if rest.startswith(part):
            return new + rest[len(part):]
    return {"since": presence.SINCE, "procs": presence.PROCS}.get(rest)


RENAMES = [(_OLD + "*", _moved)]
