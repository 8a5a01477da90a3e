"""The relay: ONE Redis subscription and ONE greenlet per web process.

It follows ``herald:live`` through a :class:`~app.stream.follow.LiveFollower` (which
never misses a notification, even across a Redis restart) and emits each
notification once, to the rooms of the prefixes of its topic (or to its
owner's room when private), as the JSON Redis delivered; what arrived
together is fanned out together (wire/fanout.py). It also
follows ``herald:control``: subscription changes made through other
processes, read-state and archive/snooze changes for a user's tabs, presence,
and credentials that ended (app.stream.control; one handler per kind).

Server-Sent Events streams (sse_hub.py) get the same batches, by the same
rooms, and follow the same control messages.

For connections that resume from a ``last_id`` it fills the window of recent
notifications (recent.py), from which replays read and held connections are
handed what came meanwhile (seam.py); a connection whose replay ran ahead of
the relay skips, up to its floor, what the replay already sent.

With a sharded history (STREAM_SHARDS > 1) there is a follower per shard, each with
its own window and seam (lanes.py), and herald:control is followed on its own; each
lane's deliveries are fanned out as they come, with that lane's window and floors.

Beside it runs the :class:`~app.realtime.redis_watch.RedisWatch`, which tells
the browsers when this process loses and regains Redis (``status``): a
paused Redis leaves the subscription open and silent, so the follower alone
would never notice. It costs nothing per notification.
"""
import functools
import time

import orjson

from app.ops.histogram import LAG_BUCKETS, Histogram
from app.realtime import lanes, presence, rooms
from app.stream import control
from app.stream.envelope import id_key
from app.stream.shards import configured as configured_shards

# Seconds a REST publish waits, at most, for this process's relay to fan its notification
# out before answering (Relay.reached).
REACHED_WAIT = 0.005


class Relay:
    """Moves notifications from Redis to Socket.IO rooms, missing none."""

    def __init__(self, sio, follower, seam, namespace, streams, watch, lanes=None):
        """``sio``: the HeraldServer; ``follower``: the LiveFollower of herald:live it
        fans out from (made to fill ``seam``'s window where it starts: services.py);
        ``seam``: the ReplaySeam whose held connections keep what is delivered;
        ``namespace`` and ``streams`` (the StreamHub of SSE): where control messages
        apply; ``watch``: the RedisWatch it runs beside the follower. With ``lanes``
        (a sharded history: lanes.py), ``follower`` is their lanes.Followers, whose
        ``control`` (a control-only follow.LiveFollower) follows herald:control."""
        self.lanes = lanes
        self.sio = sio
        self.follower = follower
        self.seam = seam
        self.namespace = namespace
        self.streams = streams
        self.control = control.Dispatch()
        self.control.on(control.READ, self._read)
        self.control.on(control.STATE, self._state)
        self.control.on(control.PRESENCE, self._presence)
        self.control.on(control.REVOKED, self._revoked)
        self.control.on(control.SUBSCRIPTIONS, self._subscriptions)
        self.running = False
        self.delivered = 0
        self.lag = Histogram(LAG_BUCKETS)  # publish (the id's time) to fan-out, per batch
        # Per shard (its index), the id key of the newest notification fanned out.
        self.fanned_out = {}
        self.waiters = []  # (shard, id key, event) of publishes waiting for theirs (reached)
        # Whether Redis answers, told to the browsers; the namespace tells new connections.
        self.watch = watch

    def start(self):
        """Start relaying in a background greenlet (or thread, outside gevent)."""
        if not self.running:
            self.running = True
            running = lambda: self.running  # noqa: E731
            if self.lanes is None:
                self.sio.start_background_task(self.follower.run, running, *self.handlers())
            else:
                for lane in self.lanes:  # each once a connection needs it (lanes.py)
                    self.sio.start_background_task(lanes.run_lane, lane, self.follower,
                                                   running, self.handlers(lane))
                self.sio.start_background_task(self.follower.control.run, running, None,
                                               self.control)
            self.sio.start_background_task(self.watch.run, running)

    def handlers(self, lane=None):
        """What the follower (of ``lane``, if given) hands notifications and control
        messages to (LiveFollower.hand_to)."""
        if lane is None:
            return self.deliver, self.control, self.deliver_many
        deliver_many = functools.partial(self.deliver_many, lane=lane)
        return (lambda envelope, raw=None: deliver_many([(envelope, raw)])), None, deliver_many

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
        self.streams.end_user(message.user, "the user's credentials ended")

    def _subscriptions(self, message):
        added = message.data[0]
        if self.lanes is not None and added and (
                rooms.connections_of(self.sio, message.user) or self.streams.has_user(message.user)):
            self.seam.need(message.user, added)  # its shards followed before their rooms are joined
        self.namespace.apply_change(message.user, *message.data)
        self.streams.apply_change(message.user, *message.data)

    def reached(self, entry_id, within=REACHED_WAIT):
        """Wait until this process has fanned ``entry_id`` out (at most ``within``
        seconds; at once when it is not relaying); True when it has.

        A REST publish waits for it before it answers. Redis writes the publish
        script's reply a moment before the live copy, so the publishing
        greenlet used to run first, and this process's own clients got the
        notification only after the whole answer was built and written: about
        a millisecond of publish-to-browser latency, more than the fan-out
        itself (bench/RESULTS.md). Waiting lets the relay go first; the answer
        then also means that this process's clients have it on their sockets.
        Only one publish waits at a time: with others already waiting (a stream
        of publishes) it answers at once, as waiting would only cost it.
        """
        key, shard = id_key(entry_id), 0
        if self.lanes is not None:
            shard = configured_shards().locate(entry_id)[0].index
        fanned_out = self.fanned_out.get(shard)
        if not self.running or (fanned_out is not None and key <= fanned_out):
            return self.running
        if self.waiters:  # publishes in a stream: the relay is busy anyway, and the
            return False  # answers' waits would only cost them (bench/rest_publish.py)
        event = self.sio.eio.create_event()
        waiter = (shard, key, event)
        self.waiters.append(waiter)
        try:
            return event.wait(within)
        finally:
            self.waiters.remove(waiter)

    def deliver(self, envelope, raw=None):
        """Send one notification to every connection that should have it.

        ``raw`` is its JSON as it came from Redis: sent as it is, never re-encoded.
        """
        self.deliver_many([(envelope, raw)])

    def deliver_many(self, pairs, lane=None):
        """:meth:`deliver` for several ``(envelope, raw)`` in id order, fanned out together
        (from ``lane``'s shard, with a sharded history)."""
        batch = []
        streamed = [] if self.streams else None
        seam = self.seam if lane is None else lane.seam
        recent = seam.recent
        for envelope, raw in pairs:
            key = id_key(envelope["id"])
            topic, owner = envelope["topic"], envelope.get("user")
            floors = seam.floors
            skip = {sid for sid, floor in floors.items() if key <= floor} if floors else None
            text = raw.decode() if raw is not None else orjson.dumps(envelope).decode()
            batch.append((rooms.rooms_for(topic, owner), text, skip))
            if streamed is not None:
                streamed.append((batch[-1][0], envelope["id"], text, skip))
            recent.add(key, envelope["id"], topic, owner, text)
            if floors:
                seam.floors = {sid: floor for sid, floor in floors.items() if floor > key}
        self.sio.fan_out_many(rooms.NAMESPACE, batch)
        if streamed:
            self.streams.deliver(streamed)
        self.delivered += len(batch)
        shard = 0 if lane is None else lane.shard.index
        self.fanned_out[shard] = key
        for in_shard, waiting, event in self.waiters:
            if in_shard == shard and waiting <= key:
                event.set()
        published_ms = id_key(pairs[0][0]["id"])[0]
        self.lag.observe(max(0.0, time.time() - published_ms / 1000))
