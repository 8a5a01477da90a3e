"""Ended connections are freed by reference counting, not left to the cyclic collector.

wsgi.py has the cyclic garbage collector run a full collection rarely (its
pauses were the fan-out's latency floor), so whatever an ended connection
leaves in a reference cycle stays in memory: an attacker's run found the
web process at +0.75-1.5 KB for every dropped websocket, 17,346 ended
``Connection`` objects alive after 20,000 resets (issue 35). Here a real
web process (tests/helpers/census_server.py: wsgi.py plus a census port)
serves sessions ended every way a client ends them; once they are all over,
the cyclic collector must find nothing of Herald's, Engine.IO's,
Socket.IO's or gevent's among what they left.
"""
import json
import socket
import struct

import pytest
import requests
import websocket

from app.users import accounts
from tests.support import CensusServer, wait_until

SESSIONS = 30  # of each kind
WATCHED = ("app.", "engineio.", "socketio.", "geventwebsocket.", "gevent.")


@pytest.fixture
def server(redis_server, redis, tmp_path):
    accounts.create_user(redis, "ann", "ann-password")
    live = CensusServer(redis_server.url, tmp_path)
    live.start()
    yield live
    live.stop()


def _reset(sock):
    """Close ``sock`` with a TCP reset, as a phone losing its network does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class Sessions:
    """Sessions of each kind against ``server``, signed in with ``token``."""

    def __init__(self, server, token):
        self.server, self.token = server, token
        self.ws_url = f"ws://127.0.0.1:{server.port}/socket.io/?EIO=4&transport=websocket"

    def _open(self):
        ws = websocket.create_connection(self.ws_url, timeout=5)
        assert ws.recv().startswith("0{")  # Engine.IO's OPEN
        return ws

    def _join(self, ws, token):
        ws.send("40/notifications," + json.dumps({"token": token}))
        while True:
            answer = ws.recv()
            if answer.startswith(("40/notifications", "44/notifications")):
                return answer

    def joined_then_reset(self):
        ws = self._open()
        assert self._join(ws, self.token).startswith("40/")
        _reset(ws.sock)

    def refused_then_reset(self):
        ws = self._open()
        assert self._join(ws, "forged").startswith("44/")
        _reset(ws.sock)

    def never_joined_then_reset(self):
        _reset(self._open().sock)

    def joined_then_closed(self):
        ws = self._open()
        assert self._join(ws, self.token).startswith("40/")
        ws.close()

    def event_stream(self, reset):
        sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=5)
        sock.sendall(f"GET /api/stream?topics=news HTTP/1.1\r\nHost: 127.0.0.1:{self.server.port}"
                     f"\r\nAuthorization: Bearer {self.token}\r\nAccept: text/event-stream"
                     "\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            assert chunk, head
            head += chunk
        assert head.startswith(b"HTTP/1.1 200"), head[:200]
        if reset:
            _reset(sock)
        else:
            sock.close()

    def long_polling(self):
        url = self.server.url + "/socket.io/?EIO=4&transport=polling"
        opened = requests.get(url, timeout=5)
        sid = json.loads(opened.text[1:])["sid"]
        requests.post(f"{url}&sid={sid}", timeout=5,
                      data="40/notifications," + json.dumps({"token": self.token}))
        assert "40/notifications" in requests.get(f"{url}&sid={sid}", timeout=5).text
        requests.post(f"{url}&sid={sid}", data="1", timeout=5)  # Engine.IO's CLOSE


def test_ended_sessions_leave_no_reference_cycles(server):
    sessions = Sessions(server, server.token("ann", "ann-password"))
    before = server.census()["garbage"]
    for _ in range(SESSIONS):
        sessions.joined_then_reset()
        sessions.refused_then_reset()
        sessions.never_joined_then_reset()
        sessions.joined_then_closed()
        sessions.event_stream(reset=True)
        sessions.event_stream(reset=False)
        sessions.long_polling()
    # Over, and let go by the wheels that held them a while (pings every 25 s); one
    # may stay in python-engineio's service task's loop variable until its next pass.
    wait_until(lambda: (lambda now: now["sessions"] == 0 and now["alive"] <= 1)(server.census()),
               timeout=90, interval=1, message="every session over and let go")
    after = server.census()["garbage"]
    left = {kind: count - before.get(kind, 0) for kind, count in after.items()
            if kind.startswith(WATCHED) and count > before.get(kind, 0)}
    assert left == {}, f"{7 * SESSIONS} ended sessions left these in reference cycles: {left}"


def test_ended_sessions_are_let_go_at_once_not_a_ping_interval_later(server):
    """The ping and silence wheels hold connections weakly, and a long-polling session
    closed by its POST is forgotten at once: before, every ended session stayed alive
    until its next ping was due (25 s), or python-engineio's service task swept past
    it, which under churn was thousands of them (bench/churn.py, issue 35)."""
    sessions = Sessions(server, server.token("ann", "ann-password"))
    for _ in range(5):
        sessions.joined_then_reset()
        sessions.never_joined_then_reset()
        sessions.joined_then_closed()
        sessions.long_polling()
    # Well inside the 25 s ping interval; one socket may stay in python-engineio's
    # service task's loop variable until its next pass.
    wait_until(lambda: (lambda now: now["sessions"] == 0 and now["alive"] <= 1)(server.census()),
               timeout=10, interval=0.2, message="every ended session let go")
