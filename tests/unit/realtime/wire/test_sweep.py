"""Herald's Engine.IO service task (app/realtime/wire/sweep.py): one wake looks at
every session, with real python-engineio sessions on a real EngineIO server.

python-engineio's own task slept ``ping_timeout / len(sockets)`` between two
sessions: one wake per session. The waits here are counted by the server's
own event (``create_event``), so the tests see how many times the task would
have slept, without sleeping.
"""
import logging
import time

import gevent
import gevent.event
from engineio import socket as eio_socket

from app.realtime.wire import EngineIO, sweep


class CountedEvent(gevent.event.Event):
    """The task's stop event: records each wait's timeout, and answers "stop" at
    the ``stop_at``-th wait, without waiting (None: waits for real)."""

    def __init__(self, stop_at=None):
        super().__init__()
        self.waits, self.stop_at = [], stop_at

    def wait(self, timeout=None):
        self.waits.append(timeout)
        if self.stop_at is None:
            return super().wait(timeout)
        return len(self.waits) >= self.stop_at


def engine_with(count, overdue=(), closed=(), event=None):
    """An EngineIO (gevent, as served) with ``count`` open sessions s0..s{count-1};
    those in ``overdue`` pinged 30 s ago and never answered, those in ``closed``
    closed already. Returns the engine and the list of its disconnects."""
    engine = EngineIO(async_mode="gevent", ping_interval=25, ping_timeout=20)
    disconnects = []
    engine.on("disconnect", lambda sid, reason: disconnects.append((sid, reason)))
    for number in range(count):
        session = eio_socket.Socket(engine, f"s{number}")
        session.last_ping = time.time() - 30 if number in overdue else None
        session.closed = number in closed
        engine.sockets[session.sid] = session
    if event is not None:
        engine.create_event = lambda: event
    return engine, disconnects


def test_one_wake_looks_at_every_session():
    overdue = set(range(0, 2500, 7))
    event = CountedEvent(stop_at=2)  # one sweep, then stop
    engine, disconnects = engine_with(2500, overdue=overdue, event=event)

    engine._service_task()

    assert event.waits == [sweep.EVERY, sweep.EVERY]  # the library's: 20 / 2500 s, 2500 times a round
    assert sorted(disconnects) == sorted((f"s{n}", engine.reason.PING_TIMEOUT) for n in overdue)
    for number in range(2500):
        session = engine.sockets[f"s{number}"]
        assert session.closed == (number in overdue)


def test_closed_sessions_are_forgotten_and_open_ones_kept():
    event = CountedEvent(stop_at=2)
    engine, disconnects = engine_with(30, closed={3, 4, 29}, event=event)
    replaced = eio_socket.Socket(engine, "s4")  # a new session under an id a closed one had
    engine.sockets["s4"] = replaced

    sweep.sweep(engine)

    assert sorted(engine.sockets) == sorted(f"s{n}" for n in range(30) if n not in (3, 29))
    assert engine.sockets["s4"] is replaced
    assert disconnects == []


def test_the_hub_runs_between_strides():
    engine, _ = engine_with(2 * sweep.STRIDE + 10, overdue=range(2 * sweep.STRIDE + 10))
    seen = []
    gevent.spawn(lambda: seen.append(sum(s.closed for s in engine.sockets.values())))

    sweep.sweep(engine)

    assert seen == [sweep.STRIDE]  # it ran after the first stride, not after all of them


def test_one_sessions_failure_is_logged_and_the_others_looked_at(caplog):
    event = CountedEvent(stop_at=3)  # two sweeps
    engine, disconnects = engine_with(5, overdue={4}, event=event)
    calls = []

    def broken():
        calls.append(1)
        raise RuntimeError("boom")
    engine.sockets["s0"].check_ping_timeout = broken

    with caplog.at_level(logging.ERROR, logger="app.realtime.wire.sweep"):
        engine._service_task()

    assert len(calls) == 2
    assert "the sweep of Engine.IO sessions failed at session s0" in caplog.text
    assert "boom" in caplog.text
    assert disconnects == [("s4", engine.reason.PING_TIMEOUT)]  # the sessions after it were looked at


def test_shutdown_stops_the_task():
    engine, _ = engine_with(3, event=CountedEvent())
    engine.service_task_handle = gevent.spawn(engine._service_task)
    gevent.sleep(0)  # the task starts and waits on its event
    with gevent.Timeout(5):
        engine.shutdown()
    assert engine.service_task_handle is None
    assert engine.create_event().waits == [sweep.EVERY]
