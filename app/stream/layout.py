"""The keys written with the history that moved into the stream's hash slot for a
Redis Cluster (app/key_layout.py, app/stream/keys.py): (glob of the old names,
old name -> new name or None). ``herald:stream`` and ``herald:live`` keep
their names."""
from app.stream import keys


def _prefixed(old_prefix, new_prefix):
    return lambda old: new_prefix + old[len(old_prefix):] if old.startswith(old_prefix) else None


def _group_epoch(old):
    group = old[:-len(":epoch")]
    return keys.group_epoch(group) if group in ("herald:digests", "herald:webhooks") else None


RENAMES = [
    ("herald:epoch", lambda old: keys.EPOCH),
    ("herald:last-id", lambda old: keys.LAST_ID),
    ("herald:publish:once:*", _prefixed("herald:publish:once:", keys.ONCE)),
    ("herald:bridge:batch:*", _prefixed("herald:bridge:batch:", keys.BATCH)),
    ("herald:limits:publish:*", _prefixed("herald:limits:publish:", keys.QUOTA + "publish:")),
    ("herald:*:epoch", _group_epoch),
]
