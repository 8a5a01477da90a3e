"""The replay seam: no gap and no duplicate between a replay and live delivery.

A connection (or event stream) that resumes from a ``last_id`` is *held* from
before its replay reads history: while it is held, what the relay delivers
that it may see is kept for it, and once its replay is done :meth:`release`
hands over the part the replay did not cover. If the relay has not yet
reached the replay's cursor then, the connection gets a *floor*: the relay
skips for it what the replay already sent.

The seam knows where the relay's follower is (``follower.position``), and nothing of
Socket.IO; the namespace and the SSE endpoint hold and release connections,
the relay fills the holds and honours the floors.
"""
from app.stream.envelope import id_key, restrict, visible_to


class Held:
    """A connection being replayed: whose it is, what it sees (within its
    ``limit`` of prefixes, if any), what came meanwhile."""

    __slots__ = ("user", "topics", "limit", "buffer")

    def __init__(self, user, topics, limit=None):
        self.user = user
        self.topics = list(topics)
        self.limit = limit
        self.buffer = []


class ReplaySeam:
    """The holds and floors of one web process's replays, beside its relay's ``follower``
    (an app.stream.follow.LiveFollower, for its position)."""

    def __init__(self, follower):
        self.follower = follower
        self.held = {}    # sid -> Held
        self.floors = {}  # sid -> id key up to which its replay already sent everything

    def hold(self, sid, user, topics, limit=None):
        """Keep what ``sid`` may see from now on, until :meth:`release`."""
        self.held[sid] = Held(user, topics, limit)

    def keep(self, envelope):
        """The relay delivers ``envelope``: every held connection that may see it keeps it."""
        topic, owner = envelope["topic"], envelope.get("user")
        for held in self.held.values():
            if visible_to(held.user, held.topics, topic, owner):
                held.buffer.append(envelope)

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
        if floor > self.follower.position_key:
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
