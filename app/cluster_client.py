"""The Redis Cluster client, made to fail as Herald's single-Redis client fails.

redis-py's RedisCluster differs from its Redis in two ways that matter when
the cluster is away:

- it reaches the cluster as it is made (to learn which node serves which
  slot), and raises if no node answers; a process started while the cluster
  is down would die in ``build()``, where one Redis would simply be reached
  later. :class:`LazyCluster` makes it on its first use instead, and tries
  again on the next use while no node answers;
- a cluster no node of which answers is reported as RedisClusterException
  ("Redis Cluster cannot be connected"), which is also what it raises for a
  programming error (keys in different slots). Herald rides out an outage
  wherever it catches ``UNAVAILABLE`` (app/redis_client.py), so an unreachable
  cluster is raised here as redis.ConnectionError, as one Redis reports it;
  a programming error still raises as itself.

Both through the seams redis-py offers: a subclass that overrides
``execute_command`` (every command and script goes through it) and wraps the
``execute`` of the pipelines it makes, and whose ``ERRORS_ALLOW_RETRY`` leaves
out a timeout (:class:`HeraldCluster`); tests/unit/test_cluster_client.py fails
if redis-py changes what it raises.
"""
import functools
import threading

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.exceptions import RedisClusterException

CANNOT_CONNECT = "Redis Cluster cannot be connected"


def unreachable(exc):
    """Whether ``exc`` (a RedisClusterException) says that no node could be reached."""
    return str(exc).startswith(CANNOT_CONNECT) or \
        isinstance(exc.__cause__, (redis.ConnectionError, redis.TimeoutError))


def _translated(call):
    @functools.wraps(call)
    def translating(*args, **kwargs):
        try:
            return call(*args, **kwargs)
        except RedisClusterException as exc:
            if unreachable(exc):
                raise redis.ConnectionError(str(exc)) from exc
            raise
    return translating


class HeraldCluster(RedisCluster):
    """RedisCluster raising an unreachable cluster as redis.ConnectionError, and not
    running again a command that timed out.

    redis-py runs a command again after any error of ``ERRORS_ALLOW_RETRY`` (learning
    the cluster's slots anew), a timeout among them. A command that timed out may have
    run: a publish without an idempotency key would be stored twice. Here a timeout is
    the caller's outage (503, retried under an idempotency key), as on one Redis; a
    node that refused the connection, or a cluster reconfiguring, is still retried."""

    ERRORS_ALLOW_RETRY = tuple(error for error in RedisCluster.ERRORS_ALLOW_RETRY
                               if error is not redis.TimeoutError)

    def execute_command(self, *args, **kwargs):
        return _translated(super().execute_command)(*args, **kwargs)

    def pipeline(self, transaction=None, shard_hint=None):
        pipe = super().pipeline(transaction=transaction, shard_hint=shard_hint)
        pipe.execute = _translated(pipe.execute)
        return pipe


class LazyCluster:
    """A :class:`HeraldCluster` made on first use: every attribute is the made client's.

    ``register_script`` and ``get_encoder`` answer without it (a web process
    registers its scripts while it is built, maybe before the cluster is up)."""

    def __init__(self, first, others, **options):
        self._first, self._others, self._options = first, others, options
        self._client = None
        self._making = threading.Lock()  # (gevent's, in a web process): one client, made once

    def _made(self):
        if self._client is not None:
            return self._client
        with self._making:
            if self._client is not None:
                return self._client
            host, port = self._first
            try:
                client = HeraldCluster(
                    url=f"redis://{host}:{port}/0",
                    startup_nodes=[ClusterNode(h, p) for h, p in self._others], **self._options)
            except RedisClusterException as exc:
                if unreachable(exc):
                    raise redis.ConnectionError(str(exc)) from exc
                raise
            self._client = client
            return client

    def __getattr__(self, name):
        return getattr(self._made(), name)

    def made(self):
        """The :class:`HeraldCluster`, made now if it was not yet."""
        return self._made()

    def get_encoder(self):
        options = self._options
        return redis.connection.Encoder(options.get("encoding", "utf-8"),
                                        options.get("encoding_errors", "strict"),
                                        options.get("decode_responses", False))

    def register_script(self, script):
        return redis.commands.core.Script(self, script)

    def close(self):
        if self._client is not None:
            self._client.close()

    def __repr__(self):
        return f"<LazyCluster {self._first[0]}:{self._first[1]} (+{len(self._others)})>"
