"""The keys of app/ops that moved for a Redis Cluster (app/key_layout.py): each web
process's and each bridge's figures, read together with one MGET, now share the
hash tag ``{metrics}``: (glob of the old names, old name -> new name or None)."""
from app.ops.web_figures import WEB_PREFIX
from app.ops.worker_health import BRIDGE_PREFIX


def _prefixed(old_prefix, new_prefix):
    return lambda old: new_prefix + old[len(old_prefix):] if old.startswith(old_prefix) else None


RENAMES = [
    ("herald:metrics:web:*", _prefixed("herald:metrics:web:", WEB_PREFIX)),
    ("herald:metrics:bridge:*", _prefixed("herald:metrics:bridge:", BRIDGE_PREFIX)),
]
