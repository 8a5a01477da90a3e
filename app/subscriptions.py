"""Per-user topic subscriptions, kept in Redis so every tab and process shares them.

A subscription is a topic prefix (or ``*``) in the set ``herald:subs:<user>``.
Each change is also announced on ``herald:control`` so that every web process
moves that user's connections into or out of the matching rooms.
"""
import orjson

from .bus import CONTROL
from .notifications import EnvelopeError, check_topic_list


class SubscriptionError(ValueError):
    """A subscribe or unsubscribe request was malformed; the message says how."""


def _key(user):
    return f"herald:subs:{user}"


def parse_topics(payload):
    """The topic list of a ``{"topics": [...]}`` payload, checked, in given order."""
    if not isinstance(payload, dict) or not isinstance(payload.get("topics"), list):
        raise SubscriptionError('payload: must be {"topics": [prefix, ...]}')
    try:
        return check_topic_list(payload["topics"], most=100)
    except EnvelopeError as exc:
        raise SubscriptionError(str(exc)) from None


def list_topics(client, user):
    """The user's subscriptions, sorted."""
    return sorted(t.decode() for t in client.smembers(_key(user)))


def add(client, user, topics, limit):
    """Subscribe ``user`` to ``topics``; returns (the full list, the topics that are new).

    Only new topics are announced, so that re-subscribing (as every tab does
    on each reconnect) moves nobody between rooms. Refuses past ``limit``.
    """
    current = set(list_topics(client, user))
    new = [t for t in topics if t not in current]
    if new:
        if len(current) + len(new) > limit:
            raise SubscriptionError(f"topics: at most {limit} subscriptions per user")
        client.sadd(_key(user), *new)
        client.publish(CONTROL, orjson.dumps({"user": user, "add": new}))
    return sorted(current | set(new)), new


def remove(client, user, topics):
    """Unsubscribe ``user`` from ``topics``; returns (the full list, the topics removed)."""
    current = set(list_topics(client, user))
    gone = [t for t in topics if t in current]
    if gone:
        client.srem(_key(user), *gone)
        client.publish(CONTROL, orjson.dumps({"user": user, "remove": gone}))
    return sorted(current - set(gone)), gone
