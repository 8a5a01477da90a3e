"""A connection or event stream opened with a host-app token ends when the token
expires, and no private notification published after that reaches it; a stream
token made from a short-lived JWT dies with it.

carol has no Herald account: the host app vouches for her (JWT_SECRET).
"""
import threading
import time

import jwt
import pytest
import requests
import socketio

from app.realtime.rooms import NAMESPACE
from app.stream.publish import Bus
from tests.helpers.keys import SECRET, host_token
from tests.support import EventStream, Listener, LiveServer, wait_until

TTL = 3  # seconds the short tokens here live


@pytest.fixture(scope="module")
def server(redis_server, tmp_path_factory):
    live = LiveServer(redis_server.url, tmp_path_factory.mktemp("web"), JWT_SECRET=SECRET,
                      JWT_LEEWAY="0", SSE_HEARTBEAT="1", LOG_FORMAT="text")
    live.start()
    yield live
    live.stop()


def short_token(sub="carol"):
    """A JWT for ``sub`` that expires TTL s from now, and its expiry in ms."""
    token = host_token(sub, ttl=TTL)
    return token, jwt.decode(token, options={"verify_signature": False})["exp"] * 1000


class Publisher(threading.Thread):
    """Publishes a notification private to carol every 50 ms until stopped."""

    def __init__(self, redis):
        super().__init__(daemon=True)
        self.bus, self.ids, self.running = Bus(redis), [], True

    def run(self):
        deadline = time.time() + 30
        while self.running and time.time() < deadline:
            self.ids.append(self.bus.publish("board.card", "for carol", user="carol"))
            time.sleep(0.05)

    def stop(self):
        self.running = False
        self.join(5)


def ms(entry_id):
    return int(entry_id.split("-")[0])


def test_a_socketio_connection_is_disconnected_when_its_token_expires(server, redis):
    token, expiry = short_token()
    listener = Listener(server, token)
    ended = threading.Event()
    listener.sio.on("disconnect", lambda *reason: ended.set(), namespace=NAMESPACE)
    publisher = Publisher(redis)
    publisher.start()
    try:
        assert ended.wait(TTL + 10), "the connection outlived its token"
        wait_until(lambda: publisher.ids and ms(publisher.ids[-1]) > expiry + 500,
                   message="notifications published after the expiry")
    finally:
        publisher.stop()
        listener.close()
    received = listener.ids()
    assert received, "nothing arrived before the expiry"
    after = [i for i in received if ms(i) > expiry + 100]  # the timer's wake-up, at most
    assert not after, f"published after the token expired at {expiry}: {after}"
    assert any(ms(i) > expiry for i in publisher.ids)


def test_an_event_stream_ends_with_expired_when_its_token_expires(server, redis):
    token, expiry = short_token()
    stream = EventStream(server, token)
    publisher = Publisher(redis)
    publisher.start()
    try:
        events = stream.events_until("expired", most=1000)  # each read bounded (10 s)
        wait_until(lambda: publisher.ids and ms(publisher.ids[-1]) > expiry + 200,
                   message="notifications published after the expiry")
    finally:
        publisher.stop()
        stream.close()
    received = [entry_id for name, entry_id, _data in events if name == "message"]
    assert received, "nothing arrived before the expiry"
    assert all(ms(i) <= expiry for i in received), (expiry, received[-3:])
    assert events[-1][2]["message"].startswith("the token this stream was opened with has expired")


def test_a_stream_token_made_from_a_short_jwt_dies_with_it(server):
    token, expiry = short_token()
    made = requests.post(server.url + "/api/stream-token",
                         headers={"Authorization": f"Bearer {token}"}, timeout=5).json()
    assert made["expires_in"] <= TTL
    stream = EventStream(server, params={"token": made["token"]})
    try:
        events = stream.events_until("expired", most=1000)
        assert time.time() * 1000 >= expiry - 50
        assert events[-1][0] == "expired"
    finally:
        stream.close()
    wait_until(lambda: time.time() * 1000 > expiry, message="the expiry")
    again = requests.get(server.url + "/api/stream", params={"token": made["token"]},
                         stream=True, timeout=5)
    try:
        assert again.status_code == 401
        assert "expired" in again.json()["error"]
    finally:
        again.close()


def test_a_token_living_longer_than_jwt_max_ttl_is_refused_at_connect(server):
    client = socketio.Client(reconnection=False)
    reasons = []
    client.on("connect_error", reasons.append, namespace=NAMESPACE)
    with pytest.raises(socketio.exceptions.ConnectionError):
        client.connect(server.url, namespaces=[NAMESPACE], transports=["websocket"],
                       auth={"token": host_token("carol", ttl=2 * 86400)}, wait_timeout=5)
    client.disconnect()
    assert "JWT_MAX_TTL" in reasons[0]["message"]


def test_a_connection_on_a_herald_token_ends_when_the_token_expires(redis_server, redis, tmp_path):
    """The sibling: Herald's own tokens live TOKEN_TTL seconds, and a connection opened
    with one outlived it (only host-app JWTs were cut off at their expiry)."""
    from app.users import accounts

    accounts.create_user(redis, "dora", "dora-password")
    live = LiveServer(redis_server.url, tmp_path, TOKEN_TTL=str(TTL))
    live.start()
    listener = None
    try:
        issued = time.time()
        listener = Listener(live, live.token("dora", "dora-password"))
        ended = threading.Event()
        listener.sio.on("disconnect", lambda *reason: ended.set(), namespace=NAMESPACE)
        assert ended.wait(TTL + 10), "the connection outlived its token"
        assert time.time() >= issued + TTL - 1  # itsdangerous stamps whole seconds
        assert "disconnecting 'dora': its token expired" in live.log_path.read_text()
    finally:
        if listener is not None:
            listener.close()
        live.stop()


FORGED = "2030-01-01 00:00:00,000 WARNING herald.audit: admin signed in"


def test_a_user_id_holding_a_newline_forges_no_log_line(server):
    """A user id is any string (docs/contract.md): the lines Herald logs about a user
    (here: their connection and event stream ended as the token expired) quote it,
    so that a newline in it cannot start a line of its own (LOG_FORMAT=text)."""
    sub = "mallory\n" + FORGED
    token, _expiry = short_token(sub)
    listener = Listener(server, token)
    ended = threading.Event()
    listener.sio.on("disconnect", lambda *reason: ended.set(), namespace=NAMESPACE)
    stream = EventStream(server, token)
    try:
        assert stream.events_until("expired", most=1000)[-1][0] == "expired"
        assert ended.wait(TTL + 10), "the connection outlived its token"
    finally:
        stream.close()
        listener.close()
    quoted = repr(sub)
    wait_until(lambda: f"disconnecting {quoted}: its token expired" in server.log_path.read_text()
               and f"stream of {quoted} ended: its token expired" in server.log_path.read_text(),
               message="the two log lines")
    lines = server.log_path.read_text().splitlines()
    assert not [line for line in lines if line.startswith(FORGED[:10])], lines[-20:]
