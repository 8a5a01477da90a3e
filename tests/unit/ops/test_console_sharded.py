"""The console's figures on a sharded history (STREAM_SHARDS=3): a consumer group's are
its shards' together, the newest notification is the newest of any shard, the archiver's
lag the greatest of its shards', and Spark outcomes are found in whichever shard."""
import time

from app.digests import store as digest_store
from app.ops import console
from app.stream.envelope import id_key
from app.stream.publish import Bus
from app.stream.shards import configured
from tests.unit.stream.test_groups_sharded import topic_per_shard


def test_a_group_is_summed_over_the_shards(sharded, redis):
    topics = topic_per_shard()
    digest_store.ensure_group(redis)
    bus = Bus(redis)
    for topic in topics:
        bus.publish(f"{topic}.x", "one")
        bus.publish(f"{topic}.x", "two")
    first, second = configured()[0], configured()[2]
    redis.xreadgroup(digest_store.GROUP, "digest-a", {first.stream: ">"}, count=2)
    redis.xreadgroup(digest_store.GROUP, "digest-b", {second.stream: ">"}, count=1)
    queue = console.group_queue(redis, digest_store.GROUP, time.time())
    assert queue["exists"] and queue["pending"] == 3 and queue["consumers"] == 1
    assert queue["lag"] == 0 + 2 + 1  # shard 1 read nothing, shard 2 one of two
    assert queue["oldest_pending_seconds"] >= 0
    redis.xgroup_destroy(configured()[1].stream, digest_store.GROUP)
    partial = console.group_queue(redis, digest_store.GROUP, time.time())
    assert not partial["exists"] and partial["pending"] == 3  # missing from a shard: said
    for shard in configured():
        redis.delete(shard.stream)
    assert console.group_queue(redis, digest_store.GROUP, 0) == console.ABSENT_GROUP


def test_the_newest_notification_and_the_archiver_lag_are_over_the_shards(sharded, redis):
    topics = topic_per_shard()
    bus = Bus(redis)
    ids = [bus.publish(f"{topic}.x", "n") for topic in topics]
    time.sleep(0.01)
    newest = bus.publish(f"{topics[1]}.x", "newest")
    beat = {"role": "archiver", "instance": "a:1", "alive": True,
            "details": {"leader": True, "position": newest, "positions": [ids[0], newest, None]}}
    figures = console.archiver([beat], redis, time.time())
    assert figures["newest"] == newest
    assert figures["lag_seconds"] > 0  # shard 2: nothing archived yet, its newest waits
    beat["details"]["positions"] = [ids[0], newest, ids[2]]
    assert console.archiver([beat], redis, time.time())["lag_seconds"] == 0.0
    assert id_key(newest) >= max(id_key(i) for i in ids)


def test_spark_outcomes_are_found_in_their_shard(sharded, redis):
    bus = Bus(redis)
    done = bus.publish_envelope({"topic": "spark.job.succeeded", "title": "Rollup done"})["id"]
    for topic in topic_per_shard():
        bus.publish(f"{topic}.x", "noise")
    runs = console.spark_runs(redis)
    assert [(run["id"], run["title"]) for run in runs] == [(done, "Rollup done")]
