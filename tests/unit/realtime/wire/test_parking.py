"""Connections waiting for a handshake slot are parked without a greenlet
(app/realtime/wire/admission.py), served in arrival order as slots free, while a
health probe goes ahead and a client that hangs up meanwhile is let go.

An AdmittingServer in this process, on gevent's own sockets, with one slot."""
import gc

import gevent
import greenlet
import pytest
from gevent import socket

from app.realtime.wire.admission import AdmittingServer


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


@pytest.fixture
def server():
    served = AdmittingServer(("127.0.0.1", 0), app, max_connections=500, max_handshakes=1,
                             log=None, error_log=None)
    served.start()
    yield served
    served.stop(timeout=2)


def live_greenlets():
    return sum(1 for item in gc.get_objects() if isinstance(item, greenlet.greenlet) and not item.dead)


def wait_for(condition, seconds=10):
    deadline = gevent.get_hub().loop.now() + seconds
    while not condition():
        assert gevent.get_hub().loop.now() < deadline, "timed out"
        gevent.sleep(0.01)


def connect(server, request=None):
    sock = socket.create_connection(("127.0.0.1", server.server_port), timeout=10)
    if request is not None:
        sock.sendall(request)
    return sock


def answer(sock):
    data = b""
    while b"\r\n\r\n" not in data or not data.endswith(b"ok"):
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


GET = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def test_connections_past_the_slots_wait_without_a_greenlet_and_are_served_in_order(server):
    hog = connect(server)  # sends nothing: holds the one slot
    wait_for(lambda: len(server.handshakes) == 1)
    before = live_greenlets()
    waiting = [connect(server, GET) for _ in range(30)]
    wait_for(lambda: len(server.parked) == 30 and all(not p.readable.active for p in server.parked))
    gevent.sleep(0.05)  # the short greenlets that looked at their first bytes are gone
    assert live_greenlets() - before < 5  # not one per parked connection
    assert server.open == 31 and server.slot_waits == 30
    hog.close()  # its slot goes to the first in line, and so on
    answers = [answer(sock) for sock in waiting]
    assert all(reply.startswith(b"HTTP/1.1 200") for reply in answers)
    wait_for(lambda: server.open == 0 and not server.handshakes)
    for sock in waiting:
        sock.close()


def test_a_health_probe_goes_ahead_of_the_line(server):
    hog = connect(server)
    wait_for(lambda: len(server.handshakes) == 1)
    parked = connect(server, GET)
    wait_for(lambda: len(server.parked) == 1)
    probe = connect(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer(probe).startswith(b"HTTP/1.1 200")  # while the slot is still the hog's
    assert len(server.handshakes) == 1 and server.parked[0].waiting
    hog.close()
    assert answer(parked).startswith(b"HTTP/1.1 200")
    for sock in (probe, parked):
        sock.close()


def test_a_parked_client_that_hangs_up_is_let_go(server):
    hog = connect(server)
    wait_for(lambda: len(server.handshakes) == 1)
    gone = connect(server)
    wait_for(lambda: len(server.parked) == 1)
    assert server.open == 2
    gone.close()
    wait_for(lambda: server.open == 1)
    assert not server.parked[0].waiting
    hog.close()
    wait_for(lambda: server.open == 0 and not server.handshakes)
    later = connect(server, GET)  # the gone one is passed over: the next is served at once
    assert answer(later).startswith(b"HTTP/1.1 200")
    later.close()
