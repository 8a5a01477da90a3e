"""Per-user topic subscriptions, kept in Redis so every tab and process shares them.

A subscription is a topic prefix (or ``*``) in the set ``herald:{u:<user>}:subs``
(the user's hash tag, app/key_layout.py).
Each change is also announced on ``herald:control`` as ``{"user", "add" or
"remove": [the topics that changed], "topics": [the full list after it]}``
(app/stream/control.py),
so that every web process moves that user's connections into or out of the
matching rooms; a connection limited to some prefixes (a host-app token's
``topics`` claim) recomputes what it may see from the full list. The change
and its announcement are one Lua script, so two changes made at once are
announced in the order they were applied, each with the list it left. The
channel is passed to the script as an argument, not a key: a channel has no
hash slot, and on a Redis Cluster a script's keys must all be in one.
"""
import redis

from app.key_layout import user_tag
from app.stream import control
from app.stream.envelope import EnvelopeError, check_topic_list
from app.stream.keys import CONTROL

# KEYS: the user's set. ARGV: "add" or "remove", limit, the user's name, the
# control channel, then the topics. Answers {changed topics, full list}, or
# the error "LIMIT" when adding would pass the limit (nothing changed then).
_CHANGE_LUA = control.SUBSCRIPTIONS_LUA + """
local changed = {}
for i = 5, #ARGV do
  local member = redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 1
  if (ARGV[1] == 'add') ~= member then changed[#changed + 1] = ARGV[i] end
end
if #changed > 0 then
  if ARGV[1] == 'add' then
    if redis.call('SCARD', KEYS[1]) + #changed > tonumber(ARGV[2]) then
      return redis.error_reply('LIMIT')
    end
    redis.call('SADD', KEYS[1], unpack(changed))
  else
    redis.call('SREM', KEYS[1], unpack(changed))
  end
end
local full = redis.call('SMEMBERS', KEYS[1])
table.sort(full)
if #changed > 0 then
  redis.call('PUBLISH', ARGV[4], control_subscriptions(ARGV[3], ARGV[1], changed, full))
end
return {changed, full}
"""


class SubscriptionError(ValueError):
    """A subscribe or unsubscribe request was malformed; the message says how."""


def key(user):
    """The Redis set of ``user``'s subscriptions."""
    return f"herald:{user_tag(user)}:subs"


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
    return sorted(t.decode() for t in client.smembers(key(user)))


def _change(client, user, action, topics, limit=0):
    if not topics:
        return list_topics(client, user), []
    try:
        changed, full = client.register_script(_CHANGE_LUA)(
            keys=[key(user)], args=[action, limit, user, CONTROL, *topics])
    except redis.ResponseError as exc:
        if str(exc) == "LIMIT":
            raise SubscriptionError(f"topics: at most {limit} subscriptions per user") from None
        raise
    return [t.decode() for t in full], [t.decode() for t in changed]


def add(client, user, topics, limit):
    """Subscribe ``user`` to ``topics``; returns (the full list, the topics that are new).

    Only new topics are announced, so that re-subscribing (as every tab does
    on each reconnect) moves nobody between rooms. Refuses past ``limit``.
    """
    return _change(client, user, "add", topics, limit)


def remove(client, user, topics):
    """Unsubscribe ``user`` from ``topics``; returns (the full list, the topics removed)."""
    return _change(client, user, "remove", topics)
