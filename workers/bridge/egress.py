"""Egress: every notification, whoever published it, out on the XPUB socket.

Each goes as three frames ``[topic, origin, json_envelope]`` (origin empty
when the publisher set none), so a SUB filters by topic prefix and a peer
can drop its own echo. ZeroMQ's prefix filter is by bytes (``spark`` also
matches ``sparkle``): workers.zmq_peers.Subscriber re-checks segment bounds.

A slow subscriber never stalls the bridge: past ``BRIDGE_SNDHWM`` messages
queued for one subscriber, ZeroMQ drops further messages *for that
subscriber only*. Egress is a live view; a peer that must miss nothing
reads history from the Redis stream or the REST API.
"""
import logging
import threading

import zmq

from app.live_feed import LiveFeed

log = logging.getLogger("herald.bridge")


class Egress(threading.Thread):
    """Follows herald:live (missing nothing, see LiveFeed) and sends it on XPUB."""

    def __init__(self, context, settings, client, redis_url, secure):
        super().__init__(name="bridge-egress", daemon=True)
        self.xpub = context.socket(zmq.XPUB)
        self.xpub.sndhwm = settings.sndhwm
        self.xpub.linger = 0
        secure(self.xpub)
        self.xpub.bind(settings.xpub)
        self.feed = LiveFeed(client, redis_url, self.send, name="bridge.egress")
        self.running = True
        self.sent = 0

    def run(self):
        self.feed.run(lambda: self.running)
        self.xpub.close()

    def send(self, envelope, raw):
        self._read_subscriptions()
        origin = envelope.get("origin") or ""
        self.xpub.send_multipart([envelope["topic"].encode(), origin.encode(), raw])
        self.sent += 1

    def _read_subscriptions(self):
        """XPUB hands us (un)subscriptions; read them so they do not pile up."""
        while True:
            try:
                self.xpub.recv(zmq.NOBLOCK)
            except zmq.Again:
                return

    def stop(self):
        self.running = False
