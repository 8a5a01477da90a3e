"""The relay: ONE Redis subscription and ONE greenlet per web process.

It listens on ``herald:live`` and emits each notification once, to the rooms
of the prefixes of its topic (or to its owner's room when private);
python-socketio encodes the packet once for all recipients. It also listens
on ``herald:control`` for subscription changes made through other processes.

It never misses a notification. It keeps ``position``, the stream id of the
last notification it relayed. Before its first subscription it reads the
stream's newest id; after every (re)subscription it reads from the stream
whatever came after ``position`` and relays that first; a live message whose
id is not past ``position`` was relayed already and is dropped. When Redis
goes away it retries with capped exponential backoff, logging one line per
change of state rather than one per attempt.

It also closes the seam for connections that resume from a ``last_id``
(see NotificationsNamespace): while such a connection is *held*, what the
relay delivers that the connection may see is kept for it, and once its
replay is done :meth:`release` hands over the part the replay did not cover.
"""
import logging
import time

import orjson

from .. import history
from ..bus import CONTROL, LIVE, STREAM
from ..notifications import id_key, visible_to, with_id
from ..redis_client import UNAVAILABLE, connect
from . import rooms

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
BACKOFF_FIRST = 0.1
BACKOFF_MAX = 2.0
CATCH_UP_CHUNK = 500


class Held:
    """A connection being replayed: whose it is, what it sees, what came meanwhile."""

    __slots__ = ("user", "topics", "buffer")

    def __init__(self, user, topics):
        self.user = user
        self.topics = list(topics)
        self.buffer = []


class Relay:
    """Moves notifications from Redis to Socket.IO rooms, missing none."""

    def __init__(self, sio, namespace, redis_url, client):
        self.sio = sio
        self.namespace = namespace
        self.client = client  # for stream reads (with timeouts)
        # No read timeout here: an idle channel is normal; health checks find dead links.
        self.pubsub_client = connect(redis_url, socket_timeout=None, health_check_interval=10)
        self.running = False
        self.connected = False
        self.position = None
        self.position_key = (0, 0)
        self.delivered = 0
        self.reconnects = 0
        self.held = {}    # sid -> Held
        self.floors = {}  # sid -> id key up to which its replay already sent everything

    # -- running -----------------------------------------------------------

    def start(self):
        """Start relaying in a background greenlet (or thread, outside gevent)."""
        if not self.running:
            self.running = True
            self.sio.start_background_task(self._run)

    def stop(self):
        self.running = False

    def _run(self):
        backoff = BACKOFF_FIRST
        while self.running:
            pubsub = self.pubsub_client.pubsub(ignore_subscribe_messages=True)
            try:
                if self.position is None:
                    self._advance(history.newest_id(self.client))
                pubsub.subscribe(LIVE, CONTROL)
                self._catch_up()
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
                log.info("relay: subscribed to %s at %s", LIVE, self.position)
            else:
                self.reconnects += 1
                log.warning("relay: lost Redis (%s); retrying with backoff", error)

    def _catch_up(self):
        """Relay what the stream holds past ``position`` (published while we were away)."""
        caught = 0
        while True:
            entries = self.client.xrange(STREAM, min=f"({self.position}", max="+",
                                         count=CATCH_UP_CHUNK)
            for entry_id, fields in entries:
                self.deliver(orjson.loads(with_id(fields[b"envelope"], entry_id)))
            caught += len(entries)
            if len(entries) < CATCH_UP_CHUNK:
                break
        if caught:
            log.info("relay: caught up %d notifications from the stream", caught)

    # -- routing -------------------------------------------------------------

    def handle(self, channel, data):
        """Route one pub/sub message (bytes channel, bytes data)."""
        if channel == LIVE.encode():
            envelope = orjson.loads(data)
            if id_key(envelope["id"]) > self.position_key:
                self.deliver(envelope)
        elif channel == CONTROL.encode():
            change = orjson.loads(data)
            if "read" in change:  # read state changed in some tab: tell all of them
                self.sio.emit("read", change["read"], namespace=rooms.NAMESPACE,
                              to=rooms.user_room(change["user"]))
            else:
                self.namespace.apply_change(change["user"], change.get("add", []),
                                            change.get("remove", []))

    def deliver(self, envelope):
        """Emit one notification to every connection that should have it."""
        key = id_key(envelope["id"])
        topic, owner = envelope["topic"], envelope.get("user")
        skip = [sid for sid, floor in self.floors.items() if key <= floor] if self.floors else None
        self.sio.emit("notification", envelope, namespace=rooms.NAMESPACE,
                      to=rooms.rooms_for(topic, owner), skip_sid=skip)
        for held in self.held.values():
            if visible_to(held.user, held.topics, topic, owner):
                held.buffer.append(envelope)
        self._advance(envelope["id"], key)
        self.delivered += 1
        if self.floors:
            self.floors = {sid: floor for sid, floor in self.floors.items() if floor > key}

    def _advance(self, entry_id, key=None):
        self.position = entry_id
        self.position_key = key or id_key(entry_id)

    # -- the replay seam -------------------------------------------------------

    def hold(self, sid, user, topics):
        """Keep what ``sid`` may see from now on, until :meth:`release`."""
        self.held[sid] = Held(user, topics)

    def release(self, sid, cursor):
        """End the hold; returns (topics, what arrived meanwhile past ``cursor``).

        Must run in the same step as joining the rooms (no I/O in between),
        so that every later notification reaches the connection through them.
        If the relay has not yet reached ``cursor``, the connection's floor
        makes it skip what the replay already sent.
        """
        held = self.held.pop(sid)
        if cursor is None:
            return held.topics, held.buffer
        floor = id_key(cursor)
        if floor > self.position_key:
            self.floors[sid] = floor
        return held.topics, [n for n in held.buffer if id_key(n["id"]) > floor]

    def update_held(self, user, added, removed):
        """A subscription change of ``user`` while one of their connections is held."""
        for held in self.held.values():
            if held.user == user:
                held.topics = [t for t in held.topics if t not in removed]
                held.topics += [t for t in added if t not in held.topics]

    def forget_hold(self, sid):
        """Drop ``sid``'s hold, if its replay ended without a release."""
        self.held.pop(sid, None)

    def forget(self, sid):
        """``sid`` has gone."""
        self.held.pop(sid, None)
        self.floors.pop(sid, None)
