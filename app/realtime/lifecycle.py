"""One lifecycle for every real-time connection, Socket.IO's and Server-Sent Events' alike.

A connection of either kind goes through the same steps, in this order, and
what a step took is given back when the connection ends, however it ends:

1. **admitted** (storm.py): at the process's connect rate, and, when it resumes
   from a cursor, only while a replay could take it; else refused at once
   with :class:`~.storm.Busy` and its ``retry_after``;
2. **counted** under its client address (per_address.py): at most
   MAX_SESSIONS_PER_ADDRESS each, else :class:`~.per_address.TooMany`;
3. its **topics** resolved: its user's subscriptions, within its
   credential's ``topics`` limit;
4. resuming: a **replay turn** reserved (a bounded number run at once) and the
   connection **held** by the seam (seam.py), so that what is published while
   history is read is kept for it; not resuming: live at once, its cursor the
   relay's **position**;
5. **replayed** (replay.py), then **live** in its rooms;
6. **ended**: its turn given back, the seam's hold forgotten, its address's
   count let go.

The transports differ only in how they say a refusal (a Socket.IO
CONNECT_ERROR: app/realtime/namespace.py; a ``busy`` event or a 429:
app/realtime/sse_stream.py), how they join rooms and how they write; this
module knows neither. It keeps no state per connection: each transport keeps
the address, the turn and the key with the rest of its connection's state.
"""
from redis.exceptions import NoScriptError

from app.realtime import replay
from app.realtime.lanes import ShardedSeam
from app.redis_client import is_cluster
from app.stream import state
from app.stream.envelope import restrict
from app.users import subscriptions


class Lifecycle:
    """The steps above for one web process: ``bounds`` its storm.ConnectBounds (None:
    no bounds, no count), ``seam`` its ReplaySeam, ``reads`` what a connection's
    subscriptions are read through (batched_reads.py: with the others of the moment)."""

    def __init__(self, bounds, seam, reads):
        self.bounds = bounds
        self.seam = seam
        self.reads = reads

    def admit(self, address, resuming):
        """Steps 1 and 2, or :class:`~.storm.Busy` or :class:`~.per_address.TooMany`
        raised with nothing left counted. :meth:`leave` gives the count back."""
        if self.bounds is not None:
            self.bounds.admit(resuming)
            self.bounds.sessions.enter(address)

    def leave(self, address):
        """The connection counted under ``address`` ended (None: it never was)."""
        if self.bounds is not None and address is not None:
            self.bounds.sessions.leave(address)

    def ask_topics(self, name):
        """Step 3 begun early: user ``name``'s subscriptions asked of Redis now, not waited
        for (with a connect's batched reads they go with its token's user read, one round
        trip); :meth:`topics` takes the answer. Only ``reads`` that can ``ask``."""
        return self.reads.ask("smembers", subscriptions.key(name))

    def topics(self, who, asked=None):
        """Step 3: the topic prefixes ``who`` (a credential: app/web/auth) follows; with a
        sharded history, the shards they need are followed from here on (lanes.py).
        ``asked``: :meth:`ask_topics`'s for ``who``, when the caller asked it already."""
        if asked is not None and asked.args == (subscriptions.key(who.name),):
            # as subscriptions.list_topics reads them: the set's members, sorted
            subscribed = sorted(topic.decode() for topic in asked.result())
        else:
            subscribed = subscriptions.list_topics(self.reads, who.name)
        topics = restrict(subscribed, who.topics)
        self.seam.need(who.name, topics)
        return topics

    def turn(self):
        """Step 4 for a resuming connection: its storm.Turn (None without bounds), or
        :class:`~.storm.Busy` when too many wait already."""
        return self.bounds.replay_turn() if self.bounds is not None else None

    def hold(self, key, user, topics, limit):
        """Step 4: from now on what the relay delivers for ``key`` is kept for it."""
        self.seam.hold(key, user, topics, limit)

    def position(self):
        """Where a connection going live now starts: every notification after it reaches it."""
        return self.seam.follower.position

    def replay(self, client, key, user, topics, last_id, go_live, gone, **options):
        """Step 5: replay.steps for ``key``, held since :meth:`hold` (sharded_replay.steps
        with a sharded history: lanes.py)."""
        if isinstance(self.seam, ShardedSeam):
            return self.seam.steps(client, key, user, topics, last_id, go_live, gone, **options)
        return replay.steps(client, self.seam, key, user, topics, last_id, go_live, gone=gone,
                            **options)

    def stream_info(self, client):
        """What a replay reads of the history's state first (its ``info``), read once for
        the replays of a moment: the stream's, or each shard's."""
        if isinstance(self.seam, ShardedSeam):
            return self.seam.stream_info(client)
        return state.stream_info(client)

    def ask_stream_info(self):
        """:meth:`stream_info` asked now with the connect's other reads (one round trip:
        batched_reads.py), its answer taken by :meth:`asked_stream_info`. None with a
        sharded history, whose shards are known only once the topics are, and on a
        Redis Cluster, whose pipelines refuse scripts (redis-py blocks EVALSHA there)."""
        if isinstance(self.seam, ShardedSeam) or is_cluster(self.reads.client):
            return None
        return state.ask_stream_info(self.reads)

    def asked_stream_info(self, asked):
        """The answer to :meth:`ask_stream_info`; read again by itself when Redis did not
        know the script yet (this loads it)."""
        try:
            return state.parse_stream_info(asked.result())
        except NoScriptError:
            return self.stream_info(self.reads.client)

    def replayed(self, key, turn):
        """Step 5 is over (done, cut short or failed): the turn is the next one's, and
        the seam holds nothing more for ``key``."""
        if turn is not None:
            turn.done()
        self.seam.forget_hold(key)

    def forget(self, key):
        """Step 6 for the seam: ``key`` is gone (any hold left; its floor, if any, the
        relay drops as it passes it)."""
        self.seam.forget(key)
