"""The keys of app/ops that moved for a Redis Cluster (app/key_layout.py): (glob of
the old names, old name -> new name or None)."""

RENAMES = []
