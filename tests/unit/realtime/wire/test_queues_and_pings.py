"""The transport's queues and ping wheel, on their own.

They run under gevent in the web process; here gevent's greenlets run them
in the test process (no monkey-patching needed for these).
"""
import time
import weakref

import gevent
from engineio import packet as eio_packet

from app.realtime.wire import pings
from app.realtime.wire.pings import PingWheel
from app.realtime.wire.queues import DRAIN_MOST, BoundedQueue, DrainingQueue


class FakeWebSocket:
    def __init__(self, fail_after=None):
        self.sent, self.closed, self.fail_after = [], False, fail_after

    def send(self, text):
        if self.fail_after is not None and len(self.sent) >= self.fail_after:
            raise OSError("peer gone")
        gevent.sleep(0)  # a write may yield, as a real one does
        self.sent.append(text)

    def close(self):
        self.closed = True


class FakeSocket:
    def __init__(self, interval=0.05, sid="s"):
        self.sid = sid
        self.server = type("Server", (), {"ping_interval": interval})()
        self.closing = self.closed = False
        self.last_ping = None
        self.packets = []

    def send(self, pkt):
        self.packets.append(pkt.packet_type)


class Text:
    def __init__(self, text):
        self.text = text

    def encode(self):
        return self.text


class FakeServer:
    def __init__(self, limit, overflowed):
        self.max_queue = limit
        self.overflow = overflowed.append


def draining(ws, items, limit=100, overflowed=None):
    return DrainingQueue(items, ws, FakeServer(limit, [] if overflowed is None else overflowed))


def test_a_drainer_runs_only_while_there_is_something_to_write():
    ws = FakeWebSocket()
    queue = draining(ws, [Text("open")])
    assert queue.drainer is not None
    queue.put(Text("a"))
    queue.put(Text("b"))
    gevent.sleep(0.01)
    assert ws.sent == ["open", "a", "b"] and queue.drainer is None and queue.qsize() == 0
    queue.put(Text("c"))
    queue.join()
    assert ws.sent[-1] == "c" and queue.drainer is None


def test_none_closes_the_websocket_after_what_was_queued_and_drops_the_rest():
    ws = FakeWebSocket()
    queue = draining(ws, [Text("a"), None, Text("too late")])
    queue.join()
    assert ws.sent == ["a"] and ws.closed and queue.empty()


def test_a_failed_write_closes_and_frees_the_drainer():
    ws = FakeWebSocket(fail_after=1)
    queue = draining(ws, [Text("a"), Text("b")])
    queue.join()
    assert ws.sent == ["a"] and ws.closed and queue.drainer is None


class ManyAtOnce(FakeWebSocket):
    """A websocket that writes several packets in one send, as Herald's Connection."""

    def __init__(self):
        super().__init__()
        self.writes = []

    def send(self, text):
        super().send(text)
        self.writes.append([text])

    def send_many(self, texts):
        gevent.sleep(0)
        self.sent.extend(texts)
        self.writes.append(list(texts))


def test_what_is_queued_together_leaves_in_one_write_and_a_close_after_it():
    ws = ManyAtOnce()
    queue = draining(ws, [Text("ack"), Text("page"), Text("replayed"), None, Text("too late")])
    queue.join()
    assert ws.writes == [["ack", "page", "replayed"]] and ws.closed and queue.empty()
    ws = ManyAtOnce()
    queue = draining(ws, [Text("open")])
    queue.join()
    queue.put(Text("one"))
    queue.join()
    assert ws.writes == [["open"], ["one"]]  # alone, a packet goes by send


def test_one_write_takes_at_most_drain_most_packets():
    ws = ManyAtOnce()
    queue = draining(ws, [Text(str(i)) for i in range(DRAIN_MOST + 5)], limit=1000)
    queue.join()
    assert [len(w) for w in ws.writes] == [DRAIN_MOST, 5]
    assert ws.sent == [str(i) for i in range(DRAIN_MOST + 5)]


def test_both_queues_refuse_to_grow_past_their_limit_and_report_it():
    overflowed = []
    bounded = BoundedQueue(2, overflowed.append)
    ws = FakeWebSocket()
    ws.send = lambda text: gevent.sleep(10)  # a peer that never takes anything
    drained = draining(ws, [], limit=2, overflowed=overflowed)
    for queue in (bounded, drained):
        for text in "abc":
            queue.put(Text(text))
        queue.put(None)  # closing is always let through
        assert queue.qsize() <= 3 and queue.last() is None
        queue.clear()
        assert queue.empty() and queue.last() is None
    assert overflowed == [bounded, drained]
    drained.drainer.kill()


def test_the_wheel_pings_each_socket_once_per_interval_and_skips_closed_ones():
    alive, gone = FakeSocket(interval=0.05, sid="a"), FakeSocket(interval=0.05, sid="g")
    wheel = PingWheel({"a": alive, "g": gone}.get)
    wheel.schedule(alive)
    wheel.schedule(gone)
    gone.closed = True
    started = time.time()
    wheel.runner.join(timeout=5)
    assert alive.packets == [eio_packet.PING] and gone.packets == []
    assert alive.last_ping >= started
    assert wheel.runner is None and not wheel.due  # nothing left to do: no greenlet


def test_the_wheel_holds_session_ids_so_an_ended_session_is_freed_at_once():
    alive, gone = FakeSocket(interval=0.05, sid="a"), FakeSocket(interval=0.05, sid="g")
    sessions = {"a": alive, "g": gone}
    wheel = PingWheel(sessions.get)
    wheel.schedule(alive)
    wheel.schedule(gone)
    watch = weakref.ref(gone)
    del sessions["g"], gone  # the session ended: nothing else may hold its socket
    assert watch() is None
    wheel.runner.join(timeout=5)
    assert alive.packets == [eio_packet.PING]
    assert wheel.runner is None and not wheel.due


def test_pings_due_close_together_go_out_in_one_wake(monkeypatch):
    """Five pings due 20 ms apart: with a grain of 0.25 s the wheel sleeps once and
    sends them all, none before its time; with none, it wakes for each."""
    real_sleep = gevent.sleep

    def wakes(grain):
        events = []
        monkeypatch.setattr(pings.gevent, "sleep", lambda seconds: (events.append("sleep"),
                                                                   real_sleep(seconds))[1])
        sockets = {f"s{n}": FakeSocket(interval=0.02 * (n + 1), sid=f"s{n}") for n in range(5)}
        for socket in sockets.values():
            socket.send = lambda pkt, sid=socket.sid: events.append(sid)
        wheel = PingWheel(sockets.get, grain=grain)
        scheduled = time.time()
        for socket in sockets.values():  # in due order, as one interval keeps them
            wheel.schedule(socket)
        wheel.runner.join(timeout=5)
        monkeypatch.undo()
        assert all(socket.last_ping >= scheduled + socket.server.ping_interval
                   for socket in sockets.values())
        return events

    assert wakes(0.25) == ["sleep", "s0", "s1", "s2", "s3", "s4"]
    assert wakes(0.0).count("sleep") >= 4
