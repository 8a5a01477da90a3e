"""Room names: one room per user, one per subscribed topic prefix.

A connection joins its user's room and the room of each of its user's
subscriptions. A public notification is emitted once to the list of rooms of
every prefix of its topic; python-socketio sends it once per connection even
when a connection is in several of those rooms. A private one goes to its
user's room alone.
"""
from app.stream.envelope import topic_prefixes

NAMESPACE = "/notifications"


def user_room(name):
    return "u:" + name


def topic_room(prefix):
    return "t:" + prefix


def rooms_for(topic, owner):
    """The rooms that should receive a notification on ``topic`` owned by ``owner`` (or None)."""
    if owner:
        return [user_room(owner)]
    return [topic_room(prefix) for prefix in topic_prefixes(topic)]


def connections_of(sio, user):
    """The local connection ids (sids) of ``user``'s open tabs."""
    return [sid for sid, _eio in sio.manager.get_participants(NAMESPACE, user_room(user))]


def join_topics(sio, sids, topics):
    for sid in sids:
        for topic in topics:
            sio.enter_room(sid, topic_room(topic), namespace=NAMESPACE)


def leave_topics(sio, sids, topics):
    for sid in sids:
        for topic in topics:
            sio.leave_room(sid, topic_room(topic), namespace=NAMESPACE)
