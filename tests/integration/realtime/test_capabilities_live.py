"""docs/contract.md's capability table for Socket.IO events, on a live server: a
connection whose JWT is limited to ``board`` gets what the ``limited`` column says
for each event (an event in the table without a driver here fails)."""
import pytest
import socketio

from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.helpers.capabilities import events, table
from tests.helpers.keys import SECRET, host_token
from tests.support import Listener, LiveServer

EVENTS = events(table())


@pytest.fixture(scope="module")
def server(redis_server, tmp_path_factory):
    live = LiveServer(redis_server.url, tmp_path_factory.mktemp("web"), JWT_SECRET=SECRET)
    live.start()
    yield live
    live.stop()


@pytest.fixture
def ids(redis):
    accounts.create_user(redis, "alice", "alice-password")
    subscriptions.add(redis, "alice", ["*"], limit=10)
    bus = Bus(redis)
    return {"board": bus.publish("board.card", "inside"), "ops": bus.publish("ops.db", "outside")}


def refused(reply):
    return reply["ok"] is False and reply["error"]


def connect(listener, ids):
    return listener.sio.connected


def subscribe(listener, ids, event="subscribe"):
    assert refused(listener.call(event, {"topics": ["ops"]}))
    return listener.call(event, {"topics": ["board.card"]})["ok"]


def unsubscribe(listener, ids):
    return subscribe(listener, ids, "unsubscribe")


def read(listener, ids):
    assert "not a notification this token may act on" in refused(
        listener.call("read", {"ids": [ids["ops"]]}))
    assert refused(listener.call("read", {"unread": [ids["ops"]]}))
    assert "marks everything read" in refused(listener.call("read", {"upto": ids["board"]}))
    for seen in (ids["ops"], ids["board"], "9999999999999-0"):  # the badge of every tab
        assert refused(listener.call("read", {"seen": seen})).startswith("seen: ")
    return listener.call("read", {"ids": [ids["board"]]})["ok"]


def presence(listener, ids):
    return listener.call("presence", {"watch": True})["ok"]


DRIVERS = {"connect": connect, "subscribe": subscribe, "unsubscribe": unsubscribe,
           "read": read, "presence": presence}


@pytest.mark.parametrize("event", sorted(EVENTS))
def test_a_limited_connection_gets_what_its_column_says(server, ids, event):
    listener = Listener(server, host_token("alice", topics=["board"]))
    try:
        allowed = DRIVERS[event](listener, ids)
    finally:
        listener.close()
    assert allowed is (EVENTS[event]["limited"] != "no"), (event, EVENTS[event])


def test_an_api_key_cannot_connect(server, redis):
    key = accounts.create_api_key(redis, "publisher")
    client = socketio.Client(reconnection=False)
    with pytest.raises(socketio.exceptions.ConnectionError):
        client.connect(server.url, namespaces=["/notifications"], auth={"token": key},
                       transports=["websocket"], wait_timeout=5)
    client.disconnect()
