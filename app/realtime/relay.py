"""The relay: ONE Redis subscription and ONE greenlet per web process.

It follows ``herald:live`` through a :class:`~app.stream.follow.LiveFeed` (which
never misses a notification, even across a Redis restart) and emits each
notification once, to the rooms of the prefixes of its topic (or to its
owner's room when private), as the JSON Redis delivered; what arrived
together is fanned out together (see HeraldServer.fan_out_many). It also
follows ``herald:control``: subscription changes made through other
processes, read-state and archive/snooze changes for a user's tabs, presence,
and credentials that ended (app.stream.control; one handler per kind).

Server-Sent Events streams (streams.py) get the same batches, by the same
rooms, and follow the same control messages.

It also closes the seam for connections that resume from a ``last_id``
(see NotificationsNamespace): while such a connection is *held*, what the
relay delivers that the connection may see is kept for it, and once its
replay is done :meth:`release` hands over the part the replay did not cover.
"""
import time

import orjson

from app.realtime import presence
from app.stream import control
from app.stream.follow import LiveFeed
from app.ops.metrics import LAG_BUCKETS, Histogram
from app.stream.envelope import id_key, restrict, visible_to
from app.realtime import rooms


class Held:
    """A connection being replayed: whose it is, what it sees (within its
    ``limit`` of prefixes, if any), what came meanwhile."""

    __slots__ = ("user", "topics", "limit", "buffer")

    def __init__(self, user, topics, limit=None):
        self.user = user
        self.topics = list(topics)
        self.limit = limit
        self.buffer = []


class Relay:
    """Moves notifications from Redis to Socket.IO rooms, missing none."""

    def __init__(self, sio, namespace, redis_url, client):
        self.sio = sio
        self.namespace = namespace
        self.control = control.Dispatch()
        self.control.on(control.READ, self._read)
        self.control.on(control.STATE, self._state)
        self.control.on(control.PRESENCE, self._presence)
        self.control.on(control.REVOKED, self._revoked)
        self.control.on(control.SUBSCRIPTIONS, self._subscriptions)
        self.feed = LiveFeed(client, redis_url, self.deliver, self.control, name="relay",
                             deliver_many=self.deliver_many)
        self.running = False
        self.delivered = 0
        self.lag = Histogram(LAG_BUCKETS)  # publish (the id's time) to fan-out, per batch
        self.held = {}    # sid -> Held
        self.floors = {}  # sid -> id key up to which its replay already sent everything
        self.streams = None  # a streams.StreamHub: Server-Sent Events fed from here too

    def start(self):
        """Start relaying in a background greenlet (or thread, outside gevent)."""
        if not self.running:
            self.running = True
            self.sio.start_background_task(self.feed.run, lambda: self.running)

    def stop(self):
        self.running = False

    # -- herald:control, one handler per kind of message --------------------------

    def _read(self, message):
        """Read state changed in some tab: tell all of them."""
        self.sio.emit("read", message.data, namespace=rooms.NAMESPACE,
                      to=rooms.user_room(message.user))

    def _state(self, message):
        """Archived, snoozed, or back: the same."""
        self.sio.emit("state", message.data, namespace=rooms.NAMESPACE,
                      to=rooms.user_room(message.user))

    def _presence(self, message):
        """A user came online or went offline."""
        self.sio.emit("presence", message.data, namespace=rooms.NAMESPACE,
                      to=presence.WATCH_ROOM)

    def _revoked(self, message):
        """Signed out, tokens revoked, or deleted."""
        self.namespace.disconnect_user(message.user)
        if self.streams is not None:
            self.streams.end_user(message.user, "the user's credentials ended")

    def _subscriptions(self, message):
        self.namespace.apply_change(message.user, *message.data)
        if self.streams is not None:
            self.streams.apply_change(message.user, *message.data)

    def deliver(self, envelope, raw=None):
        """Send one notification to every connection that should have it.

        ``raw`` is its JSON as it came from Redis: sent as it is, never re-encoded.
        """
        self.deliver_many([(envelope, raw)])

    def deliver_many(self, pairs):
        """:meth:`deliver` for several ``(envelope, raw)`` in id order, fanned out together."""
        batch = []
        streamed = [] if self.streams else None
        for envelope, raw in pairs:
            key = id_key(envelope["id"])
            topic, owner = envelope["topic"], envelope.get("user")
            skip = {sid for sid, floor in self.floors.items() if key <= floor} if self.floors else None
            text = raw.decode() if raw is not None else orjson.dumps(envelope).decode()
            batch.append((rooms.rooms_for(topic, owner), text, skip))
            if streamed is not None:
                streamed.append((batch[-1][0], envelope["id"], text, skip))
            for held in self.held.values():
                if visible_to(held.user, held.topics, topic, owner):
                    held.buffer.append(envelope)
            if self.floors:
                self.floors = {sid: floor for sid, floor in self.floors.items() if floor > key}
        self.sio.fan_out_many(rooms.NAMESPACE, batch)
        if streamed:
            self.streams.deliver(streamed)
        self.delivered += len(batch)
        published_ms = id_key(pairs[0][0]["id"])[0]
        self.lag.observe(max(0.0, time.time() - published_ms / 1000))

    # -- the replay seam -------------------------------------------------------

    def hold(self, sid, user, topics, limit=None):
        """Keep what ``sid`` may see from now on, until :meth:`release`."""
        self.held[sid] = Held(user, topics, limit)

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
        if floor > self.feed.position_key:
            self.floors[sid] = floor
        return held.topics, [n for n in held.buffer if id_key(n["id"]) > floor]

    def update_held(self, user, added, removed, full=None):
        """A subscription change of ``user`` while one of their connections is held
        (``full``: the user's list after it, when known)."""
        for held in self.held.values():
            if held.user != user:
                continue
            if held.limit is not None and full is not None:
                held.topics = restrict(full, held.limit)
                continue
            gone = restrict(removed, held.limit)
            held.topics = [t for t in held.topics if t not in gone]
            held.topics += [t for t in restrict(added, held.limit) if t not in held.topics]

    def forget_hold(self, sid):
        """Drop ``sid``'s hold, if its replay ended without a release."""
        self.held.pop(sid, None)

    def forget(self, sid):
        """``sid`` has gone."""
        self.held.pop(sid, None)
        self.floors.pop(sid, None)
