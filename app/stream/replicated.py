"""A publish answered only once it is on a replica (``PUBLISH_REPLICAS``).

Redis replicates asynchronously: a master that dies right after it answered a
write can take the write with it, and its replica, promoted, never had it. A
publisher told "stored" would never publish again, and the notification
would be lost although it was acknowledged. So, when asked, the publish
script is followed by ``WAIT replicas timeout`` on the same connection (WAIT
counts the replicas that have every write this connection made), in one
round trip, and the publish is answered only when enough replicas have it.

WAIT cannot run inside a script, and a cluster client sends a command without
a key to any node, so both go through a pipeline on one connection of the
node that holds the stream: the client's own on one Redis, the stream slot's
master's on a cluster. A master that moved (a failover since the client last
looked) answers MOVED or is gone: the cluster client then learns the new
topology, and the step runs once more on the new master.

Cost: the replication round trip (on loopback some 0.1 ms; across machines,
their round trip) on every publish, and nothing more (docs/capacity.md). A
replica that does not answer within the timeout leaves the publish written on
the master but unconfirmed: :class:`NotReplicated`, which callers treat as
"not confirmed", and a retry under the same idempotency key is stored once.
"""
from typing import NamedTuple

import redis

from app.redis_client import UNAVAILABLE, is_cluster
from app.stream.keys import STREAM


class Durability(NamedTuple):
    """How many replicas must have a publish before it is answered, waited for at most
    ``timeout_ms``; ``replicas == 0``: answered at once (Redis's own default)."""

    replicas: int = 0
    timeout_ms: int = 500


class NotReplicated(redis.ConnectionError):
    """The publish is on the master but not on enough replicas within the timeout: not
    confirmed (a master lost now would lose it). A ConnectionError, so whoever rides out
    an unreachable Redis treats it so."""


# What a node answers, or how it fails, while the cluster moves the stream's slot to a
# new master: the step is tried once more there, and else reported as an outage.
MOVING = (redis.exceptions.MovedError, redis.exceptions.AskError, redis.exceptions.TryAgainError,
          redis.exceptions.ClusterDownError)


def run(client, script, keys, args, durability, stream=STREAM):
    """``script(keys, args)`` on ``client`` (on a cluster: on the master of ``stream``'s
    slot, where its keys are), answered once ``durability`` holds."""
    if not is_cluster(client):
        return _run_on(client, script, keys, args, durability)
    for attempt in (1, 2):
        try:
            return _run_on(_stream_node(client, stream), script, keys, args, durability)
        except NotReplicated:
            raise
        except (*UNAVAILABLE, *MOVING) as exc:
            if attempt == 2:
                raise redis.ConnectionError(f"the stream's master is changing: {exc!r}") from exc
        try:
            client.exists(stream)  # through the cluster client: it follows MOVED, learns the new master
        except UNAVAILABLE as exc:
            raise redis.ConnectionError(f"the stream's master is changing: {exc!r}") from exc


def _stream_node(client, stream=STREAM):
    if not is_cluster(client):
        return client
    return client.get_redis_connection(client.get_node_from_key(stream))


def _run_on(node, script, keys, args, durability):
    with node.pipeline(transaction=False) as pipe:
        script(keys=keys, args=args, client=pipe)
        pipe.execute_command("WAIT", durability.replicas, durability.timeout_ms)
        answer, replicas = pipe.execute()
    if replicas < durability.replicas:
        raise NotReplicated(f"stored on the master, but on {replicas} of {durability.replicas} "
                            f"replicas after {durability.timeout_ms} ms: not confirmed")
    return answer
