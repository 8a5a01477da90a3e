"""The bounds on a reconnect storm (app/realtime/storm.py), on a clock of the test's own:
connects a second, replays at once and waiting (the storm itself, 500 clients on a live
server: tests/integration/realtime/test_reconnect_storm.py)."""
import threading

import pytest

from app.realtime.storm import BUSY, RETRY_AFTER_MAX, RETRY_AFTER_MIN, Busy, ConnectBounds


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def admission(rate=0, burst=0, concurrency=0, queue=0):
    clock = Clock()
    return ConnectBounds(rate, burst, concurrency, queue, threading.Event, clock), clock


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
                                "sessions_refused_per_address": 0,
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


def test_a_turn_started_later_is_freed_by_reference_counting_alone():
    """A waiting turn's ``start`` holds what its replay needs, the turn included:
    kept after it ran, that cycle outlived every replay of a storm (5 objects a
    connection, until the rare full collection)."""
    import functools
    import gc
    import weakref

    class Replay:  # what the replay holds (its sid, user, topics, cursor)
        pass

    bounds, _clock = admission(concurrency=1, queue=1)
    first, waiting, replay = bounds.replay_turn(), bounds.replay_turn(), Replay()
    started = []
    waiting.start = functools.partial(started.append, (waiting, replay))  # as the namespace's
    freed = weakref.ref(replay)
    gc.disable()
    try:
        first.done()
        assert started[0][0] is waiting
        started.clear()
        waiting.done()
        del waiting, replay
        assert freed() is None
    finally:
        gc.enable()


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
