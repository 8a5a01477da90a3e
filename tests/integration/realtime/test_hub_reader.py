"""A websocket read from the hub (app/realtime/wire/connection.py), in-process.

Herald's Engine.IO server (``EngineIO``), Herald's pywsgi handler and
AdmittingServer, run by gevent in a thread of this process; clients are
websocket-client's, from the test's thread. In-process, so that the
server's greenlets can be counted: an idle websocket has none.
"""
import gc
import struct
import threading
import time

import engineio
import gevent
import greenlet
import pytest
import websocket

from app.realtime.wire import EngineIO, handler_class
from app.realtime.wire.admission import AdmittingServer
from tests.support import wait_until


class Served:
    """Herald's transport on a loopback port, in a thread with its own gevent hub;
    ``events`` records what the Engine.IO server's handlers saw."""

    def __init__(self, timeout=60, ping_interval=25):
        self.timeout, self.ping_interval = timeout, ping_interval
        self.events = []
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    def _run(self):
        self.eio = eio = EngineIO(async_mode="gevent", ping_interval=self.ping_interval,
                                  ping_timeout=20)
        eio.on("connect", lambda sid, environ: self.events.append(("connect", sid)))
        eio.on("message", lambda sid, data: self._message(sid, data))
        eio.on("disconnect", lambda sid, reason: self.events.append(("disconnect", sid, reason)))
        self.server = AdmittingServer(("127.0.0.1", 0), engineio.WSGIApp(eio), 1000,
                                      handler_class=handler_class(self.timeout), log=None)
        self.server.start()
        self.port = self.server.server_port
        self.ready.set()
        while not self.stop.is_set():  # the harness's own poll, not a test's wait
            gevent.sleep(0.02)
        self.server.stop(timeout=1)

    def _message(self, sid, data):
        self.events.append(("message", sid, data))
        if data == "echo":
            self.eio.send(sid, "echoed")

    def connect(self):
        ws = websocket.create_connection(
            f"ws://127.0.0.1:{self.port}/engine.io/?EIO=4&transport=websocket", timeout=5)
        assert ws.recv().startswith("0{")  # the OPEN packet
        return ws

    def close(self):
        self.stop.set()
        self.thread.join(5)


def running_greenlets():
    return sum(1 for o in gc.get_objects() if isinstance(o, greenlet.greenlet) and o)


@pytest.fixture
def served():
    running = Served()
    yield running
    running.close()


def test_an_idle_websocket_has_no_greenlet(served):
    before = running_greenlets()
    clients = [served.connect() for _ in range(30)]
    try:
        wait_until(lambda: len(served.eio.sockets) == 30, message="30 sessions")
        # Each connection's handshake is over once its OPEN packet was read; what is
        # left running a moment later is what an idle connection keeps.
        wait_until(lambda: running_greenlets() < before + 5, timeout=5,
                   message=f"greenlets to end ({running_greenlets()} running, {before} before)")
        assert served.server.open == 30  # still counted as open connections
    finally:
        for ws in clients:
            ws.close()
    # Released in the server's thread: the count first, then the per-address entry.
    wait_until(lambda: served.server.open == 0 and not served.eio.sockets
               and not served.server.by_address, message="every connection released")
    assert not served.server.kept


def test_a_websocket_handed_over_leaves_no_garbage_behind(served):
    """gevent-websocket's WebSocket, let go after the hand-over, closes itself in
    ``__del__``, and its ``current_app`` then made a class per call: reference
    cycles left to the collector, which a web process runs rarely (wsgi.py),
    4.5 KiB per connection until then (bench/idle_memory.py)."""
    gc.collect()
    before = running_greenlets()
    gc.disable()  # what the cycles leave stays countable
    try:
        clients = [served.connect() for _ in range(20)]
        wait_until(lambda: served.server.open == 20 and len(served.eio.sockets) == 20,
                   message="20 sessions")
        # Handed over: each request's greenlet has ended, and let its WebSocket go.
        wait_until(lambda: not served.server.kept and running_greenlets() < before + 5,
                   message="20 connections handed over")
        made = [o for o in gc.get_objects() if isinstance(o, type) and o.__name__ == "MockApp"]
        assert made == []
    finally:
        gc.enable()
        for ws in clients:
            ws.close()
    wait_until(lambda: served.server.open == 0, message="every connection released")


def test_messages_both_ways_and_a_client_close(served):
    ws = served.connect()
    ws.send("4echo")
    assert ws.recv() == "4echoed"
    sid = next(e[1] for e in served.events if e[0] == "connect")
    ws.close()
    wait_until(lambda: ("disconnect", sid, served.eio.reason.TRANSPORT_CLOSE) in served.events
               or ("disconnect", sid, served.eio.reason.CLIENT_DISCONNECT) in served.events,
               message="the disconnect event")
    wait_until(lambda: served.server.open == 0, message="the connection released")


def test_fragmented_masked_and_back_to_back_frames_are_read(served):
    ws = served.connect()
    first = websocket.ABNF(0, 0, 0, 0, websocket.ABNF.OPCODE_TEXT, 1, "4he")
    rest = websocket.ABNF(1, 0, 0, 0, websocket.ABNF.OPCODE_CONT, 1, "llo")
    ping = websocket.ABNF(1, 0, 0, 0, websocket.ABNF.OPCODE_PING, 1, "p")
    whole = websocket.ABNF.create_frame("4echo", websocket.ABNF.OPCODE_TEXT)
    # A ping frame between the fragments, all in one segment, the last split byte by byte.
    data = first.format() + ping.format() + rest.format() + whole.format()
    ws.sock.sendall(data[:-3])
    for byte in data[-3:]:
        ws.sock.sendall(bytes([byte]))
    opcode, payload = ws.recv_data(control_frame=True)
    assert (opcode, payload) == (websocket.ABNF.OPCODE_PONG, b"p")
    assert ws.recv() == "4echoed"
    wait_until(lambda: any(e[0] == "message" and e[2] == "hello" for e in served.events),
               message="the fragmented message")
    ws.close()


def test_a_frame_with_a_reserved_bit_is_closed_with_1002(served):
    ws = served.connect()
    bad = websocket.ABNF(1, 1, 0, 0, websocket.ABNF.OPCODE_TEXT, 1, "4x")
    ws.sock.sendall(bad.format())
    opcode, payload = ws.recv_data(control_frame=True)
    assert opcode == websocket.ABNF.OPCODE_CLOSE and struct.unpack("!H", payload[:2])[0] == 1002
    ws.shutdown()
    wait_until(lambda: served.server.open == 0, message="the connection released")


def test_a_malformed_engineio_packet_is_refused(served):
    ws = served.connect()
    ws.send("x-not-a-packet")
    wait_until(lambda: served.eio.refused_packets == 1, message="the refusal counted")
    ws.close()
    wait_until(lambda: served.server.open == 0 and not served.eio.sockets,
               message="the connection closed")


def test_pings_are_answered_and_a_silent_peer_is_dropped():
    served = Served(timeout=1, ping_interval=0.3)
    try:
        talking, silent = served.connect(), served.connect()
        started = time.monotonic()
        pings = 0
        while time.monotonic() - started < 2.5:  # past the timeout, answering every ping
            if talking.recv() == "2":
                pings += 1
                talking.send("3")
        assert pings >= 3
        # The session goes first, the admission's count a moment later (server thread).
        wait_until(lambda: len(served.eio.sockets) == 1 and served.server.open == 1,
                   message="the silent peer dropped and released")
        talking.send("4echo")
        assert talking.recv() in ("4echoed", "2")
        talking.close()
        silent.close()
    finally:
        served.close()
