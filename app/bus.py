"""Publishing: the one way a notification enters Herald.

:func:`publish` validates an envelope, stamps ``ts``, and in one Lua script
(atomic, so nothing is ever half-written) appends it to the ``herald:stream``
history, whose entry id becomes the notification id, and publishes the live
copy, id included, on ``herald:live``. A reader therefore never sees a live id
that the stream lacks.

It works from any process that can reach Redis (``REDIS_URL``)::

    from app.bus import publish
    publish("spark.job.succeeded", "Rollup done", severity="success")

Stream entries hold three fields: ``topic``, ``user`` (empty when public) and
``envelope`` (the JSON without ``id``; the entry id is the id), so readers can
filter by topic and owner without decoding JSON.
"""
import os

from . import notifications
from .config import redis_url
from .redis_client import UNAVAILABLE, connect

STREAM = "herald:stream"
LIVE = "herald:live"
CONTROL = "herald:control"
DEFAULT_HISTORY_MAX = 100_000

# KEYS: stream, live channel. ARGV: envelope JSON without id, maxlen, topic, user.
_PUBLISH_LUA = """
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*',
                      'topic', ARGV[3], 'user', ARGV[4], 'envelope', ARGV[1])
redis.call('PUBLISH', KEYS[2], '{"id":"' .. id .. '",' .. string.sub(ARGV[1], 2))
return id
"""


class BusUnavailable(RuntimeError):
    """Redis could not be reached, so nothing was published."""


class Bus:
    """Publishes to one Redis; safe to share between threads and greenlets."""

    def __init__(self, client, history_max=DEFAULT_HISTORY_MAX):
        self.client = client
        self.history_max = history_max
        self._script = client.register_script(_PUBLISH_LUA)

    def publish_envelope(self, envelope):
        """Validate and publish ``envelope`` (a dict without id/ts).

        Returns ``{"id": ..., "ts": ...}``. Raises EnvelopeError naming the
        field for bad input, BusUnavailable when Redis cannot be reached.
        """
        clean = notifications.validate(envelope)
        ts = notifications.now_iso()
        raw = notifications.encode(clean, ts)
        try:
            entry_id = self._script(
                keys=[STREAM, LIVE],
                args=[raw, self.history_max, clean["topic"], clean.get("user", "")])
        except UNAVAILABLE as exc:
            raise BusUnavailable(f"Redis is unreachable: {exc}") from exc
        return {"id": entry_id.decode() if isinstance(entry_id, bytes) else entry_id,
                "ts": ts}

    def publish(self, topic, title, **fields):
        """Publish a notification given as keywords; returns its id."""
        return self.publish_envelope(dict(fields, topic=topic, title=title))["id"]


_default_bus = None


def default_bus():
    """A Bus on ``REDIS_URL`` (or the private Redis), made once per process."""
    global _default_bus
    if _default_bus is None:
        history_max = int(os.environ.get("HISTORY_MAX") or DEFAULT_HISTORY_MAX)
        _default_bus = Bus(connect(redis_url()), history_max)
    return _default_bus


def publish(topic, title, *, bus=None, **fields):
    """Publish one notification and return its id.

    ``fields`` are the optional envelope fields: body, severity, data, user,
    origin, correlation_id. Raises EnvelopeError or BusUnavailable.
    """
    return (bus or default_bus()).publish(topic, title, **fields)
