"""The keys written with the history that moved into the stream's hash slot for a
Redis Cluster (app/key_layout.py, app/stream/keys.py): (glob of the old names,
old name -> new name or None). ``herald:stream`` and ``herald:live`` keep
their names."""
from app.key_layout import prefix_moved
from app.stream import keys


def _group_epoch(old):
    group = old[:-len(":epoch")]
    return keys.group_epoch(group) if group in ("herald:digests", "herald:webhooks") else None


RENAMES = [
    ("herald:epoch", lambda old: keys.EPOCH),
    ("herald:last-id", lambda old: keys.LAST_ID),
    ("herald:publish:once:*", prefix_moved("herald:publish:once:", keys.ONCE)),
    ("herald:bridge:batch:*", prefix_moved("herald:bridge:batch:", keys.BATCH)),
    ("herald:limits:publish:*", prefix_moved("herald:limits:publish:", keys.QUOTA + "publish:")),
    ("herald:*:epoch", _group_epoch),
]
