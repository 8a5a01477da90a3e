"""Redis connections with the timeouts Herald relies on.

Short connect and read timeouts turn an unreachable Redis into a quick,
catchable error (a 503, a reconnect with backoff) instead of a hang.

The pool is a blocking one: redis-py's default pool refuses outright
("Too many connections") once 100 connections are in use, which a web
process meets whenever more than 100 browsers connect at the same moment
(after a restart, every open tab does). Here a greenlet past the limit
waits its turn for up to POOL_WAIT seconds instead.

A Redis that is starting answers ``LOADING`` until it has read its data
back; every command is then retried with backoff for a few seconds (redis-py's
Retry, for that error alone: the command was not run, so repeating it is safe
even for a write), rather than failing as if Redis were gone. Without this, a
restart of Redis refused the Socket.IO connects that came while it loaded.

Redis Cluster: ``redis+cluster://[:password@]host:port[,host:port...]/`` names
some of the cluster's nodes (any one that answers tells the client the rest);
commands go to the master of their key's hash slot, and a client follows the
cluster through a failover (see docs/deploy.md, "On a Redis Cluster").

Redis Sentinel: ``redis+sentinel://[:password@]host:port[,host:port...]/service[/db]``
asks those sentinels where the master of ``service`` is, and asks again after
a failover (the same URL form the rate limiter's storage takes).

Every connection is one of redis-py's own classes with a cheaper check for
stray data (:class:`QuietCheck`): redis-py asks each connection it takes
from a pool whether anything is waiting to be read on it, and under gevent
that check went through gevent's ``select.poll`` (a watcher and a switch to
the hub: some 40 µs of CPU on every command, a REST publish's and a
reconnect's alike).
"""
import select
import time
from urllib.parse import unquote, urlsplit

import redis
from gevent import monkey
from redis._parsers.hiredis import _HiredisParser
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import RedisCluster
from redis.connection import Connection, SSLConnection, UnixDomainSocketConnection
from redis.retry import Retry
from redis.sentinel import Sentinel, SentinelManagedConnection

from app.cluster_client import LazyCluster

# Errors that mean "Redis is not reachable right now", as opposed to a bug. redis-py
# wraps its sockets' OSErrors in ConnectionError/TimeoutError, so a bare OSError is
# never Redis's: a file, a time zone lookup ("File name too long"), a peer gone. Taking
# one for an outage answered 503 to bad input, which clients retry forever. READONLY
# is an old master after a failover: also transient, also not our bug.
# On a Redis Cluster, CLUSTERDOWN (no master for a slot: during a failover), TRYAGAIN (a
# slot moving) and a slot no node is known to serve are the same kind of moment.
UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError, redis.exceptions.ReadOnlyError,
               redis.exceptions.ClusterDownError, redis.exceptions.TryAgainError,
               redis.exceptions.SlotNotCoveredError)


class Outage:
    """A worker's loop riding out a Redis outage: :meth:`failed` in its
    ``except UNAVAILABLE`` (says so once, then sleeps with backoff, ``first``
    doubling to ``most`` seconds), :meth:`ok` after a round that reached Redis
    (says it is back, once). ``down`` tells the loop to set up again (a
    consumer group, say) before its next round."""

    def __init__(self, log, first=0.1, most=2.0, sleep=time.sleep):
        self.log, self.first, self.most, self.sleep = log, first, most, sleep
        self.down, self.backoff = False, first

    def failed(self, exc):
        if not self.down:
            self.log.warning("Redis is unreachable (%s); retrying with backoff", exc)
        self.down = True
        self.sleep(self.backoff)
        self.backoff = min(self.backoff * 2, self.most)

    def ok(self):
        if self.down:
            self.log.info("Redis is back")
        self.down, self.backoff = False, self.first


# The operating system's poll, not gevent's: only ever asked with a timeout of 0, which
# returns at once, so the loop is never held (a real poll that waits would hold it).
_poll = monkey.get_original("select", "poll")


class QuietCheck:
    """A connection whose check for stray data (``can_read()``, timeout 0: what a pool
    asks of every connection it hands out) asks the kernel directly.

    The answer is redis-py's own whenever there may be something to read: the parser
    holding bytes, TLS holding decrypted ones, or the socket readable (data or the
    server's close; redis-py then tells which, and the pool replaces the
    connection). Only "nothing waits" is answered here, by one non-blocking
    ``poll(0)`` on the socket. A check with a timeout (a pubsub's wait) is
    redis-py's, through gevent. Mixed in before one of redis-py's connection
    classes; tests/unit/test_redis_client.py fails if the pool stops asking this or
    the check stops seeing stray data."""

    def can_read(self, timeout=0):
        sock, parser = self._sock, self._parser
        if (timeout != 0 or sock is None or not isinstance(parser, _HiredisParser)
                or parser._reader is None or parser._reader.has_data()
                or (hasattr(sock, "pending") and sock.pending())):
            return super().can_read(timeout)
        try:
            poller = _poll()
            poller.register(sock.fileno(), select.POLLIN)
            quiet = not poller.poll(0)
        except (OSError, ValueError):  # a socket closed under it: redis-py's to say
            quiet = False
        return False if quiet else super().can_read(timeout)


class QuietConnection(QuietCheck, Connection):
    """redis-py's TCP connection with :class:`QuietCheck`."""


class QuietSSLConnection(QuietCheck, SSLConnection):
    """redis-py's TLS connection with :class:`QuietCheck`."""


class QuietUnixConnection(QuietCheck, UnixDomainSocketConnection):
    """redis-py's Unix socket connection with :class:`QuietCheck`."""


class QuietSentinelConnection(QuietCheck, SentinelManagedConnection):
    """redis-py's connection to a sentinel's master with :class:`QuietCheck`."""


def connection_class(url):
    """The connection class for ``url``'s scheme (redis-py picks its own by the scheme)."""
    scheme = urlsplit(url).scheme
    if scheme == "rediss":
        return QuietSSLConnection
    if scheme == "unix":
        return QuietUnixConnection
    return QuietConnection


POOL_SIZE = 100  # connections per client, at most
POOL_WAIT = 5     # seconds to wait for one when all are in use
LOADING_RETRIES = 16  # with backoff capped at 0.5 s: some 6 s for Redis to load


def loading_retry():
    """Retry a command while Redis answers LOADING, and for nothing else."""
    return Retry(ExponentialWithJitterBackoff(cap=0.5, base=0.05), LOADING_RETRIES,
                 supported_errors=(redis.BusyLoadingError,))


def connect(url, **options):
    """A client for ``url`` (``redis://``, ``rediss://`` or ``unix://``)."""
    options.setdefault("socket_connect_timeout", 2)
    options.setdefault("socket_timeout", 5)
    options.setdefault("health_check_interval", 30)
    options.setdefault("retry", loading_retry())
    if url.startswith("redis+sentinel://"):
        return _sentinel_master(url, options)
    if url.startswith("redis+cluster://"):
        return _cluster(url, options)
    options.setdefault("max_connections", POOL_SIZE)
    options.setdefault("timeout", POOL_WAIT)
    options.setdefault("connection_class", connection_class(url))
    return redis.Redis.from_pool(redis.BlockingConnectionPool.from_url(url, **options))


class SentinelURLError(ValueError):
    """A ``redis+sentinel://`` or ``redis+cluster://`` URL that cannot be used; the
    message says why."""


def is_cluster(client):
    """Whether ``client`` talks to a Redis Cluster (``redis+cluster://``)."""
    return isinstance(client, (RedisCluster, LazyCluster))


def raw_name(client, name):
    """The name to send a stream read (XRANGE, XREVRANGE) by, so that its reply stays as
    Redis's parser made it, ``[[id, [field, value, ...]], ...]``: as bytes, which none of
    redis-py's response callbacks matches (no tuple and dict built per entry, a third of
    a long scan's time). A cluster client routes a command by its name as text, so
    there it goes as text, and :func:`raw_entries` gives its reply that shape back."""
    return name if is_cluster(client) else name.encode()


def raw_entries(client, reply):
    """A stream read's reply sent by :func:`raw_name`, in the raw shape on a cluster too."""
    if not is_cluster(client) or not reply:
        return reply
    return [[entry_id, [item for pair in fields.items() for item in pair]] for entry_id, fields in reply]


def pool_for(client, key):
    """The connection pool that serves ``key``: the client's, or on a cluster that of
    the master of the key's slot (for a caller that sends on a connection of its own)."""
    if is_cluster(client):
        return client.get_redis_connection(client.get_node_from_key(key)).connection_pool
    return client.connection_pool


def _addresses(url, scheme):
    parts = urlsplit(url)
    hosts = parts.netloc.rsplit("@", 1)[-1]
    password = unquote(parts.password) if parts.password else None
    addresses = []
    for address in filter(None, hosts.split(",")):
        host, _, port = address.rpartition(":")
        if not host or not (port.isascii() and port.isdigit()):
            raise SentinelURLError(f"REDIS_URL: {scheme} address {address!r} must be host:port")
        addresses.append((host.strip("[]"), int(port)))
    return addresses, [piece for piece in parts.path.split("/") if piece], password


def parse_cluster_url(url):
    """``(nodes [(host, port)], password)`` from a ``redis+cluster://`` URL."""
    nodes, path, password = _addresses(url, "cluster")
    if not nodes or path:
        raise SentinelURLError("REDIS_URL: must be redis+cluster://host:port[,host:port...]/ "
                               "(a cluster has no database number)")
    return nodes, password


# A cluster's client retries a command its node could not take (the node gone, the
# slot moved, the cluster reconfiguring after a failover), asking the cluster where
# the slot is now, for some 8 s: longer than a replica takes to be promoted.
CLUSTER_RETRIES = 20


def _cluster(url, options):
    nodes, password = parse_cluster_url(url)
    options.pop("retry", None)
    if not options.get("ssl"):
        options.setdefault("connection_class", QuietConnection)
    retry = Retry(ExponentialWithJitterBackoff(cap=0.5, base=0.05), CLUSTER_RETRIES)
    return LazyCluster(
        nodes[0], nodes[1:], password=password, retry=retry, require_full_coverage=False,
        connection_pool_class=redis.BlockingConnectionPool,
        max_connections=options.pop("max_connections", POOL_SIZE),
        timeout=options.pop("timeout", POOL_WAIT), **options)


def parse_sentinel_url(url):
    """``(sentinels [(host, port)], service, db, password)`` from a sentinel URL."""
    sentinels, path, password = _addresses(url, "sentinel")
    bad_db = len(path) == 2 and not (path[1].isascii() and path[1].isdigit())
    if not sentinels or not path or len(path) > 2 or bad_db:
        raise SentinelURLError("REDIS_URL: must be redis+sentinel://host:port[,host:port...]/service[/db]")
    return sentinels, path[0], int(path[1]) if len(path) == 2 else 0, password


def _sentinel_master(url, options):
    sentinels, service, db, password = parse_sentinel_url(url)
    options.pop("timeout", None)
    # redis-py's sentinel pool refuses past max_connections rather than waiting: keep it high.
    options.setdefault("max_connections", POOL_SIZE * 10)
    if not options.get("ssl"):
        options.setdefault("connection_class", QuietSentinelConnection)
    sentinel = Sentinel(sentinels, socket_timeout=options.get("socket_timeout", 5),
                        socket_connect_timeout=options.get("socket_connect_timeout", 2))
    return sentinel.master_for(service, db=db, password=password, **options)
