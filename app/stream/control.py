"""The messages of ``herald:control`` (keys.CONTROL): every format, written and read here.

A control message is a JSON object naming its ``user`` and carrying one kind
of change, which every web process's relay passes on to that user's
connections (or, for presence, to those that watch it):

- revoked: ``{"user", "revoked": true}``: signed out, tokens revoked, or
  deleted; the user's connections and event streams are closed;
- read: ``{"user", "read": {"upto", "ids", "unread"}}``: the ``read`` event;
- state: ``{"user", "state": {"archived", "unarchived", "snoozed",
  "unsnoozed"}}`` (the keys that changed): the ``state`` event;
- subscriptions: ``{"user", "add" or "remove": [topics that changed],
  "topics": [the full list after it]}``; written by a Lua script, whose cjson
  writes an empty list as ``{}``; a message from before ``topics`` existed
  lacks it;
- presence: ``{"user", "presence": {"user", "online", "at"}}``, written by a
  Lua script: the ``presence`` event.

Web processes of two versions may share one Redis during a rolling deploy,
so these formats do not change: a new field may be added, none taken away.

The two kinds that depend on what a script computed atomically are built
inside Lua: :data:`SUBSCRIPTIONS_LUA` and :data:`PRESENCE_LUA` define the Lua
functions that encode them, and the scripts that publish them
(app/users/subscriptions.py, app/realtime/presence.py) begin with that text.
:func:`subscriptions` and :func:`presence` encode the same in Python.

:func:`decode` reads any message into a :class:`Message` and never raises: what
it cannot read is a message of kind UNKNOWN saying why. A :class:`Dispatch`
calls the handler registered for each kind.
"""
import logging
from typing import Any, NamedTuple

import orjson

from app.stream.keys import CONTROL

log = logging.getLogger("herald.control")

REVOKED = "revoked"
READ = "read"
STATE = "state"
SUBSCRIPTIONS = "subscriptions"
PRESENCE = "presence"
UNKNOWN = "unknown"
KINDS = (REVOKED, READ, STATE, SUBSCRIPTIONS, PRESENCE)


class Subscriptions(NamedTuple):
    """A subscription change: the topics added, those removed, and the user's
    whole list after it (None when the message did not carry it)."""

    added: list
    removed: list
    full: list | None


class Message(NamedTuple):
    """A decoded control message.

    ``data`` by kind: REVOKED None; READ and STATE the event's payload (a
    dict); SUBSCRIPTIONS a :class:`Subscriptions`; PRESENCE the event's
    payload ``{"user", "online" (bool), "at" (ms)}``; UNKNOWN why it could
    not be read (``user`` is then None unless the message named one).
    """

    kind: str
    user: str | None
    data: Any = None


# -- writing -------------------------------------------------------------------

def revoked(user):
    """The user's credentials ended: their connections close."""
    return orjson.dumps({"user": user, "revoked": True})


def read(user, change):
    """The user's read state changed (``{"upto", "ids", "unread"}``)."""
    return orjson.dumps({"user": user, "read": change})


def state(user, change):
    """The user archived, unarchived, snoozed or unsnoozed (only the keys that changed)."""
    return orjson.dumps({"user": user, "state": change})


def subscriptions(user, action, changed, full):
    """``action`` ("add" or "remove") changed the topics ``changed``; ``full``
    is the list after it. The message SUBSCRIPTIONS_LUA writes (keys aside,
    whose order JSON leaves free)."""
    return orjson.dumps({"user": user, action: list(changed), "topics": list(full)})


def presence(user, online, at):
    """``user`` came online or went offline at ``at`` (ms). The message
    PRESENCE_LUA writes (keys aside, whose order JSON leaves free)."""
    return orjson.dumps({"user": user, "presence": {"user": user, "online": bool(online), "at": at}})


# Lua: control_subscriptions(user, action, changed, full) -> the message, as
# subscriptions() above.
SUBSCRIPTIONS_LUA = """
local function control_subscriptions(user, action, changed, full)
  return cjson.encode({user = user, [action] = changed, topics = full})
end
"""

# Lua: control_presence(user, online, at) -> the message, as presence() above.
PRESENCE_LUA = """
local function control_presence(user, online, at)
  return cjson.encode({user = user, presence = {user = user, online = online, at = at}})
end
"""


# -- reading -------------------------------------------------------------------

def _unknown(why, user=None):
    return Message(UNKNOWN, user, why)


def _excerpt(raw):
    return repr(raw[:100] if isinstance(raw, (bytes, str)) else raw)[:120]


def _topic_list(value):
    """A list of topics as a script wrote it (cjson: an empty one is ``{}``), or None."""
    if value == {}:
        return []
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return value
    return None


def _subscriptions(change):
    added, removed = _topic_list(change.get("add", [])), _topic_list(change.get("remove", []))
    full = change.get("topics")
    if full is not None:
        full = _topic_list(full)
        if full is None:
            return None
    if added is None or removed is None:
        return None
    return Subscriptions(added, removed, full)


def _presence(value):
    at = value.get("at") if isinstance(value, dict) else None
    if not isinstance(value, dict) or not isinstance(value.get("user"), str) \
            or "online" not in value or not isinstance(at, (int, float)) or isinstance(at, bool):
        return None
    return {"user": value["user"], "online": bool(value["online"]), "at": value["at"]}


def decode(raw):
    """The :class:`Message` in ``raw`` (bytes or str); never raises.

    Kinds are told apart in the order the relay always has: read, state,
    presence, revoked, then subscriptions.
    """
    try:
        change = orjson.loads(raw)
    except (orjson.JSONDecodeError, TypeError):
        return _unknown(f"not JSON: {_excerpt(raw)}")
    if not isinstance(change, dict):
        return _unknown(f"not a JSON object: {_excerpt(raw)}")
    user = change.get("user")
    if not isinstance(user, str) or not user:
        return _unknown(f"no user: {_excerpt(raw)}")
    if "read" in change or "state" in change:
        kind = READ if "read" in change else STATE
        if not isinstance(change[kind], dict):
            return _unknown(f"{kind} is not an object", user)
        return Message(kind, user, change[kind])
    if "presence" in change:
        event = _presence(change["presence"])
        if event is None:
            return _unknown("presence lacks user, online or at", user)
        return Message(PRESENCE, user, event)
    if change.get("revoked"):
        return Message(REVOKED, user)
    if "add" in change or "remove" in change or "topics" in change:
        announced = _subscriptions(change)
        if announced is None:
            return _unknown("add, remove or topics is not a list of topics", user)
        return Message(SUBSCRIPTIONS, user, announced)
    return _unknown(f"no kind of change: {_excerpt(raw)}", user)


def _log_unknown(message):
    log.warning("ignored a %s message: %s", CONTROL, message.data)


class Dispatch:
    """Calls the handler registered for a message's kind with the :class:`Message`.

    A kind without a handler is ignored; an UNKNOWN message goes to
    ``unknown`` (by default, a warning in the log).
    """

    def __init__(self, unknown=_log_unknown):
        self.handlers = {}
        self.unknown = unknown

    def on(self, kind, handler):
        """Call ``handler(message)`` for each message of ``kind``."""
        if kind not in KINDS:
            raise ValueError(f"no such kind of control message: {kind!r}")
        self.handlers[kind] = handler

    def __call__(self, message):
        if message.kind == UNKNOWN:
            self.unknown(message)
            return
        handler = self.handlers.get(message.kind)
        if handler is not None:
            handler(message)
