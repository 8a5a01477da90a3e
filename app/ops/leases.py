"""Expiring leases in Redis: at most one holder at a time, and a new one when it stops.

A lease is a key whose value is its holder's id, with an expiry. Its holder
keeps it by renewing it more often than its TTL (one Lua script: take it if
nobody holds it, push its expiry back if we do, else nothing); a holder that
dies, hangs or is cut off from Redis stops renewing, the key lapses, and
another process takes it. Letting go is compare-and-delete, so a holder
never deletes a lease that has already passed to someone else.

Two uses:

- :class:`Lease`: one role for one process (the archiving writer, the webhook
  dispatcher). ``held()`` also counts the TTL on the holder's own monotonic
  clock from the moment it *asked* (not when Redis answered), so a holder
  paused past its TTL sees at once, when it wakes, that it may no longer
  hold the lease. That narrows, but cannot close, the window in which two
  processes both believe they lead: work that must never be done twice
  needs a fence of its own as well (the archiver's file lock and position
  check, the digest markers).
- :class:`ItemLeases`: a short lease per item of work (one email), taken
  before doing it and let go after, so that of several workers that find
  the same item only one does it; if that one dies, its lease lapses and
  another does the item then.

On a Redis Cluster: a lease is one key, and each script here touches that key
alone, so it works wherever the key's slot is. A family whose own scripts
check the lease (a fence) names it under its own hash tag, so the lease is in
their slot (the webhooks' ``herald:{webhooks}:lease``: app/webhooks/dispatch.py).
"""
import os
import secrets
import socket
import time

from app.redis_client import UNAVAILABLE

# KEYS: lease. ARGV: holder, ttl ms. 1 when the lease is (now) the holder's.
_KEEP_LUA = """
local holder = redis.call('GET', KEYS[1])
if holder == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

# KEYS: lease. ARGV: holder. Deletes the lease only while it is the holder's.
_RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

SAFETY = 0.8  # of the TTL that a holder trusts its lease, counted on its own clock


def holder_id():
    """A unique id for this process: host, pid and a random part (a pid is reused
    after a restart, in a container often at once)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class Lease:
    """The lease ``key`` for ``holder`` (default :func:`holder_id`), ``ttl`` seconds."""

    def __init__(self, client, key, ttl, holder=None, clock=time.monotonic):
        self.client, self.key, self.ttl = client, key, float(ttl)
        self.holder = holder or holder_id()
        self.clock = clock
        self.valid_until = 0.0
        self._keep = client.register_script(_KEEP_LUA)
        self._release = client.register_script(_RELEASE_LUA)

    def keep(self):
        """Take the lease if it is free, renew it if it is ours; True when we hold it.
        Raises a Redis connection error when Redis cannot be reached (then we may not)."""
        asked = self.clock()
        try:
            ours = self._keep(keys=[self.key], args=[self.holder, int(self.ttl * 1000)]) == 1
        except UNAVAILABLE:
            self.valid_until = 0.0
            raise
        self.valid_until = asked + self.ttl * SAFETY if ours else 0.0
        return ours

    def held(self):
        """Whether we held the lease at our last ``keep()`` and its TTL has not run out
        since, by our own clock (no round trip)."""
        return self.clock() < self.valid_until

    def confirm(self):
        """``held()``, and Redis still names us the holder (one round trip)."""
        return self.held() and self.client.get(self.key) == self.holder.encode()

    def release(self):
        """Let go now (a clean stop), so another takes over without waiting the TTL out.
        Never raises: if Redis is away the lease lapses by itself."""
        self.valid_until = 0.0
        try:
            self._release(keys=[self.key], args=[self.holder])
        except UNAVAILABLE:
            pass

    def holder_now(self):
        """Who holds the lease, per Redis (None when nobody does)."""
        value = self.client.get(self.key)
        return value.decode() if value is not None else None


class ItemLeases:
    """Short leases on items of work: ``prefix + item`` holds the holder's id for ``ttl``."""

    def __init__(self, client, prefix, ttl, holder=None):
        self.client, self.prefix, self.ttl_ms = client, prefix, int(ttl * 1000)
        self.holder = holder or holder_id()
        self._release = client.register_script(_RELEASE_LUA)

    def take(self, item):
        """True when the lease on ``item`` is now ours (nobody else holds it)."""
        return bool(self.client.set(self.prefix + item, self.holder, nx=True, px=self.ttl_ms))

    def release(self, item):
        """Let go of ``item`` (never raises: if Redis is away it lapses by itself)."""
        try:
            self._release(keys=[self.prefix + item], args=[self.holder])
        except UNAVAILABLE:
            pass
