"""The keys of app/ops that moved for a Redis Cluster (app/key_layout.py): each web
process's and each bridge's figures, read together with one MGET, now share the
hash tag ``{metrics}``: (glob of the old names, old name -> new name or None)."""
from app.key_layout import prefix_moved
from app.ops.web_figures import WEB_PREFIX
from app.ops.worker_health import BRIDGE_PREFIX

RENAMES = [
    ("herald:metrics:web:*", prefix_moved("herald:metrics:web:", WEB_PREFIX)),
    ("herald:metrics:bridge:*", prefix_moved("herald:metrics:bridge:", BRIDGE_PREFIX)),
]
