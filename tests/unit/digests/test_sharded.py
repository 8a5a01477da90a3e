"""The digest workers on a sharded history (STREAM_SHARDS=3): the group is made in every
shard, notifications of every shard are collected and each is acknowledged in its own
shard, and what a dead worker left pending in any shard is taken over."""
import time

import pytest

from app.digests import store, windows
from app.digests.collect import GROUP, Collector, collected_key
from app.digests.consumers import Claimer
from app.stream.publish import Bus
from app.stream.shards import configured
from app.users import accounts
from tests.unit.stream.test_groups_sharded import topic_per_shard


@pytest.fixture
def topics(sharded, redis):
    """A topic in each of the 3 shards, and ada with a digest of all three."""
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    return topic_per_shard()


def subscribe(redis, topics):
    return store.create(redis, "ada", {"email": "ada@example.com", "topics": topics,
                                       "schedule": "daily@08:00"})


def collected_ids(redis, record):
    return sorted(item["id"] for w in redis.zrange(windows.windows_key(record["id"]), 0, -1)
                  for item in windows.read(redis, record["id"], float(w))[1])


def pending(redis):
    return [redis.xpending(shard.stream, GROUP)["pending"] for shard in configured()]


def drain(collector):
    while collector.step(block_ms=10):
        pass


def test_a_subscription_makes_the_group_in_every_shard(topics, redis):
    subscribe(redis, topics)
    for shard in configured():
        assert [g["name"] for g in redis.xinfo_groups(shard.stream)] == [GROUP.encode()]


def test_notifications_of_every_shard_are_collected_and_acknowledged_in_their_own(topics, redis):
    record = subscribe(redis, topics)
    bus, collector = Bus(redis), Collector(redis, consumer="digest-a", claim_idle=30)
    published = [bus.publish(f"{topic}.x", f"in {topic}") for topic in topics]
    assert sorted(configured().locate(i)[0].index for i in published) == [0, 1, 2]
    drain(collector)
    assert collector.collected == 3
    assert collected_ids(redis, record) == sorted(published)
    assert all(redis.exists(collected_key(i)) for i in published)  # the notification's own
    assert pending(redis) == [0, 0, 0]


def test_what_a_dead_worker_left_pending_in_any_shard_is_taken_over(topics, redis):
    record = subscribe(redis, topics)
    bus = Bus(redis)
    published = [bus.publish(f"{topic}.x", f"in {topic}") for topic in topics]
    for shard in configured():  # the dead worker read every shard, collected nothing
        redis.xreadgroup(GROUP, "digest-dead", {shard.stream: ">"})
    assert pending(redis) == [1, 1, 1]
    time.sleep(0.2)
    peer = Collector(redis, consumer="digest-b", claim_idle=0.1)
    drain(peer)
    assert peer.claimed == 3 and peer.collected == 3
    assert collected_ids(redis, record) == sorted(published)
    assert pending(redis) == [0, 0, 0]


def test_stale_consumer_names_go_from_every_shard_where_they_hold_nothing(topics, redis):
    subscribe(redis, topics)
    holder_shard = configured().of_topic(topics[2])
    Bus(redis).publish(f"{topics[2]}.x", "held")
    redis.xreadgroup(GROUP, "digest-holder", {holder_shard.stream: ">"})
    for shard in configured():
        redis.xgroup_createconsumer(shard.stream, GROUP, "digest-gone")
        redis.xgroup_createconsumer(shard.stream, GROUP, "digest-me")
    time.sleep(0.1)
    mine, deleted = Claimer(redis, "digest-me", 30).forget_stale(idle=0.05)
    assert (mine, deleted) == (0, ["digest-gone"])
    for shard in configured():
        names = {c["name"] for c in redis.xinfo_consumers(shard.stream, GROUP)}
        if shard == holder_shard:
            assert names == {b"digest-holder", b"digest-me"}
        else:  # nothing pending there: its name goes from this shard's group
            assert names == {b"digest-me"}
