"""app/stream/groups.py on a sharded history (STREAM_SHARDS=3): a group is made in every
shard's stream, the reader reads them all (one XREADGROUP per shard; a waiting read wakes
for whichever shard gets something first), hands entries on under their notification ids,
and each is acknowledged in its own shard."""
import logging
import threading
import time

import pytest
import redis as redis_py

from app.stream import groups
from app.stream.envelope import id_key
from app.stream.publish import Bus
from app.stream.shards import configured
from tests.redis_cluster import node_of
from tests.support import wait_until

GROUP = "herald:test-group"
CANDIDATES = ["billing", "ops", "alerts", "build", "deploy", "news", "jobs", "chat", "data"]


def topic_per_shard():
    """A topic (its first segment) in each shard, in shard order."""
    shards, found = configured(), {}
    for topic in CANDIDATES:
        found.setdefault(shards.of_topic(topic).index, topic)
    assert len(found) == len(shards), "the candidates do not cover every shard"
    return [found[k] for k in range(len(shards))]


def reader(redis, count=10, restarts=None):
    return groups.Reader(redis, GROUP, "c", count, logging.getLogger("test"),
                         (lambda: restarts.append(1)) if restarts is not None else lambda: None)


def pending(redis, shard):
    return redis.xpending(shard.stream, GROUP)["pending"]


def waiting_reads(redis):
    """The connections blocked in an XREADGROUP, on every node that holds a shard."""
    nodes = {id(node_of(redis, shard.stream)): node_of(redis, shard.stream)
             for shard in configured()}
    return [c for node in nodes.values() for c in node.client_list()
            if c["cmd"] == "xreadgroup" and "b" in c["flags"]]


def test_a_group_is_made_in_every_shard_with_its_own_keys(sharded, redis):
    assert len(sharded) == 3
    assert groups.ensure_all(redis, GROUP) == ["new stream"] * 3
    for shard in sharded:
        assert [g["name"] for g in redis.xinfo_groups(shard.stream)] == [GROUP.encode()]
        assert redis.get(shard.group_epoch(GROUP)) == redis.get(shard.epoch) is not None
    assert groups.ensure_all(redis, GROUP) == ["exists"] * 3


def test_the_reader_reads_every_shard_and_each_entry_is_acknowledged_in_its_own(sharded, redis):
    topics = topic_per_shard()
    groups.ensure_all(redis, GROUP)
    bus = Bus(redis)
    published = [bus.publish(f"{topic}.x", f"in shard {k}") for k, topic in enumerate(topics)]
    assert [configured().locate(i)[0].index for i in published] == [0, 1, 2]
    read = reader(redis).read(">")
    assert [entry_id.decode() for entry_id, _ in read] == published  # by time
    assert all(fields[b"envelope"] for _, fields in read)
    assert [pending(redis, shard) for shard in sharded] == [1, 1, 1]
    assert reader(redis).read("0") == read  # our own pending entries, every shard's
    assert groups.ack(redis, GROUP, [entry_id for entry_id, _ in read]) == 3
    assert [pending(redis, shard) for shard in sharded] == [0, 0, 0]
    assert reader(redis).read("0") == [] and reader(redis).read(">") == []


def test_a_busy_shard_does_not_starve_the_others(sharded, redis):
    """``count`` is per shard: a read takes up to that many from each."""
    busy, quiet, _ = topic_per_shard()
    groups.ensure_all(redis, GROUP)
    bus = Bus(redis)
    many = [bus.publish(f"{busy}.x", f"n{i}") for i in range(5)]
    one = bus.publish(f"{quiet}.x", "one")
    read = [entry_id.decode() for entry_id, _ in reader(redis, count=2).read(">", 100)]
    assert sorted(read, key=id_key) == read
    assert set(read) == {*many[:2], one}


def test_a_waiting_read_wakes_for_any_shard_and_leaves_no_wait_behind(sharded, redis):
    last = topic_per_shard()[-1]
    groups.ensure_all(redis, GROUP)
    answers = []
    waiting = threading.Thread(target=lambda: answers.append(reader(redis).read(">", 10000)))
    waiting.start()
    wait_until(lambda: len(waiting_reads(redis)) == 3, message="a read waiting on each shard")
    started = time.monotonic()
    published = Bus(redis).publish(f"{last}.x", "wakes it")
    waiting.join(10)
    assert time.monotonic() - started < 2  # not the whole 10 s
    assert [[entry_id.decode() for entry_id, _ in answer] for answer in answers] == [[published]]
    wait_until(lambda: not waiting_reads(redis), message="the other shards' waits ended")


def test_a_waiting_read_rides_out_the_deletion_of_one_shard(sharded, redis, caplog):
    shard = configured()[2]
    topic = topic_per_shard()[2]
    groups.ensure_all(redis, GROUP)
    restarts, answers = [], []
    one = reader(redis, restarts=restarts)
    waiting = threading.Thread(target=lambda: answers.append(one.read(">", 10000)))
    waiting.start()
    wait_until(lambda: len(waiting_reads(redis)) == 3, message="a read waiting on each shard")
    redis.delete(shard.stream)
    waiting.join(10)
    assert answers == [[]] and restarts == [1]
    assert f"{shard.stream} was deleted while this worker waited on it" in caplog.text
    assert [g["name"] for g in redis.xinfo_groups(shard.stream)] == [GROUP.encode()]
    new = Bus(redis).publish(f"{topic}.x", "after")
    assert [entry_id.decode() for entry_id, _ in one.read(">", 100)] == [new]


def test_a_group_gone_from_one_shard_is_remade_there_only(sharded, redis, caplog):
    groups.ensure_all(redis, GROUP)
    shard = configured()[1]
    redis.xgroup_destroy(shard.stream, GROUP)
    restarts = []
    assert reader(redis, restarts=restarts).read("0") == []
    assert restarts == [1]
    assert caplog.text.count("the group is made again") == 1
    assert f"({shard.stream} was deleted or recreated" in caplog.text


@pytest.mark.single_redis("an ACL user made on the one test Redis")
def test_without_client_unblock_the_other_shards_are_waited_out(sharded, redis_server, redis):
    """An ACL user without CLIENT (ID, UNBLOCK): the reads that did not answer are left to
    their BLOCK timeout; slower, and nothing is lost or left on a connection."""
    redis.acl_setuser("herald-noclient", enabled=True, passwords=["+pw"], keys=["*"],
                      channels=["*"], commands=["+@all", "-client"])
    limited = redis_py.Redis.from_url(redis_server.url, username="herald-noclient",
                                      password="pw")
    try:
        last = topic_per_shard()[-1]
        groups.ensure_all(limited, GROUP)
        answers = []
        one = reader(limited)
        waiting = threading.Thread(target=lambda: answers.append(one.read(">", 1000)))
        waiting.start()
        wait_until(lambda: len(waiting_reads(redis)) == 3, message="a read waiting on each shard")
        published = Bus(redis).publish(f"{last}.x", "wakes it")
        waiting.join(10)
        assert [[entry_id.decode() for entry_id, _ in answer] for answer in answers] == [[published]]
        assert not waiting_reads(redis)  # waited out, not left behind
        assert one.read(">", 100) == []
    finally:
        limited.close()
        redis.acl_deluser("herald-noclient")
