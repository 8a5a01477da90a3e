"""A reconnect storm: 500 clients on one web process, which is killed and restarted.

The clients are Herald's own browser client (static/js/herald.js, run unchanged
in Node by bench/storm.js, the benchmark's harness), 500 of them on loopback,
subscribed through five users. Notifications are published all along, straight
to Redis; the web process is SIGKILLed and started again on the same port with
a low connect rate (``ADMIT_RATE``), so that the storm of reconnects is refused
in part with "unavailable: busy, retry later" and spread over several seconds.

What must hold, whatever the timing:

- every client comes back, and every attempt it made carried the newest id it
  had received as ``last_id``; every replay after the restart is whole;
- every client received every notification published, exactly once, in order
  (what its socket received, before the client drops duplicates);
- some connects were refused as busy (the client counted them, and so did the
  server's /metrics), so the retry-later path was taken;
- clients already back got notifications published during the storm live, and
  none of them was lost and replayed to again.
"""
import importlib.util
import threading

import pytest

from app.realtime.storm import BUSY, RETRY_AFTER_MAX, RETRY_AFTER_MIN, Admission, Busy
from tests.support import ROOT

CLIENTS = 500
BOUNDS = {"ADMIT_RATE": "40", "ADMIT_BURST": "20", "REPLAY_CONCURRENCY": "4", "REPLAY_QUEUE": "50"}


def bench_storm():
    """bench/storm.py, the benchmark's harness (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_storm", ROOT / "bench" / "storm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # starts servers and 500 clients: not in make test-fast
@pytest.mark.timeout(400)
def test_every_client_comes_back_and_gets_everything_once(redis_server, redis, tmp_path):
    # The clients' widest reconnect window is 2 s (5 s in a browser): they come back
    # faster than ADMIT_RATE lets them in, so some are told to retry later.
    result = bench_storm().storm(redis_server.url, redis, tmp_path, CLIENTS, BOUNDS,
                                 interval=0.05, cap=2000, settle_timeout=240)
    assert result["clients"] == CLIENTS
    assert result["settled"], "not every client was live again, with the last notification"
    assert result["not_back"] == 0
    assert result["wrong_last_id"] == 0, "a reconnect without the newest id received as last_id"
    assert result["not_recovered"] == 0
    assert result["mismatched"] == 0, result["examples"]
    assert result["expected"] == result["published"]
    # The retry-later path was taken, and both ends saw the same refusals.
    assert result["busy_refusals"] > 0
    assert result["server_deferred"] >= result["busy_refusals"]
    assert 0 < result["retry_after_max_s"] <= 30
    # Live delivery went on during the storm, to the clients already back.
    assert result["storm_live_deliveries"] > 0
    assert result["storm_live_clients"] > 0
    assert result["relapsed"] == 0


# -- the bounds themselves (app/realtime/storm.py), on a clock of the test's own ----


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def admission(rate=0, burst=0, concurrency=0, queue=0):
    clock = Clock()
    return Admission(rate, burst, concurrency, queue, threading.Event, clock), clock


def test_connects_past_the_rate_are_told_to_come_back_spread_out():
    bounds, clock = admission(rate=10, burst=3)
    for _ in range(3):
        bounds.admit()
    hints = []
    for _ in range(20):
        with pytest.raises(Busy) as refused:
            bounds.admit()
        hints.append(refused.value.retry_after)
    # Each refused connect is given the next free moment at 10 a second.
    assert hints == sorted(hints) and hints[-1] > hints[0]
    assert RETRY_AFTER_MIN <= hints[0] and hints[-1] <= RETRY_AFTER_MAX
    assert round(hints[-1] - hints[-2], 2) == 0.1
    clock.now += 1.0  # ten more tokens
    bounds.admit()
    assert bounds.figures()["connects_deferred"] == 20


def test_the_refusal_says_busy_and_when_to_come_back():
    refusal = Busy("rate", 1.5).refusal()
    assert refusal.error_args == {"message": BUSY, "data": {"retry_after": 1.5}}
    assert BUSY.startswith("unavailable:")  # what clients already retry


def test_replays_run_a_few_at_once_and_a_few_more_wait_their_turn():
    bounds, clock = admission(concurrency=2, queue=1)
    first, second, third = (bounds.replay_turn() for _ in range(3))
    assert first.granted and second.granted and not third.granted
    with pytest.raises(Busy) as refused:
        bounds.replay_turn()
    assert refused.value.bound == "replays"
    assert bounds.figures() == {"connects_deferred": 1, "connects_deferred_replays": 1,
                                "replays_running": 2, "replays_waiting": 1}
    assert first.wait(lambda: False)
    clock.now += 0.5
    first.done()
    first.done()  # twice changes nothing
    assert third.granted and third.event.is_set() and third.wait(lambda: False)
    assert bounds.figures()["replays_running"] == 2
    second.done()
    third.done()
    assert bounds.figures()["replays_running"] == 0


def test_a_connection_that_leaves_while_waiting_gives_up_its_place():
    bounds, _clock = admission(concurrency=1, queue=2)
    running, waiting, behind = (bounds.replay_turn() for _ in range(3))
    assert not waiting.wait(lambda: True)  # gone: it stops waiting at once
    waiting.done()
    running.done()
    assert behind.granted and bounds.figures()["replays_waiting"] == 0


def test_no_bounds_by_zero():
    bounds, _clock = admission()
    for _ in range(1000):
        bounds.admit()
        assert bounds.replay_turn().granted
    assert bounds.figures()["connects_deferred"] == 0


def test_the_indexed_manager_disconnects_a_client_from_its_own_rooms_only():
    """app/realtime/wire/manager.py: what python-socketio's manager does on a disconnect,
    without scanning every room (every refused connect is a disconnect)."""
    import socketio

    from app.realtime.wire.manager import IndexedManager

    class Server:  # what the manager asks of its server: ids for new connections
        class eio:
            ids = iter(f"sid{n}" for n in range(100))

            @classmethod
            def generate_id(cls):
                return next(cls.ids)
        packet_class = socketio.packet.Packet

    for manager in (IndexedManager(), socketio.Manager()):  # the same outcome as upstream's
        manager.set_server(Server)
        ann = manager.connect("eio-ann", "/n")
        bob = manager.connect("eio-bob", "/n")
        for room in ("topic:a", "user:ann"):
            manager.enter_room(ann, "/n", room)
        manager.enter_room(bob, "/n", "topic:a")
        assert sorted(manager.get_rooms(ann, "/n")) == sorted([ann, "topic:a", "user:ann"])
        manager.disconnect(ann, "/n")
        assert not manager.is_connected(ann, "/n")
        assert manager.get_rooms(ann, "/n") == []
        assert sorted(manager.rooms["/n"], key=str) == sorted([None, bob, "topic:a"], key=str)
        assert list(manager.get_participants("/n", "topic:a")) == [(bob, "eio-bob")]
        if isinstance(manager, IndexedManager):
            assert manager.rooms_of == {("/n", bob): {None, bob, "topic:a"}}
