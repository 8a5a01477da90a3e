"""A ``kind: "data"`` event goes out of the ZeroMQ bridge's egress unchanged, and may
come in through its ingest."""
import pytest

from app.stream.publish import Bus
from herald_client.zmq import Publisher, PublishError, Subscriber
from tests.support import Bridge


@pytest.fixture
def bridge(redis_server, redis, tmp_path):
    running = Bridge(redis_server.url, tmp_path)
    running.start()
    yield running
    running.stop()


def first_through(subscriber, bus):
    """Publish alerts until one comes through: the subscription has reached the XPUB
    (ZeroMQ's slow joiner), so nothing published from now on is missed."""
    for attempt in range(200):
        sent = bus.publish("board.ready", f"ready {attempt}")
        received = subscriber.receive(timeout=0.05)
        if received is not None:
            while received["id"] != sent:  # an earlier attempt's, late
                received = subscriber.receive(timeout=5)
            return
    raise AssertionError("the egress never delivered")


def test_the_egress_carries_data_events(bridge, redis):
    bus = Bus(redis)
    with Subscriber(["board"], bridge.xpub) as subscriber:
        first_through(subscriber, bus)
        data = bus.publish("board.card.7", "Card 7", kind="data", data={"id": 7, "kind": "x"})
        alert = bus.publish("board.card.7", "Card 7 was archived")
        got = [subscriber.receive(timeout=5) for _ in range(2)]
    assert [e["id"] for e in got] == [data, alert]
    assert list(got[0])[:2] == ["id", "kind"] and got[0]["kind"] == "data"
    assert got[0]["data"] == {"id": 7, "kind": "x"} and "kind" not in got[1]


def test_the_ingest_takes_kind_and_refuses_a_bad_one(bridge, redis):
    with Publisher(bridge.router, confirmed=True) as publisher:
        entry_id = publisher.publish("board.card.7", "Card 7", kind="data")
        with pytest.raises(PublishError, match="kind: must be alert or data"):
            publisher.publish("board.card.7", "Card 7", kind="record")
    [(stored_id, fields)] = redis.xrange("herald:stream")
    assert stored_id.decode() == entry_id
    assert fields[b"envelope"].startswith(b'{"kind":"data",')
