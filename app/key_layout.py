"""Where Herald's keys live on a Redis Cluster, and the one-time move of a
single Redis's keys to those names.

A Redis Cluster runs a command (a script, a MULTI/EXEC, a multi-key command)
only when all its keys are in one hash slot, and a key's slot is the hash of
its *hash tag*, the text between its first ``{`` and the next ``}``. So every
group of keys that Herald writes in one step shares a tag:

- ``herald:{u:<user>}:…``  one user's own state (read marks, subscriptions,
  archive and snooze, preferences): spread over the cluster by user;
- ``herald:{<family>}:…``  a family written together (accounts and API keys,
  digests, webhooks, presence, the workers' figures): one slot each;
- the history and what is written with it (its epoch and last id, idempotency
  keys, publish quotas, consumer-group markers): tagged with the stream's own
  name, ``herald:{herald:stream}:…``, so that they share the slot of
  ``herald:stream``, whose name (and so every id) stays as it was
  (app/stream/layout.py).

The same names are used on one Redis, where a tag changes nothing. A Redis
that holds keys under the names Herald used before (layout 1) has them moved
once, by :func:`migrate`, which every Herald process runs as it starts
(:func:`connect`, the way its processes reach Redis): each family lists its
``RENAMES``, (glob of the old names, function from an old name to its new one
or None). A move is a RENAME, so a key is never in
both places, and a key already at its new name is left alone. Stop every
process of the old version first: one still running would write the old names
after the move (docs/deploy.md, "Upgrading").
"""
import importlib
import logging
import threading
import time
import weakref
from fnmatch import fnmatchcase

import redis

log = logging.getLogger("herald.keys")

LAYOUT = "herald:layout"   # the layout this Redis's keys follow; absent: 1, or nothing yet
VERSION = "2"
LOCK = "herald:layout:moving"  # held while one process moves the keys
LOCK_SECONDS = 300

# The modules whose RENAMES the move applies: each package's layout.py lists its own.
FAMILIES = ("app.stream.layout", "app.users.layout", "app.digests.layout", "app.webhooks.layout",
            "app.realtime.layout", "app.ops.layout")


def connect(url, **options):
    """A client for ``url`` (app.redis_client.connect), this Redis's keys moved to this
    layout first. A Redis that cannot be reached now is not waited for (the process
    rides out the outage as ever): a thread moves them once it answers."""
    from app.redis_client import UNAVAILABLE
    from app.redis_client import connect as plain
    client = plain(url, **options)
    try:
        migrate(client)
    except UNAVAILABLE as exc:
        log.warning("could not check the key layout (Redis unreachable: %s); will once it answers", exc)
        threading.Thread(target=_migrate_when_back, args=(weakref.ref(client),), daemon=True,
                         name="herald-key-layout").start()
    return client


def _migrate_when_back(client_ref, first=1.0, most=30.0, sleep=time.sleep):
    """Move the keys once the Redis of ``client_ref()`` answers, trying again with a
    growing wait. The client is held by a weak reference: once its owner lets it go
    (a test's Redis stopped and its client dropped), this ends, rather than knock for
    ever on a port that may by then be another server's. Any Redis error is waited
    out, not only "unreachable": a port that answers but not as Redis (InvalidResponse)
    too, said in the log."""
    from app.redis_client import UNAVAILABLE
    wait = first
    while True:
        sleep(wait)
        client = client_ref()
        if client is None:
            return
        try:
            migrate(client)
            return
        except redis.RedisError as exc:
            if not isinstance(exc, UNAVAILABLE):
                log.warning("could not check the key layout (%s); trying again in %.0f s", exc, wait)
            wait = min(wait * 2, most)
        finally:
            del client


def prefix_moved(old_prefix, new_prefix):
    """A rename for RENAMES: a name under ``old_prefix`` goes under ``new_prefix``, the
    rest of it kept; any other name is not this one's (None)."""
    return lambda old: new_prefix + old[len(old_prefix):] if old.startswith(old_prefix) else None


def user_tag(user):
    """The hash tag of ``user``'s own keys: ``{u:<user>}``."""
    return "{u:" + user + "}"


def renames():
    """Every family's (glob, rename) pairs."""
    pairs = []
    for name in FAMILIES:
        pairs.extend(importlib.import_module(name).RENAMES)
    return pairs


def _move(client, old, new):
    """RENAMENX ``old`` to ``new``: False when ``new`` is there already, or ``old`` is
    gone (SCAN may give a key twice, the second time after it moved)."""
    try:
        return client.renamenx(old, new)
    except redis.ResponseError as exc:
        if "no such key" in str(exc).lower():
            return False
        raise


def _wait_for_the_move(client, every=0.1):
    """Until the process moving the keys is done (or its lock expired: it died)."""
    deadline = time.monotonic() + LOCK_SECONDS
    while time.monotonic() < deadline and client.exists(LOCK) and client.get(LAYOUT) != VERSION.encode():
        time.sleep(every)


def migrate(client, scan_count=5000):
    """Move a single Redis's keys to this layout, once; the number of keys moved.

    A Redis Cluster is never moved (no Herald before this one ran on a cluster);
    a Redis already on this layout is left at once (one GET)."""
    from app.redis_client import is_cluster
    if is_cluster(client) or client.get(LAYOUT) == VERSION.encode():
        return 0
    if not client.set(LOCK, "1", nx=True, ex=LOCK_SECONDS):
        _wait_for_the_move(client)  # another process is moving them: not read before it is done
        return 0
    try:
        moved, pairs = 0, renames()
        # One pass over the keyspace (SCAN, so Redis is never blocked), every family's
        # globs matched here: one scan per glob took a minute for a few million keys.
        for old in client.scan_iter(match="herald:*", count=scan_count):
            old = old.decode() if isinstance(old, bytes) else old
            new = next((new for glob, rename in pairs
                        if fnmatchcase(old, glob) and (new := rename(old))), None)
            if new and new != old and _move(client, old, new):
                moved += 1
        client.set(LAYOUT, VERSION)
        if moved:
            log.info("moved %d keys to key layout %s (hash tags for a Redis Cluster)", moved, VERSION)
        return moved
    finally:
        client.delete(LOCK)
