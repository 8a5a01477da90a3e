"""Idle event streams' heartbeats come due together (app/realtime/sse_stream.py, on
the grain of app/realtime/wire/pings.py): streams opened at different moments write
their ``: heartbeat`` in the same turn of the hub's loop, one wake for all.

Each stream's live loop runs in a greenlet, as it does under pywsgi; its queue is
gevent's (the web process's is the standard one, monkey-patched)."""
import gevent
import gevent.queue

from app.realtime.sse_hub import Stream, StreamHub
from app.realtime.sse_stream import _live
from app.realtime.wire import pings


def idle_stream(hub, user):
    stream = Stream(hub.new_key(), user, ["news"], None, 10)
    stream.queue = gevent.queue.Queue(11)
    return stream


def test_streams_opened_apart_beat_in_the_same_turn():
    hub, loop = StreamHub(max_queue=10), gevent.get_hub().loop
    beats = []

    def live(stream):
        body = _live(stream, 0.3, None)
        assert next(body) == b": heartbeat\n\n"
        beats.append(loop.now())

    gevent.sleep(pings.on_grain(0.001))  # just past a grain's start: the five open within one
    greenlets = []
    for number in range(5):  # opened 30 ms apart
        greenlets.append(gevent.spawn(live, idle_stream(hub, f"u{number}")))
        gevent.sleep(0.03)
    gevent.joinall(greenlets, timeout=5, raise_error=True)

    assert len(beats) == 5
    turns = {round(beat, 3) for beat in beats}
    assert len(turns) <= 2, sorted(beats)  # one turn (two if this test was held up), not five


def test_on_grain_lengthens_by_less_than_a_grain():
    loop = gevent.get_hub().loop
    for delay in (0.0, 0.1, 0.25, 1.0, 14.9, 15.0):
        waited = pings.on_grain(delay)
        assert delay - 1e-6 <= waited < delay + pings.GRAIN  # (the hub's clock is ~1.8e9 s: floats)
        end = (loop.now() + waited) / pings.GRAIN
        assert abs(end - round(end)) < 1e-6
