"""workers/archive_reads.py: the archiver reads every shard of a sharded history past
its own position, by one XREAD on one Redis or by one per shard (as on a Redis Cluster,
where a command reaches one shard's slot only: forced here on one Redis), and waits
for something new on every shard."""
import threading
import time

import pytest

from app.stream.publish import Bus
from tests.helpers.archives import archived
from tests.helpers.shards import topic_per_shard
from tests.redis_cluster import ON_CLUSTER
from tests.support import wait_until
from workers import archive_reads
from workers.archiver import Archiver

WAYS = [pytest.param(False, marks=pytest.mark.skipif(
    ON_CLUSTER, reason="a cluster takes no XREAD of keys in several slots")), True]
WAY_IDS = ["one XREAD", "an XREAD per shard"]


def read_ids(redis, shards, positions):
    return {shard.index: [shard.public(entry_id) for entry_id, _ in entries]
            for shard, entries in archive_reads.read(redis, shards, positions)}


@pytest.mark.parametrize("per_shard", WAYS, ids=WAY_IDS)
def test_each_shard_is_read_past_its_own_position(sharded, redis, monkeypatch, per_shard):
    monkeypatch.setattr(archive_reads, "is_cluster", lambda client: per_shard)
    topics = topic_per_shard(sharded)
    bus = Bus(redis)
    ids = [[bus.publish(topic, f"{i}") for i in range(3)] for topic in topics]
    assert read_ids(redis, sharded, [None, ids[1][0], ids[2][-1]]) == {0: ids[0], 1: ids[1][1:]}
    newest = [shard_ids[-1] for shard_ids in ids]
    started = time.monotonic()
    assert read_ids(redis, sharded, newest) == {}  # nothing new: it waited for something
    assert 0.8 < time.monotonic() - started < 3
    late = []
    timer = threading.Timer(0.3, lambda: late.append(bus.publish(topics[2], "late")))
    timer.start()
    try:
        got = read_ids(redis, sharded, newest)
    finally:
        timer.join()
    assert got == {2: late}  # what came while it waited


@pytest.mark.parametrize("per_shard", WAYS, ids=WAY_IDS)
def test_the_archiver_writes_every_shard_once_each_under_its_ids(sharded, redis, tmp_path,
                                                                  monkeypatch, per_shard):
    monkeypatch.setattr(archive_reads, "is_cluster", lambda client: per_shard)
    folder = tmp_path / "archive"
    topics = topic_per_shard(sharded)
    bus = Bus(redis)
    ids = [[] for _ in topics]
    for i in range(40):
        for k, topic in enumerate(topics):
            if i < 10 * (k + 2):  # the shards unevenly
                ids[k].append(bus.publish(topic, f"{topic} {i}"))
    archiver = Archiver(redis, folder, lease=3)
    running = threading.Event()
    running.set()
    thread = threading.Thread(target=archiver.run, args=(running.is_set,))
    thread.start()
    try:
        wait_until(lambda: archiver.positions == [k[-1] for k in ids], timeout=10,
                   message="every shard archived")
        more = bus.publish(topics[1], "after")
        wait_until(lambda: archiver.positions[1] == more, timeout=5, message="one more")
        details = archiver.details()
    finally:
        running.clear()
        thread.join(10)
    ids[1].append(more)
    for k in range(3):
        assert [line["id"] for line in archived(folder, shard=k)] == ids[k]
    assert details["positions"] == [k[-1] for k in ids] and details["position"] == more
    # Another writer takes each shard's position from that shard's files.
    successor = Archiver(redis, folder, lease=3)
    assert successor.lead() and successor.positions == [k[-1] for k in ids]
