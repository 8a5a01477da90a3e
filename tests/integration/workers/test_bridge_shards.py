"""The ZeroMQ bridge on a sharded history (app/stream/shards.py): its egress follows
every shard (a LiveFollower each) onto the one XPUB, and its ingest stores a batch
spanning shards, each notification in its own shard, answered its id there."""
import json

import orjson
import pytest
import zmq

from app.stream.publish import Bus
from herald_client.zmq import Publisher, Subscriber
from tests.helpers.shards import topic_per_shard
from tests.support import Bridge, wait_until


@pytest.fixture
def bridge(sharded, redis_server, redis, tmp_path):
    running = Bridge(redis_server.url, tmp_path)
    running.start()
    yield running
    running.stop()


def through(subscriber, bus, topic):
    """Publish on ``topic`` until one comes through: the subscription reached the XPUB
    and the shard's follower is following, so nothing published from now on is missed."""
    for attempt in range(200):
        sent = bus.publish(topic, f"ready {attempt}")
        received = subscriber.receive(timeout=0.05)
        if received is not None:
            while received["id"] != sent:  # an earlier attempt's, late
                received = subscriber.receive(timeout=5)
            return
    raise AssertionError(f"the egress never delivered {topic}")


def stored(redis, shard):
    return [(shard.public(entry_id), orjson.loads(fields[b"envelope"]))
            for entry_id, fields in redis.xrange(shard.stream)]


def test_the_egress_carries_every_shards_notifications(sharded, bridge, redis):
    topics = topic_per_shard(sharded)
    bus = Bus(redis)
    with Subscriber(["*"], bridge.xpub) as subscriber:
        for topic in topics:
            through(subscriber, bus, topic)
        sent = [bus.publish(topics[i % 3], f"n{i}", data={"i": i}) for i in range(90)]
        got = [subscriber.receive(timeout=10) for _ in sent]
        assert subscriber.receive(timeout=0.3) is None  # each once
    assert None not in got
    assert sorted(e["id"] for e in got) == sorted(sent)
    for k, topic in enumerate(topics):  # in order within each shard
        assert [e["id"] for e in got if e["topic"] == topic] == sent[k::3]
        assert all(i.endswith(sharded[k].suffix) for i in sent[k::3])


def test_the_ingest_stores_each_notification_in_its_shard(sharded, bridge, redis):
    topics = topic_per_shard(sharded)
    with Publisher(bridge.router, confirmed=True) as publisher:
        confirmed = [publisher.publish(topics[i % 3], f"c{i}") for i in range(9)]
    for k, shard in enumerate(sharded):
        assert [i for i, _ in stored(redis, shard)] == confirmed[k::3]
    push = zmq.Context.instance().socket(zmq.PUSH)
    try:
        push.connect(bridge.pull)
        for i in range(300):  # batched: each batch spans the shards
            push.send_multipart([topics[i % 3].encode(),
                                 json.dumps({"title": f"p{i}", "data": {"i": i}}).encode()])
        wait_until(lambda: sum(redis.xlen(s.stream) for s in sharded) == 309, timeout=30,
                   message="the 300 pushed stored")
    finally:
        push.close(0)
    for k, shard in enumerate(sharded):
        pushed = [e["data"]["i"] for _, e in stored(redis, shard) if e["title"].startswith("p")]
        assert pushed == list(range(k, 300, 3)), f"shard {k}: each in its shard, in order"
