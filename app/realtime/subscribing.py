"""The ``subscribe`` / ``unsubscribe`` events of NotificationsNamespace, and how a
subscription change moves this process's connections between topic rooms.

Subscriptions are the user's (kept in Redis), so every tab of that user, in
every web process, follows a change: here at once, elsewhere through
``herald:control`` (the relay calls :meth:`Subscribing.apply_change`). A
connection whose token limits it to some topic prefixes (a host-app token's
``topics`` claim) may change subscriptions only inside them, and is in the
rooms of what the user's subscriptions cover inside them.

A mixin of app/realtime/namespace.py's class, which holds what it uses:
``client``, ``connect_reads`` (batched reads), ``server``, ``seam``,
``max_subscriptions``, ``users`` (sid -> user), ``limits`` (sid -> prefixes,
limited ones only) and ``joined`` (sid -> the topic rooms a limited
connection is in).
"""
import logging

from app.realtime import rooms
from app.redis_client import UNAVAILABLE
from app.stream.envelope import restrict, within
from app.users import subscriptions

log = logging.getLogger("app.realtime.namespace")


class Subscribing:
    """Handlers and room moves for subscription changes (see the module's docstring)."""


    # Handlers take ``*args``: a client may send an event with no payload, or
    # several; either is answered with an error, never a crashed handler.

    def on_subscribe(self, sid, *args):
        return self._change(sid, args, adding=True)

    def on_unsubscribe(self, sid, *args):
        return self._change(sid, args, adding=False)

    def _change(self, sid, args, adding):
        user = self.users.get(sid)
        if user is None:
            return {"ok": False, "error": "not connected"}
        if len(args) != 1:
            return {"ok": False, "error": 'payload: must be one object, {"topics": [...]}'}
        data = args[0]
        try:
            topics = subscriptions.parse_topics(data)
            self._check_limits(sid, topics)
            if not topics:  # asks for the list only (herald.js, on every connect): a read
                full, changed = subscriptions.list_topics(self.connect_reads, user), []
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
        if changed:
            self.apply_change(user, changed if adding else [], [] if adding else changed, full)
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

    def apply_change(self, user, added, removed, full=None):
        """Move this process's connections of ``user`` into/out of topic rooms.

        ``full`` is the user's whole list after the change (None when the
        announcement lacked it): a limited connection's rooms are what that
        list covers inside its limits.
        """
        sids = rooms.connections_of(self.server, user)
        free = [sid for sid in sids if sid not in self.limits]
        rooms.join_topics(self.server, free, added)
        rooms.leave_topics(self.server, free, removed)
        for sid in sids:
            limit = self.limits.get(sid)
            if limit is not None:
                self._move_limited(sid, limit, added, removed, full)
        self.seam.update_held(user, added, removed, full)

    def _move_limited(self, sid, limit, added, removed, full):
        before = self.joined.get(sid, [])
        if full is not None:
            now = restrict(full, limit)
        else:
            gone = set(restrict(removed, limit))
            now = sorted(set(before) - gone | set(restrict(added, limit)))
        rooms.join_topics(self.server, [sid], [t for t in now if t not in before])
        rooms.leave_topics(self.server, [sid], [t for t in before if t not in now])
        self.joined[sid] = now
