"""Redis connections with the timeouts Herald relies on.

Short connect and read timeouts turn an unreachable Redis into a quick,
catchable error (a 503, a reconnect with backoff) instead of a hang.

The pool is a blocking one: redis-py's default pool refuses outright
("Too many connections") once 100 connections are in use, which a web
process meets whenever more than 100 browsers connect at the same moment
(after a restart, every open tab does). Here a greenlet past the limit
waits its turn for up to POOL_WAIT seconds instead.
"""
import redis

# Errors that mean "Redis is not reachable right now", as opposed to a bug.
UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError, OSError)


POOL_SIZE = 100  # connections per client, at most
POOL_WAIT = 5     # seconds to wait for one when all are in use


def connect(url, **options):
    """A client for ``url`` (``redis://``, ``rediss://`` or ``unix://``)."""
    options.setdefault("socket_connect_timeout", 2)
    options.setdefault("socket_timeout", 5)
    options.setdefault("health_check_interval", 30)
    options.setdefault("max_connections", POOL_SIZE)
    options.setdefault("timeout", POOL_WAIT)
    return redis.Redis.from_pool(redis.BlockingConnectionPool.from_url(url, **options))
