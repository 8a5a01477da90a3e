"""Which topic rooms this process's Socket.IO connections are in: the ``subscribe`` /
``unsubscribe`` events of NotificationsNamespace, and how a subscription change
moves connections between rooms.

Subscriptions are the user's (kept in Redis), so every tab of that user, in
every web process, follows a change: here at once, elsewhere through
``herald:control`` (the relay calls :meth:`TopicRooms.apply_change`). A
connection whose token limits it to some topic prefixes (a host-app token's
``topics`` claim) may change subscriptions only inside them, and is in the
rooms of what the user's subscriptions cover inside them.

A collaborator of app/realtime/namespace.py's class, with its own state: the
limits of the limited connections and the topic rooms each of them is in.
Rooms are the Socket.IO server's; it is passed to each call that moves a
connection (the namespace's ``server``, set when it is registered).
"""
import logging

from app.realtime import rooms
from app.redis_client import UNAVAILABLE
from app.stream.envelope import restrict, within
from app.users import subscriptions

log = logging.getLogger("app.realtime.namespace")


class TopicRooms:
    """Rooms and subscription changes (see the module). ``client``: Redis, for changes;
    ``reads``: where a subscription list is read (batched_reads.py); ``seam``: whose
    held connections follow changes; ``max_subscriptions``: a user's most."""

    def __init__(self, client, reads, seam, max_subscriptions):
        self.client = client
        self.reads = reads
        self.seam = seam
        self.max_subscriptions = max_subscriptions
        self.limits = {}  # sid -> the prefixes it is limited to, for limited ones only
        self.joined = {}  # sid -> the topic rooms a limited connection is in

    def limit(self, sid, prefixes):
        """``sid``'s token limits it to ``prefixes`` (None: not limited)."""
        if prefixes is not None:
            self.limits[sid] = prefixes

    def go_live(self, server, sid, user, topics):
        """``sid`` of ``user`` joins its user's room and its topics' rooms, in one step."""
        server.enter_room(sid, rooms.user_room(user), namespace=rooms.NAMESPACE)
        rooms.join_topics(server, [sid], topics)
        if sid in self.limits:
            self.joined[sid] = list(topics)

    def forget(self, sid):
        self.limits.pop(sid, None)
        self.joined.pop(sid, None)

    def change(self, server, sid, user, args, adding):
        """The ``subscribe`` (``adding``) or ``unsubscribe`` event of ``sid`` (of ``user``,
        None when not connected) with its ``args``: the acknowledgement. A client may
        send an event with no payload, or several: an error, never a crashed handler."""
        if user is None:
            return {"ok": False, "error": "not connected"}
        if len(args) != 1:
            return {"ok": False, "error": 'payload: must be one object, {"topics": [...]}'}
        data = args[0]
        try:
            topics = subscriptions.parse_topics(data)
            self._check_limits(sid, topics)
            if not topics:  # asks for the list only (herald.js, on every connect): a read
                full, changed = subscriptions.list_topics(self.reads, user), []
            elif adding:
                full, changed = subscriptions.add(self.client, user, topics, self.max_subscriptions)
            else:
                full, changed = subscriptions.remove(self.client, user, topics)
        except subscriptions.SubscriptionError as exc:
            return {"ok": False, "error": str(exc)}
        except UNAVAILABLE:
            log.warning("subscription change for %r failed: Redis is unreachable", user)
            return {"ok": False, "error": "Redis is unreachable; nothing was changed, try again"}
        # Apply here before acking; other processes follow via herald:control.
        if changed and adding:
            self.seam.need(user, changed)  # with a sharded history: their shards followed first
        if changed:
            self.apply_change(server, user, changed if adding else [], [] if adding else changed,
                              full)
        return {"ok": True, "topics": full}

    def _check_limits(self, sid, topics):
        """Refuse a change outside the prefixes a limited connection's token allows."""
        limit = self.limits.get(sid)
        if limit is None:
            return
        for topic in topics:
            if not within(limit, topic):
                raise subscriptions.SubscriptionError(
                    f"topics: {topic!r} is outside what this connection's token allows "
                    f"({', '.join(limit)})")

    def apply_change(self, server, user, added, removed, full=None):
        """Move this process's connections of ``user`` into/out of topic rooms.

        ``full`` is the user's whole list after the change (None when the
        announcement lacked it): a limited connection's rooms are what that
        list covers inside its limits.
        """
        sids = rooms.connections_of(server, user)
        free = [sid for sid in sids if sid not in self.limits]
        rooms.join_topics(server, free, added)
        rooms.leave_topics(server, free, removed)
        for sid in sids:
            limit = self.limits.get(sid)
            if limit is not None:
                self._move_limited(server, sid, limit, added, removed, full)
        self.seam.update_held(user, added, removed, full)

    def _move_limited(self, server, sid, limit, added, removed, full):
        before = self.joined.get(sid, [])
        if full is not None:
            now = restrict(full, limit)
        else:
            gone = set(restrict(removed, limit))
            now = sorted(set(before) - gone | set(restrict(added, limit)))
        rooms.join_topics(server, [sid], [t for t in now if t not in before])
        rooms.leave_topics(server, [sid], [t for t in before if t not in now])
        self.joined[sid] = now
