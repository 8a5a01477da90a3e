"""The relay: ONE Redis subscription and ONE greenlet per web process.

It listens on ``herald:live`` and emits each notification once, to the rooms
of the prefixes of its topic (or to its owner's room when private); python-
socketio encodes the packet once for all recipients. It also listens on
``herald:control`` for subscription changes made through another process.

When Redis goes away it retries with capped exponential backoff, logging one
line per change of state rather than one per attempt.
"""
import logging
import time

import orjson

from ..bus import CONTROL, LIVE
from ..redis_client import UNAVAILABLE, connect
from . import rooms

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
BACKOFF_FIRST = 0.1
BACKOFF_MAX = 5.0


class Relay:
    """Moves notifications from Redis pub/sub to Socket.IO rooms."""

    def __init__(self, sio, namespace, redis_url):
        self.sio = sio
        self.namespace = namespace
        # No read timeout: an idle channel is normal; health checks find dead links.
        self.client = connect(redis_url, socket_timeout=None, health_check_interval=10)
        self.running = False
        self.connected = False
        self.last_id = None
        self.delivered = 0
        self._task = None

    def start(self):
        """Start relaying in a background greenlet (or thread, outside gevent)."""
        if not self.running:
            self.running = True
            self._task = self.sio.start_background_task(self._run)

    def stop(self):
        self.running = False

    def _run(self):
        backoff = BACKOFF_FIRST
        while self.running:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(LIVE, CONTROL)
                self._set_connected(True)
                backoff = BACKOFF_FIRST
                while self.running:
                    message = pubsub.get_message(timeout=POLL_SECONDS)
                    if message is not None:
                        self.handle(message["channel"], message["data"])
            except UNAVAILABLE as exc:
                self._set_connected(False, exc)
                time.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
            except Exception:  # a bug must not kill the relay: log it and go on
                log.exception("relay: unexpected error; resubscribing")
                time.sleep(backoff)
            finally:
                try:
                    pubsub.close()
                except Exception:  # closing a dead connection may fail; nothing to do
                    pass

    def _set_connected(self, connected, error=None):
        if connected != self.connected:
            self.connected = connected
            if connected:
                log.info("relay: subscribed to %s", LIVE)
            else:
                log.warning("relay: lost Redis (%s); retrying with backoff", error)

    def handle(self, channel, data):
        """Route one pub/sub message (bytes channel, bytes data)."""
        if channel == LIVE.encode():
            self.deliver(orjson.loads(data))
        elif channel == CONTROL.encode():
            change = orjson.loads(data)
            self.namespace.apply_change(change["user"], change.get("add", []),
                                        change.get("remove", []))

    def deliver(self, envelope):
        """Emit one notification to every connection that should have it."""
        targets = rooms.rooms_for(envelope["topic"], envelope.get("user"))
        self.sio.emit("notification", envelope, namespace=rooms.NAMESPACE, to=targets)
        self.last_id = envelope["id"]
        self.delivered += 1
