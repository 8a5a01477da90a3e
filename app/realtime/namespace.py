"""``NotificationsNamespace``: the Socket.IO contract at ``/notifications``.

- connect with ``auth = {"token": TOKEN, "last_id": ID}``; a missing, forged
  or expired token, or one whose user is gone, is refused;
- with ``last_id``, every notification the user may see with a greater id
  that is still in history is replayed (``notifications`` lists, in id
  order), then the connection goes live with no gap and no duplicate; when
  ``last_id`` is older than the retained history, ``reset`` is emitted;
- ``subscribe`` / ``unsubscribe`` with ``{"topics": [...]}``, acknowledged with
  ``{"ok": true, "topics": [full list]}`` or ``{"ok": false, "error": "..."}``.
  Subscriptions are the user's (kept in Redis), so every tab of that user, in
  every web process, follows the change.

The seam between replay and live: the relay *holds* the connection before
the history is read, keeping for it what it delivers meanwhile; after the
last history chunk, joining the rooms and taking over the held notifications
happen in one step with no I/O in between (gevent switches only on I/O), so
nothing falls between the two and the held ones already replayed are dropped.
"""
import logging

import socketio

from .. import accounts, history, read_state, subscriptions
from ..auth import tokens
from ..notifications import EnvelopeError, check_stream_id
from ..redis_client import UNAVAILABLE
from . import rooms

log = logging.getLogger(__name__)

Refused = socketio.exceptions.ConnectionRefusedError
CONNECT_WAIT = 5.0


class NotificationsNamespace(socketio.Namespace):
    """Authenticates connections, replays what they missed, manages subscriptions."""

    def __init__(self, client, secret_key, token_ttl, max_subscriptions):
        super().__init__(rooms.NAMESPACE)
        self.client = client
        self.secret_key = secret_key
        self.token_ttl = token_ttl
        self.max_subscriptions = max_subscriptions
        self.relay = None  # set by init_app once the relay exists
        self.users = {}  # sid -> user name, for this process's connections

    # -- connect and replay ----------------------------------------------------

    def on_connect(self, sid, environ, auth=None):
        auth = auth if isinstance(auth, dict) else {}
        try:
            name, key = tokens.verify(self.secret_key, auth.get("token"), self.token_ttl)
            last_id = auth.get("last_id")
            if last_id is not None:
                check_stream_id(last_id)
            tokens.check_user(accounts.get_user(self.client, name), key)
            topics = subscriptions.list_topics(self.client, name)
        except tokens.TokenError as exc:
            raise Refused(f"unauthorized: {exc}") from None
        except EnvelopeError as exc:
            raise Refused(f"bad request: {exc}") from None
        except UNAVAILABLE:
            raise Refused("unavailable: Redis is unreachable, retry shortly") from None
        self.users[sid] = name
        if last_id is None:
            self._go_live(sid, name, topics)
        else:
            self.relay.hold(sid, name, topics)
            self.server.start_background_task(self._replay, sid, name, topics, last_id)

    def _go_live(self, sid, name, topics):
        self.enter_room(sid, rooms.user_room(name))
        rooms.join_topics(self.server, [sid], topics)

    def _replay(self, sid, name, topics, last_id):
        """Send what ``sid`` missed since ``last_id``, then hand it over to the rooms."""
        try:
            if not self._wait_connected(sid):
                return
            cursor = last_id
            if history.missed_history(self.client, last_id):
                self.emit("reset", {"reason": "last_id is older than the retained history"},
                          to=sid)
                cursor = None
            else:
                for visible, cursor in history.replay(self.client, name, topics, last_id):
                    if sid not in self.users:
                        return  # gone while we read
                    if visible:
                        self.emit("notifications", visible, to=sid)
            # From here to the last emit: no I/O, so no other greenlet runs.
            if sid not in self.users:
                return
            topics, pending = self.relay.release(sid, cursor)
            self._go_live(sid, name, topics)
            if pending:
                self.emit("notifications", pending, to=sid)
        except UNAVAILABLE:
            log.warning("replay for %s stopped: Redis is unreachable; disconnecting it", name)
            self.disconnect(sid)
        finally:
            self.relay.forget_hold(sid)

    def _wait_connected(self, sid):
        """Wait until the CONNECT reply has gone out, so replayed events follow it."""
        waited = 0.0
        while not self.server.manager.is_connected(sid, self.namespace):
            if sid not in self.users or waited > CONNECT_WAIT:
                return False
            self.server.sleep(0.005)
            waited += 0.005
        return True

    def on_disconnect(self, sid, reason=None):
        self.users.pop(sid, None)
        self.relay.forget(sid)

    # -- subscriptions -----------------------------------------------------------

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
            if adding:
                full, changed = subscriptions.add(self.client, user, topics, self.max_subscriptions)
            else:
                full, changed = subscriptions.remove(self.client, user, topics)
        except subscriptions.SubscriptionError as exc:
            return {"ok": False, "error": str(exc)}
        except UNAVAILABLE:
            log.warning("subscription change for %s failed: Redis is unreachable", user)
            return {"ok": False, "error": "Redis is unreachable; nothing was changed, try again"}
        # Apply here before acking; other processes follow via herald:control.
        if changed:
            self.apply_change(user, changed if adding else [], [] if adding else changed)
        return {"ok": True, "topics": full}

    def apply_change(self, user, added, removed):
        """Move this process's connections of ``user`` into/out of topic rooms."""
        sids = rooms.connections_of(self.server, user)
        rooms.join_topics(self.server, sids, added)
        rooms.leave_topics(self.server, sids, removed)
        self.relay.update_held(user, added, removed)

    # -- read state ----------------------------------------------------------------

    def on_read(self, sid, *args):
        """Mark notifications read: ``{"ids": [...]}`` and/or ``{"upto": ID}``."""
        user = self.users.get(sid)
        if user is None:
            return {"ok": False, "error": "not connected"}
        if len(args) != 1:
            return {"ok": False, "error": 'payload: must be one object, {"ids": [...]} and/or {"upto": id}'}
        try:
            state = read_state.mark(self.client, user, args[0])
        except read_state.ReadStateError as exc:
            return {"ok": False, "error": str(exc)}
        except UNAVAILABLE:
            return {"ok": False, "error": "Redis is unreachable; nothing was changed, try again"}
        return dict(state, ok=True)
