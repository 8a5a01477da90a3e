"""``NotificationsNamespace``: the Socket.IO contract at ``/notifications``.

- connect with ``auth = {"token": TOKEN, "last_id": ID}``; a missing, forged
  or expired token, or one whose user is gone, is refused;
- ``subscribe`` / ``unsubscribe`` with ``{"topics": [...]}``, acknowledged with
  ``{"ok": true, "topics": [full list]}`` or ``{"ok": false, "error": "..."}``.
  Subscriptions are the user's (kept in Redis), so every tab of that user, in
  every web process, follows the change.
Notifications themselves are emitted by the relay (app.realtime.relay).
"""
import logging

import socketio

from .. import accounts, subscriptions
from ..auth import tokens
from ..redis_client import UNAVAILABLE
from . import rooms

log = logging.getLogger(__name__)


class NotificationsNamespace(socketio.Namespace):
    """Authenticates connections and manages each user's topic subscriptions."""

    def __init__(self, client, secret_key, token_ttl, max_subscriptions):
        super().__init__(rooms.NAMESPACE)
        self.client = client
        self.secret_key = secret_key
        self.token_ttl = token_ttl
        self.max_subscriptions = max_subscriptions
        self.users = {}  # sid -> user name, for this process's connections

    def on_connect(self, sid, environ, auth=None):
        token = auth.get("token") if isinstance(auth, dict) else None
        try:
            name = tokens.verify(self.secret_key, token, self.token_ttl)
            user = accounts.get_user(self.client, name)
            topics = subscriptions.list_topics(self.client, name) if user else []
        except tokens.TokenError as exc:
            raise socketio.exceptions.ConnectionRefusedError(f"unauthorized: {exc}") from None
        except UNAVAILABLE:
            raise socketio.exceptions.ConnectionRefusedError(
                "unavailable: Redis is unreachable, retry shortly") from None
        if user is None:
            raise socketio.exceptions.ConnectionRefusedError(
                "unauthorized: token is for a user that no longer exists")
        self.users[sid] = name
        self.enter_room(sid, rooms.user_room(name))
        rooms.join_topics(self.server, [sid], topics)

    def on_disconnect(self, sid, reason=None):
        self.users.pop(sid, None)

    def on_subscribe(self, sid, data):
        return self._change(sid, data, adding=True)

    def on_unsubscribe(self, sid, data):
        return self._change(sid, data, adding=False)

    def _change(self, sid, data, adding):
        user = self.users.get(sid)
        if user is None:
            return {"ok": False, "error": "not connected"}
        try:
            topics = subscriptions.parse_topics(data)
            if adding:
                full = subscriptions.add(self.client, user, topics, self.max_subscriptions)
            else:
                full = subscriptions.remove(self.client, user, topics)
        except subscriptions.SubscriptionError as exc:
            return {"ok": False, "error": str(exc)}
        except UNAVAILABLE:
            log.warning("subscription change for %s failed: Redis is unreachable", user)
            return {"ok": False, "error": "Redis is unreachable; nothing was changed, try again"}
        # Apply here before acking; other processes follow via herald:control.
        self.apply_change(user, topics if adding else [], [] if adding else topics)
        return {"ok": True, "topics": full}

    def apply_change(self, user, added, removed):
        """Move this process's connections of ``user`` into/out of topic rooms."""
        sids = rooms.connections_of(self.server, user)
        rooms.join_topics(self.server, sids, added)
        rooms.leave_topics(self.server, sids, removed)
