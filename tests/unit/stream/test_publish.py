"""Publishing (app.stream.publish): history and live copy written in one step, with the same id."""
import re

import orjson
import pytest

from app.redis_client import connect
from app.stream.envelope import EnvelopeError
from app.stream.keys import LIVE, ONCE, STREAM
from app.stream.publish import Bus, BusUnavailable
from tests.redis_cluster import subscribers
from tests.support import free_port, wait_until

TS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\Z")


@pytest.fixture
def bus(redis):
    return Bus(redis, history_max=1000)


def test_publish_writes_stream_and_live_with_the_same_id(redis, bus):
    live = redis.pubsub(ignore_subscribe_messages=True)
    live.subscribe(LIVE)
    wait_until(lambda: subscribers(redis, LIVE) == 1, message="subscription")

    published = bus.publish_envelope({"topic": "ops.deploy", "title": "Deployed",
                                      "user": "ann", "data": {"build": 7}})

    assert TS_RE.match(published["ts"])
    [(entry_id, fields)] = redis.xrange(STREAM)
    assert entry_id.decode() == published["id"]
    assert fields[b"topic"] == b"ops.deploy"
    assert fields[b"user"] == b"ann"
    stored = orjson.loads(fields[b"envelope"])
    assert "id" not in stored and stored["ts"] == published["ts"]

    message = wait_until(lambda: live.get_message(timeout=0.1), message="live copy")
    envelope = orjson.loads(message["data"])
    assert envelope == dict(stored, id=published["id"])
    assert list(envelope)[0] == "id"
    live.close()


def test_ids_increase_in_publish_order(bus):
    ids = [bus.publish("load.test", f"n{i}") for i in range(50)]
    keys = [tuple(map(int, i.split("-"))) for i in ids]
    assert keys == sorted(keys) and len(set(ids)) == 50


def test_invalid_envelope_writes_nothing(redis, bus):
    with pytest.raises(EnvelopeError) as caught:
        bus.publish_envelope({"topic": "Bad Topic", "title": "x"})
    assert caught.value.field == "topic"
    assert redis.xlen(STREAM) == 0


def test_history_is_trimmed_near_history_max(redis):
    bus = Bus(redis, history_max=100)
    for i in range(1000):
        bus.publish("load.trim", f"n{i}")
    # Approximate trimming keeps at least the bound, and not much more.
    assert 100 <= redis.xlen(STREAM) <= 300


def test_unreachable_redis_raises_bus_unavailable():
    bus = Bus(connect(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=0.5))
    with pytest.raises(BusUnavailable, match="Redis is unreachable"):
        bus.publish("ops.x", "never stored")


def test_a_batch_is_written_all_in_order_or_not_at_all(redis, bus):
    published, replayed = bus.publish_envelopes(
        [{"topic": "ops.a", "title": "one"}, {"topic": "ops.b", "title": "two", "user": "ann"}])
    assert not replayed
    ids = [n["id"] for n in published["notifications"]]
    assert [entry_id.decode() for entry_id, _ in redis.xrange(STREAM)] == ids
    with pytest.raises(EnvelopeError, match=r"notifications\[1\]\.topic: "):
        bus.publish_envelopes([{"topic": "ops", "title": "fine"}, {"topic": "Bad", "title": "x"}])
    with pytest.raises(EnvelopeError, match="notifications: must be a list of 1-100"):
        bus.publish_envelopes([])
    with pytest.raises(EnvelopeError, match="notifications: must be a list of 1-100"):
        bus.publish_envelopes([{"topic": "ops", "title": "x"}] * 101)
    assert redis.xlen(STREAM) == 2


def test_a_batch_under_an_idempotency_key_is_stored_once(redis, bus):
    batch = [{"topic": "ops", "title": f"n{i}"} for i in range(3)]
    first, replayed = bus.publish_envelopes(batch, "job-7")
    again, replayed_again = bus.publish_envelopes(batch, "job-7")
    assert (replayed, replayed_again) == (False, True) and again == first
    assert redis.xlen(STREAM) == 3
    from app.stream.publish import IdempotencyConflict
    with pytest.raises(IdempotencyConflict):
        bus.publish_envelopes(batch[:2], "job-7")


def test_a_key_stored_before_batches_existed_is_still_understood(redis, bus):
    """Keys live a day: one written by the previous release ("id ts fingerprint")
    must answer its publish, not store it twice, across an upgrade."""
    import hashlib

    from app.stream.envelope import validate
    from app.stream.publish import fingerprint
    clean = validate({"topic": "ops", "title": "old"})
    key = ONCE + hashlib.sha256(b"old-key").hexdigest()
    redis.set(key, f"1700000000000-0 2023-11-14T22:13:20.000Z {fingerprint(clean)}")
    answer = bus.publish_envelope({"topic": "ops", "title": "old"}, "old-key")
    assert answer == {"id": "1700000000000-0", "ts": "2023-11-14T22:13:20.000Z", "replayed": True}
    assert redis.xlen(STREAM) == 0
