"""Connections waiting are parked without a greenlet (app/realtime/wire/admission.py,
parking.py): for their first bytes (a connection that sends nothing holds no
slot, and is closed after REQUEST_TIMEOUT), then for a handshake slot, in a line
per address served in turn, while a health probe goes ahead and a client that
hangs up meanwhile is let go. At the connection limit, a newcomer from another
address takes the place of the oldest connection that has not sent its request
from the address with the most. A request's head (and body) must be in by a
deadline, whatever pace it is sent at.

An AdmittingServer in this process, on gevent's own sockets, with one slot."""
import contextlib
import gc

import gevent
import gevent.select
import greenlet
import pytest
from gevent import socket

from app.realtime.wire import handler_class
from app.realtime.wire.admission import AdmittingServer

SERVED = []  # the paths of the requests served, in order


def app(environ, start_response):
    SERVED.append(environ["PATH_INFO"])
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


@pytest.fixture
def server():
    with serving(1, request_timeout=5) as served:
        yield served


@contextlib.contextmanager
def serving(max_handshakes, request_timeout, max_connections=500):
    """An AdmittingServer on a free loopback port with Herald's handler, stopped after."""
    served = AdmittingServer(("127.0.0.1", 0), app, max_connections=max_connections,
                             max_handshakes=max_handshakes, request_timeout=request_timeout,
                             handler_class=handler_class(60, request_timeout),
                             log=None, error_log=None)
    served.start()
    try:
        yield served
    finally:
        served.stop(timeout=2)


def live_greenlets():
    return sum(1 for item in gc.get_objects() if isinstance(item, greenlet.greenlet) and not item.dead)


def wait_for(condition, seconds=10):
    deadline = gevent.get_hub().loop.now() + seconds
    while not condition():
        assert gevent.get_hub().loop.now() < deadline, "timed out"
        gevent.sleep(0.01)


def connect(server, request=None, source="127.0.0.1"):
    sock = socket.create_connection(("127.0.0.1", server.server_port), timeout=10,
                                    source_address=(source, 0))
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
HALF = b"GET / HTTP/1.1\r\n"  # a request begun: its connection takes a slot


def hog(server, source="127.0.0.1"):
    """A connection holding a handshake slot: it began its request, and stops there."""
    held = len(server.handshakes)
    sock = connect(server, HALF, source)
    wait_for(lambda: len(server.handshakes) == held + 1)
    return sock


def test_connections_past_the_slots_wait_without_a_greenlet_and_are_served_in_order(server):
    hog = connect(server, HALF)  # began its request: holds the one slot
    wait_for(lambda: len(server.handshakes) == 1)
    before = live_greenlets()
    waiting = [connect(server, GET) for _ in range(30)]
    wait_for(lambda: len(server.lines) == 30)
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
    held = hog(server)
    parked = connect(server, GET)
    wait_for(lambda: len(server.lines) == 1)
    probe = connect(server, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert answer(probe).startswith(b"HTTP/1.1 200")  # while the slot is still the hog's
    assert len(server.handshakes) == 1 and len(server.lines) == 1
    held.close()
    assert answer(parked).startswith(b"HTTP/1.1 200")
    for sock in (probe, parked):
        sock.close()


def test_a_parked_client_that_hangs_up_is_let_go(server):
    held = hog(server)
    gone = connect(server)
    wait_for(lambda: server.open == 2)
    assert len(server.pending["127.0.0.1"]) == 2  # the hog, reading its head; the silent one
    gone.close()
    wait_for(lambda: server.open == 1)
    held.close()
    wait_for(lambda: server.open == 0 and not server.handshakes)
    later = connect(server, GET)  # the gone one is passed over: the next is served at once
    assert answer(later).startswith(b"HTTP/1.1 200")
    later.close()


def test_a_connection_that_sends_nothing_holds_no_slot_and_is_closed_in_time():
    with serving(1, request_timeout=1) as served:
        idle = [connect(served) for _ in range(50)]  # one address, 50 silent connections
        wait_for(lambda: served.open == 50)
        assert not served.handshakes  # none of them holds the one slot
        newcomer = connect(served, GET)
        assert answer(newcomer).startswith(b"HTTP/1.1 200")  # at once: no line to wait in
        assert served.slot_waits == 0
        wait_for(lambda: served.silent == 50 and served.open == 0)  # closed at REQUEST_TIMEOUT
        assert all(sock.recv(1) == b"" for sock in idle)
        for sock in [*idle, newcomer]:
            sock.close()


def test_lines_are_served_by_address_in_turn():
    """Four slots: one address holds at most three; its hundred in line do not hold
    back the one from another address, which takes the fourth at once; and once
    all four are held, as slots free the two addresses' lines are served in turn."""
    with serving(4, request_timeout=5) as served:
        hogs = [hog(served, "127.0.0.2") for _ in range(3)]
        crowd = [connect(served, b"GET /crowd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                         "127.0.0.2") for _ in range(100)]
        wait_for(lambda: len(served.lines) == 100)
        other = connect(served, GET, "127.0.0.3")
        assert answer(other).startswith(b"HTTP/1.1 200")
        assert len(served.lines) == 100  # the crowd still waits (its address holds 3 of 4)
        hogs.append(hog(served, "127.0.0.3"))  # the fourth slot, held
        later = connect(served, b"GET /later HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                        "127.0.0.3")
        wait_for(lambda: len(served.lines) == 101)
        SERVED.clear()
        for sock in hogs:  # slots freed: the two addresses' lines are served in turn
            sock.close()
        assert answer(later).startswith(b"HTTP/1.1 200")
        assert all(answer(sock).startswith(b"HTTP/1.1 200") for sock in crowd)
        order = [path for path in SERVED if path != "/"]  # (the hogs' heads, cut short)
        assert "/later" in order[:2], order[:5]  # not after the crowd's hundred
        for sock in [*crowd, other, later]:
            sock.close()


def test_at_the_limit_a_newcomer_takes_the_place_of_the_slowest_address_s_oldest():
    with serving(4, request_timeout=30, max_connections=20) as served:
        slow = [connect(served, HALF, "127.0.0.2") for _ in range(10)]  # heads begun
        silent = [connect(served, None, "127.0.0.2") for _ in range(10)]
        wait_for(lambda: served.open == 20)
        newcomers = [connect(served, HALF, "127.0.0.3") for _ in range(5)]  # they stay
        wait_for(lambda: served.evicted == 5)
        assert served.refused == 0 and served.by_address["127.0.0.3"] == 5
        let_go = lambda: [s for s in slow + silent if gevent.select.select([s], [], [], 0)[0]]  # noqa: E731
        wait_for(lambda: len(let_go()) == 5)
        for sock in let_go():  # closed; or, read by a greenlet, its head ends where it
            reply = answer(sock)  # stopped: answered as it is, and closed
            assert reply == b"" or reply.startswith((b"HTTP/1.1 200", b"HTTP/1.1 400")), reply[:40]
        one_more = connect(served, None, "127.0.0.2")  # its own address is the heaviest
        assert answer(one_more).startswith(b"HTTP/1.1 503")
        for sock in [*slow, *silent, *newcomers, one_more]:
            sock.close()
        wait_for(lambda: served.open == 0)


def _dribble(served, chunks, pace=0.2):
    """Send ``chunks`` one every ``pace`` s until an answer comes; (answer, chunks sent)."""
    sock = connect(served)
    sent = 0
    try:
        for chunk in chunks:
            sock.sendall(chunk)
            sent += 1
            readable = gevent.select.select([sock], [], [], pace)[0]
            if readable:
                return sock.recv(4096), sent
        return b"", sent
    finally:
        sock.close()


def test_a_request_head_or_body_sent_slowly_is_cut_off_at_its_deadline():
    """Each line well within the per-read timeout, the whole past the deadline: a 408,
    long before the request would have been complete (issue 35: one header line
    every 8 s kept a connection open for ever)."""
    with serving(4, request_timeout=1) as served:
        head = [b"GET / HTTP/1.1\r\n"] + [b"X-Slow-%d: 1\r\n" % n for n in range(100)] + [b"\r\n"]
        reply, sent = _dribble(served, head)
        assert reply.startswith(b"HTTP/1.1 408") and sent < 20, (reply[:40], sent)
        # A 100-byte body may take 1 s plus 100 bytes at MIN_BODY_RATE: far less than 20 s.
        body = [b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"] + [b"x"] * 100
        reply, sent = _dribble(served, body)
        assert sent < 20, sent
        wait_for(lambda: served.open == 0)


def test_a_head_s_deadline_counts_from_its_first_byte_but_what_came_in_time_is_read():
    """A head waiting in the handshake line is not the client's delay: a whole head that
    waited longer than REQUEST_TIMEOUT is answered; one begun and never finished is
    cut off as soon as it is served, its deadline being past (helper run: slow heads
    that waited in line lived 40 s against a 10 s REQUEST_TIMEOUT)."""
    with serving(1, request_timeout=1) as served:
        first = connect(served, HALF)  # holds the slot until its deadline, 1 s
        wait_for(lambda: len(served.handshakes) == 1)
        begun = connect(served, HALF)  # waits in line with a head begun
        whole = connect(served, GET)  # waits in line with a whole head
        wait_for(lambda: len(served.lines) == 2)
        assert answer(first).startswith(b"HTTP/1.1 408")
        assert answer(begun).startswith(b"HTTP/1.1 408")  # at once: its second is past
        assert answer(whole).startswith(b"HTTP/1.1 200")
        for sock in (first, begun, whole):
            sock.close()
        wait_for(lambda: served.open == 0)


def test_a_head_in_at_accept_that_waits_in_line_has_its_deadline_from_then():
    """The same for connections whose first bytes were in before they were accepted,
    lined up at once (bench/abuse.py found them living 30 s in line plus 10 s)."""
    with serving(1, request_timeout=2) as served:
        first = connect(served, HALF)  # holds the slot until its deadline, 2 s
        wait_for(lambda: len(served.handshakes) == 1)
        served.stop_accepting()  # what these send is in before they are accepted
        begun, whole = connect(served, HALF), connect(served, GET)
        gevent.sleep(0.05)
        served.start_accepting()
        wait_for(lambda: len(served.lines) == 2)
        assert answer(first).startswith(b"HTTP/1.1 408")
        cut = gevent.get_hub().loop.now()
        assert answer(begun).startswith(b"HTTP/1.1 408")
        assert gevent.get_hub().loop.now() - cut < 1  # at once, not 2 s after its turn
        assert answer(whole).startswith(b"HTTP/1.1 200")
        for sock in (first, begun, whole):
            sock.close()
        wait_for(lambda: served.open == 0)
