"""A last_id from a stream that was deleted or replaced since is not recoverable.

The stream's epoch (app/stream/publish.py) is the id of its first entry ever; replay
from a last_id older than that could miss nothing only by luck, so the
server says ``reset`` and ``replayed`` with ``recovered: false``.
"""
from app.stream import state
from app.stream.keys import EPOCH, STREAM
from app.stream.publish import Bus


def test_the_publish_that_creates_the_stream_sets_its_epoch(redis):
    bus = Bus(redis)
    first = bus.publish("news.a", "first")
    bus.publish("news.a", "second")
    assert redis.get(EPOCH).decode() == first
    redis.delete(STREAM)
    again = bus.publish_envelopes([{"topic": "news.a", "title": "after"}])[0]["notifications"][0]["id"]
    assert redis.get(EPOCH).decode() == again


def test_a_last_id_from_before_the_epoch_is_missed_history(redis):
    bus = Bus(redis)
    old = bus.publish("news.a", "in the old stream")
    assert not state.missed_history(redis, old)
    redis.delete(STREAM)
    # At once: a stream made anew in the same millisecond goes on above the old ids
    # (tests/unit/stream/test_recreate_ids.py), so its epoch is past ``old`` all the same.
    bus.publish("news.a", "in the new stream")
    # Without the epoch this looked whole: nothing was trimmed from the new stream.
    assert state.missed_history(redis, old)
    assert not state.missed_history(redis, "0")
