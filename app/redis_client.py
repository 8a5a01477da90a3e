"""Redis connections with the timeouts Herald relies on.

Short connect and read timeouts turn an unreachable Redis into a quick,
catchable error (a 503, a reconnect with backoff) instead of a hang.
"""
import redis

# Errors that mean "Redis is not reachable right now", as opposed to a bug.
UNAVAILABLE = (redis.ConnectionError, redis.TimeoutError, OSError)


def connect(url, **options):
    """A client for ``url`` (``redis://``, ``rediss://`` or ``unix://``)."""
    options.setdefault("socket_connect_timeout", 2)
    options.setdefault("socket_timeout", 5)
    options.setdefault("health_check_interval", 30)
    return redis.Redis.from_url(url, **options)
