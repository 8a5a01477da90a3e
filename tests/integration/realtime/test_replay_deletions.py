"""Replay agrees with the stream: an entry deleted from it (XDEL) is not replayed.

Replays from the last notifications are read from the web process's window in
memory (app/realtime/recent.py); whatever a client gets on replay, over
Socket.IO or as an event stream, is what ``GET /api/notifications?after=``
answers for the same cursor.
"""
import pytest
import requests

from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.support import EventStream, Listener, issue_token, marked, wait_until


@pytest.fixture
def bus(redis):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["news"], limit=10)
    return Bus(redis)


def delivered(live_server, bus, count):
    """``count`` notifications published while ``live_server`` runs, and delivered (so
    in its window of recent ones), the last a marker; the id before them, and theirs."""
    before = bus.publish("news.a", "before")
    watcher = Listener(live_server, issue_token("ann"))
    try:
        ids = [bus.publish("news.a", f"n{i}") for i in range(count - 1)]
        ids.append(marked(bus.publish, watcher, "ann"))
        assert watcher.ids() == ids
    finally:
        watcher.close()
    return before, ids


def rest_after(live_server, cursor):
    reply = requests.get(live_server.url + "/api/notifications", timeout=5,
                         params={"after": cursor, "limit": 1000},
                         headers={"Authorization": f"Bearer {issue_token('ann')}"})
    assert reply.status_code == 200
    return [n["id"] for n in reply.json()["notifications"]]


def socketio_replay(live_server, cursor):
    listener = Listener(live_server, issue_token("ann"), last_id=cursor)
    try:
        wait_until(lambda: listener.replays, message="replayed")
        return listener.ids(), listener.replays[0]
    finally:
        listener.close()


def sse_replay(live_server, cursor):
    stream = EventStream(live_server, issue_token("ann"), header_last_id=cursor)
    try:
        events = stream.events_until("replayed")
    finally:
        stream.close()
    return [i for name, i, _data in events if name == "message"], events[-1][2]


@pytest.mark.parametrize("replay", [socketio_replay, sse_replay], ids=["socketio", "sse"])
def test_an_entry_deleted_from_the_stream_is_not_replayed(live_server, redis, bus, replay):
    before, ids = delivered(live_server, bus, 5)
    assert redis.xdel(STREAM, ids[2]) == 1
    expected = ids[:2] + ids[3:]
    assert rest_after(live_server, before) == expected
    got, outcome = replay(live_server, before)
    assert got == expected
    assert outcome["recovered"] is True and outcome["count"] == 4
    # An older one deleted next (the stream's max-deleted-entry-id does not move).
    assert redis.xdel(STREAM, ids[1]) == 1
    expected = [ids[0], ids[3], ids[4]]
    assert rest_after(live_server, before) == expected
    assert replay(live_server, before)[0] == expected
    # Deleted after a replay checked the window, and trimmed meanwhile (the count of
    # removed entries moves for both).
    assert redis.xdel(STREAM, ids[3]) == 1
    redis.xtrim(STREAM, minid=before, approximate=False)
    assert rest_after(live_server, before) == [ids[0], ids[4]]
    assert replay(live_server, before)[0] == [ids[0], ids[4]]
