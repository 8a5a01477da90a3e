"""The replay seam: no gap and no duplicate between a replay and live delivery.

A connection (or event stream) that resumes from a ``last_id`` is *held* from
before its replay reads history: it is in no room, and once its replay is
done :meth:`release` hands over what the relay delivered meanwhile past the
replay's cursor that it may see, from the window of recent notifications
(recent.py; the replay makes sure, with no I/O in between, that the window
covers its cursor). If the relay has not yet reached the cursor then, the
connection gets a *floor*: the relay skips for it what the replay already
sent. A hold costs nothing per notification delivered (it once kept a copy
of each for every held connection, which bounded how many could be held).

The seam knows where the relay's follower is (``follower.position``), and nothing of
Socket.IO; connections are held and released through lifecycle.py (for the
namespace and for event streams alike),
the relay fills the window and honours the floors.
"""
from app.realtime.recent import Recent
from app.stream.envelope import id_key, restrict, visible_to


class Held:
    """A connection being replayed: whose it is, what it sees (within its
    ``limit`` of prefixes, if any), and the relay's position when it was held."""

    __slots__ = ("user", "topics", "limit", "since")

    def __init__(self, user, topics, limit=None, since=(0, 0)):
        self.user = user
        self.topics = list(topics)
        self.limit = limit
        self.since = since


class ReplaySeam:
    """The holds and floors of one web process's replays, beside its relay's ``follower``
    (an app.stream.follow.LiveFollower, for its position)."""

    def __init__(self, follower, recent=None):
        self.follower = follower
        self.recent = recent if recent is not None else Recent()  # the relay fills it
        self.held = {}    # sid -> Held
        self.floors = {}  # sid -> id key up to which its replay already sent everything

    def need(self, user, topics):
        """One stream, always followed: nothing to start (lanes.ShardedSeam.need)."""

    def hold(self, sid, user, topics, limit=None):
        """Hold ``sid`` from now on, until :meth:`release`."""
        self.held[sid] = Held(user, topics, limit, self.follower.position_key)

    def release(self, sid, cursor):
        """End the hold; returns (topics, ``[(id, text)]`` delivered meanwhile past
        ``cursor`` that it may see; ``cursor`` None: since it was held).

        Must run in the same step as joining the rooms (no I/O in between),
        so that every later notification reaches the connection through them,
        and, with a ``cursor``, right after the replay found that the window
        covers it (replay.py). If the relay has not yet reached ``cursor``,
        the connection's floor makes it skip what the replay already sent.
        """
        held = self.held.pop(sid)
        if cursor is None:
            after = held.since
        else:
            after = id_key(cursor)
            if after > self.follower.position_key:
                self.floors[sid] = after
        return held.topics, visible(self.recent.after(after), held.user, held.topics)

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


def visible(entries, user, topics, floor=None):
    """``[(id, text)]`` of the window's ``entries`` that belong in ``user``'s feed with
    ``topics``; with ``floor`` (an id key, app.stream.history.floor_of), a private
    one at or below it belonged to a former account of the name (left out)."""
    found = []
    wanted = {}  # public topic -> followed: a storm's replays see the same few topics again and again
    for entry_id, topic, owner, text in entries:
        if owner:
            if owner != user or (floor is not None and id_key(entry_id) <= floor):
                continue  # as app.stream.history reads the stream
        else:
            followed = wanted.get(topic)
            if followed is None:
                followed = wanted[topic] = visible_to(user, topics, topic, None)
            if not followed:
                continue
        found.append((entry_id, text))
    return found
