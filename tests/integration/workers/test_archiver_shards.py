"""The archiver, as a process, on a sharded history (app/stream/shards.py): every
shard's notifications archived exactly once, each shard in its own files under its
notification ids, and after a kill each shard resumed from its own last line."""
from app.stream.publish import Bus
from tests.helpers.archives import archived
from tests.helpers.shards import topic_per_shard
from tests.integration.workers.processes import WorkerProcesses
from tests.support import wait_until


def publish(bus, topics, counts, tag):
    """``counts[k]`` notifications on ``topics[k]``, the shards interleaved."""
    sent = [[] for _ in topics]
    for i in range(max(counts)):
        for k, topic in enumerate(topics):
            if i < counts[k]:
                sent[k].append(bus.publish(topic, f"{tag} {i}", data={"i": i}))
    return sent


def test_every_shard_archived_once_and_resumed_per_shard_after_a_kill(
        sharded, redis_server, redis, tmp_path):
    topics = topic_per_shard(sharded)
    assert [sharded.of_topic(t).index for t in topics] == [0, 1, 2]
    folder = tmp_path / "archive"
    env = {"ARCHIVE_DIR": str(folder), "ARCHIVER_LEASE": "3"}
    bus = Bus(redis)
    first = publish(bus, topics, [150, 100, 50], "first")
    with WorkerProcesses(redis_server.url, tmp_path) as start:
        worker = start("workers.archiver", **env)
        wait_until(lambda: len(archived(folder)) == 300, timeout=30, message="300 archived")
        worker.kill()
        # While it is down: shard 2 gets none, the others some (and a private one).
        second = publish(bus, topics[:2], [20, 60], "second") + [[]]
        private = bus.publish(topics[0], "private", user="ann")
        user_shard = sharded.of_user("ann").index
        second[user_shard].append(private)
        restarted = start("workers.archiver", **env)
        wait_until(lambda: len(archived(folder)) == 381, timeout=30, message="381 archived")
        wait_until(lambda: "writing the archive from" in restarted.output(), timeout=10)
        resumed = restarted.output()
    for k in range(len(sharded)):
        lines = archived(folder, shard=k)
        assert [line["id"] for line in lines] == first[k] + second[k], f"shard {k}"
        assert f"shard {k} from {first[k][-1]}" in resumed  # its own position, from its files
    assert archived(folder, shard=user_shard)[-1]["user"] == "ann"
    assert {p.name for p in folder.glob("date=*/*.jsonl")} == {
        "notifications.jsonl", "notifications-1.jsonl", "notifications-2.jsonl"}
