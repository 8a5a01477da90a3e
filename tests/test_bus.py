"""Publishing (app.bus): history and live copy written in one step, with the same id."""
import re

import orjson
import pytest

from app.bus import LIVE, STREAM, Bus, BusUnavailable
from app.notifications import EnvelopeError
from app.redis_client import connect
from tests.support import free_port, wait_until

TS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\Z")


@pytest.fixture
def bus(redis):
    return Bus(redis, history_max=1000)


def test_publish_writes_stream_and_live_with_the_same_id(redis, bus):
    live = redis.pubsub(ignore_subscribe_messages=True)
    live.subscribe(LIVE)
    wait_until(lambda: redis.pubsub_numsub(LIVE)[0][1] == 1, message="subscription")

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
