"""The webhook dispatcher on a sharded history (STREAM_SHARDS=3): the group is made in every
shard, notifications of every shard are queued under their notification ids and each is
acknowledged in its own shard, and a death between the fan-out and the XACKs queues
nothing twice."""
import orjson
import pytest

from app.stream.publish import Bus
from app.stream.shards import configured
from app.webhooks import layout, store
from app.webhooks.dispatch import Dispatcher
from tests.unit.stream.test_groups_sharded import topic_per_shard
from tests.unit.webhooks.test_dispatch import drain, queued_ids


@pytest.fixture
def topics(sharded, redis):
    return topic_per_shard()


def endpoint(redis, topics):
    return store.create(redis, {"url": "http://127.0.0.1:9/", "topics": topics}, "test")["id"]


def pending(redis):
    return [redis.xpending(shard.stream, store.GROUP)["pending"] for shard in configured()]


def test_an_endpoint_makes_the_group_in_every_shard(topics, redis, allow_loopback):
    endpoint(redis, topics)
    for shard in configured():
        assert [g["name"] for g in redis.xinfo_groups(shard.stream)] == [store.GROUP.encode()]


def test_notifications_of_every_shard_are_queued_and_acknowledged_in_their_own(
        topics, redis, allow_loopback):
    endpoint_id = endpoint(redis, topics)
    bus, dispatcher = Bus(redis), Dispatcher(redis)
    published = [bus.publish(f"{topic}.x", f"in {topic}") for topic in topics]
    assert [configured().locate(i)[0].index for i in published] == [0, 1, 2]
    drain(dispatcher)
    assert queued_ids(redis, endpoint_id) == published  # by time
    bodies = [orjson.loads(item.split(b" ", 1)[1])
              for item in redis.lrange(store.queue_key(endpoint_id), 0, -1)]
    assert [body["id"] for body in bodies] == published
    assert pending(redis) == [0, 0, 0] and redis.zcard(layout.DISPATCHED) == 0
    assert dispatcher.dispatched == 3


def test_a_death_before_the_xacks_queues_nothing_twice(topics, redis, allow_loopback):
    endpoint_id = endpoint(redis, topics)
    bus, dying = Bus(redis), Dispatcher(redis)
    drain(dying)
    published = [bus.publish(f"{topic}.x", f"in {topic}") for topic in topics]
    dying._acknowledge = lambda entry_ids: None  # it dies before its XACKs
    dying.step(block_ms=10)
    assert queued_ids(redis, endpoint_id) == published and pending(redis) == [1, 1, 1]
    restarted = Dispatcher(redis)  # reads its pending entries, every shard's, first
    drain(restarted)
    assert queued_ids(redis, endpoint_id) == published
    assert pending(redis) == [0, 0, 0] and redis.zcard(layout.DISPATCHED) == 0
    assert restarted.dispatched == 0
