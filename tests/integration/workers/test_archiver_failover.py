"""Two archivers sharing ARCHIVE_DIR: one writes, the other stands by and takes over when
the writer is SIGKILLed; the archive holds every notification once, in id order (the
fence that keeps a writer that lost the lease from writing, step by step:
tests/unit/workers/test_archiver_fence.py)."""

from app.stream.publish import Bus
from tests.helpers.archives import archived
from tests.helpers.shards import history
from tests.integration.workers.processes import WorkerProcesses, beats
from tests.support import SteadyPublisher, wait_until
from workers.archiver import LEASE_KEY


def leader_pid(redis):
    holder = redis.get(LEASE_KEY)
    return int(holder.decode().split(":")[1]) if holder else None


def stream_ids(redis):
    return [entry_id for entry_id, _ in history(redis)]


def test_the_standby_takes_over_from_a_killed_writer(redis_server, redis, tmp_path):
    folder = tmp_path / "archive"
    bus = Bus(redis)
    publisher = SteadyPublisher(lambda title: bus.publish("arch.failover", title), interval=0.005)
    env = {"ARCHIVE_DIR": str(folder), "ARCHIVER_LEASE": "3"}
    with WorkerProcesses(redis_server.url, tmp_path) as start:
        first = start("workers.archiver", **env)
        wait_until(lambda: leader_pid(redis) == first.pid, timeout=10, message="a writer")
        second = start("workers.archiver", **env)
        publisher.start()
        try:
            wait_until(lambda: len(archived(folder)) > 200, timeout=30, message="archiving")
            standby = beats(redis, "archiver")
            assert sorted(b["details"]["leader"] for b in standby.values()) == [False, True]
            first.kill()  # the writer, mid-stream
            wait_until(lambda: leader_pid(redis) == second.pid, timeout=15,
                       message="the standby to take the lapsed lease")
            written = len(archived(folder))
            wait_until(lambda: len(archived(folder)) > written + 200, timeout=30,
                       message="the new writer archiving")
        finally:
            publisher.stop()
        ids = stream_ids(redis)
        wait_until(lambda: len(archived(folder)) >= len(ids), timeout=30,
                   message="everything archived")
        def beat_of_the_second():
            [beat] = [b for b in beats(redis, "archiver").values()
                      if b["instance"].endswith(f":{second.pid}")]
            return beat["details"]
        wait_until(lambda: beat_of_the_second()["position"] == ids[-1], timeout=10,
                   message=f"the new writer's heartbeat: {beat_of_the_second()}")
        assert beat_of_the_second()["leader"]
        wait_until(lambda: "writing the archive from" in second.output(), timeout=10,
                   message="the new writer saying so")
    assert [line["id"] for line in archived(folder)] == ids  # each once, in id order
    assert ids == publisher.accepted
