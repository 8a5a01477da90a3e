"""Following ``herald:live`` without missing anything, for the relay and the ZeroMQ bridge.

A :class:`LiveFollower` keeps ``position``, the stream id of the last
notification it handed on. Before its first subscription it reads the
stream's newest id; after every (re)subscription it first hands on whatever
the stream holds past ``position`` (published while it was away); a live
message whose id is not past ``position`` was handed on already and is
dropped. When Redis goes away it retries with capped exponential backoff,
logging one line per change of state rather than one per attempt.

Batching adapts to load: after each wait, whatever else has already arrived
(up to BATCH_MAX) is taken at once and handed on together to
``deliver_many``, when given (a :class:`~app.stream.live_reader.LiveReader`
reads the subscription: one wait, one read for all of it). An idle follower
hands on each notification the moment it arrives, alone; a busy one, whole
batches, so that the relay writes one frame per client per batch rather than
one per notification.

It runs in a thread or, monkey-patched, in a greenlet: it only needs
``time.sleep`` and blocking sockets.
"""
import logging
import time

import orjson

from app.redis_client import UNAVAILABLE, connect, is_cluster
from app.stream import history
from app.stream.control import decode as decode_control
from app.stream.envelope import id_key, with_id
from app.stream.keys import CONTROL
from app.stream.live_reader import LiveReader
from app.stream.shards import configured as configured_shards
from app.stream.shards import stream_id

POLL_SECONDS = 1.0
BACKOFF_FIRST = 0.1
BACKOFF_MAX = 2.0
CATCH_UP_CHUNK = 500
BATCH_MAX = 100
_CONTROL = CONTROL.encode()


class LiveFollower:
    """Calls ``deliver(envelope, raw)`` (given to :meth:`run`) once per notification, in
    id order, missing none; ``position`` is the id of the last one handed on.

    ``raw`` is the envelope's JSON (bytes, ``id`` first). With
    ``deliver_many``, that is called instead with lists of such
    ``(envelope, raw)`` pairs (see the module's docstring). ``control``, if
    given, is called with each ``herald:control`` message, decoded (an
    app.stream.control.Message; one that cannot be read is of kind UNKNOWN),
    in order with the notifications around it.
    """

    def __init__(self, client, redis_url, name="follower", on_start=None, shard=None,
                 control_only=False):
        """``on_start``: called with the first position, before anything from there is
        handed on (the relay's window of recent notifications fills up to it).
        ``shard``: the app.stream.shards.Shard followed (STREAM_SHARDS > 1: its stream
        and its live channel, by sharded pub/sub); shard 0 by default.
        ``control_only``: herald:control alone, for a sharded history, whose shards'
        followers read only their shard channels (a control message published while
        it was away is not read again: they tell of changes that the state in Redis
        keeps, which a reconnecting web process reads anew)."""
        self.control_only = control_only
        self.shard = shard if shard is not None else configured_shards()[0]
        self._live = self.shard.live.encode()
        self.client = client  # for stream reads (with timeouts)
        # No read timeout here: an idle channel is normal; the LiveReader's wait is
        # POLL_SECONDS and its PING after HEALTH_EVERY s of silence finds a dead link.
        self.pubsub_client = connect(redis_url, socket_timeout=None, health_check_interval=10)
        self.deliver = self.deliver_many = self.control = None  # given to run()
        self.log = logging.getLogger(f"herald.{name}")
        self.position = None
        self.position_key = (0, 0)
        self.on_start = on_start
        self.connected = False
        self.reconnects = 0

    def hand_to(self, deliver, control=None, deliver_many=None):
        """Who gets what it follows: ``deliver`` (or ``deliver_many``) and
        ``control`` (see the class). :meth:`run` starts with this."""
        self.deliver, self.control, self.deliver_many = deliver, control, deliver_many

    def run(self, running, deliver, control=None, deliver_many=None):
        """Follow herald:live while ``running()`` is true, handing on what arrives
        (:meth:`hand_to`)."""
        self.hand_to(deliver, control, deliver_many)
        backoff = BACKOFF_FIRST
        while running():
            pubsub = None
            try:
                if self.position is None and not self.control_only:
                    position = history.newest_id(self.client, self.shard)
                    if self.on_start is not None:
                        self.on_start(position)  # before any notification is handed on
                    self.advance(position)
                pubsub = self._subscribe()
                live = LiveReader(pubsub, wait=POLL_SECONDS)
                if not self.control_only:
                    self.catch_up()
                self._set_connected(True)
                backoff = BACKOFF_FIRST
                while running():
                    messages = live.messages(BATCH_MAX)
                    if messages:
                        self.handle_all(messages)
            except UNAVAILABLE as exc:
                self._set_connected(False, exc)
                time.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
            except Exception:  # a bug must not end the following: log it and go on
                self.log.exception("unexpected error; resubscribing")
                time.sleep(backoff)
            finally:
                try:
                    if pubsub is not None:
                        pubsub.close()
                except Exception:  # closing a dead connection may fail; nothing to do
                    pass

    def _subscribe(self):
        """A subscription to the live channel (and herald:control, when handed control
        messages): by sharded pub/sub, on a cluster on a connection to the master that
        holds the shard's slot, learnt through a read of its stream (which follows a
        failover), for a sharded history; else plain pub/sub."""
        if self.control_only:
            pubsub = self.pubsub_client.pubsub(ignore_subscribe_messages=True)
            pubsub.subscribe(CONTROL)
            return pubsub
        if not self.shard.sharded:
            pubsub = self.pubsub_client.pubsub(ignore_subscribe_messages=True)
            pubsub.subscribe(*([self.shard.live, CONTROL] if self.control else [self.shard.live]))
            return pubsub
        if self.control:
            raise ValueError("a shard's follower takes no control messages: a control-only one does")
        source = self.pubsub_client
        if is_cluster(source):
            self.client.exists(self.shard.stream)  # the slot's master as the cluster now has it
            source = source.get_redis_connection(source.get_node_from_key(self.shard.live))
        pubsub = source.pubsub(ignore_subscribe_messages=True)
        pubsub.ssubscribe(self.shard.live)
        return pubsub

    def _set_connected(self, connected, error=None):
        if connected != self.connected:
            self.connected = connected
            if connected:
                self.log.info("following %s from %s", CONTROL if self.control_only
                              else self.shard.live, self.position)
            else:
                self.reconnects += 1
                self.log.warning("lost Redis (%s); retrying with backoff", error)

    def catch_up(self):
        """Hand on what the stream holds past ``position``."""
        caught = 0
        while True:
            entries = self.client.xrange(self.shard.stream, min=f"({stream_id(self.position)}",
                                         max="+", count=CATCH_UP_CHUNK)
            pairs = []
            for entry_id, fields in entries:
                raw = with_id(fields[b"envelope"], self.shard.public(entry_id))
                pairs.append((orjson.loads(raw), raw))
            for start in range(0, len(pairs), BATCH_MAX):
                self._hand_on(pairs[start:start + BATCH_MAX])
            caught += len(entries)
            if len(entries) < CATCH_UP_CHUNK:
                break
        if caught:
            self.log.info("caught up %d notifications from the stream", caught)

    def handle(self, channel, data):
        """One pub/sub message (bytes channel, bytes data)."""
        self.handle_all([(channel, data)])

    def handle_all(self, messages):
        """Pub/sub messages, in order: notifications past ``position`` are handed
        on in one batch, split only where a control message comes between."""
        batch, newest = [], self.position_key
        for channel, data in messages:
            if channel == self._live:
                envelope = orjson.loads(data)
                key = id_key(envelope["id"])
                if key > newest:
                    batch.append((envelope, data))
                    newest = key
            elif channel == _CONTROL and self.control:
                if batch:
                    self._hand_on(batch)
                    batch = []
                self.control(decode_control(data))
        if batch:
            self._hand_on(batch)

    def _hand_on(self, pairs):
        if self.deliver_many is not None:
            self.deliver_many(pairs)
            self.advance(pairs[-1][0]["id"])
            return
        for envelope, raw in pairs:
            self.deliver(envelope, raw)
            self.advance(envelope["id"])

    def advance(self, entry_id):
        self.position = entry_id
        self.position_key = id_key(entry_id)

