"""Two archivers sharing ARCHIVE_DIR: one writes, the other stands by and takes over when
the writer is SIGKILLed; the archive holds every notification once, in id order. And the
fence: a writer that lost the lease, or whose position is not where the archive ends,
writes nothing."""
import pytest

from app.stream.keys import STREAM
from app.stream.publish import Bus
from tests.support import SteadyPublisher, wait_until
from tests.workers.processes import WorkerProcesses, beats
from tests.workers.test_archiver import archived
from workers.archiver import LEASE_KEY, Archiver


def leader_pid(redis):
    holder = redis.get(LEASE_KEY)
    return int(holder.decode().split(":")[1]) if holder else None


def stream_ids(redis):
    return [entry_id.decode() for entry_id, _ in redis.xrange(STREAM)]


@pytest.mark.slow
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
        assert "writing the archive from" in second.output()
    assert [line["id"] for line in archived(folder)] == ids  # each once, in id order
    assert ids == publisher.accepted


def test_the_fence_stops_a_writer_that_lost_its_lease_or_its_place(redis, tmp_path):
    folder = tmp_path / "archive"
    bus = Bus(redis)
    ids = [bus.publish("arch.fence", f"f{i}") for i in range(30)]
    entries = redis.xrange(STREAM)
    paused = Archiver(redis, folder, lease=3)
    assert paused.lead()
    assert paused.store(entries[:10])
    # The writer pauses past its lease; another takes over and writes on.
    redis.delete(LEASE_KEY)
    successor = Archiver(redis, folder, lease=3)
    assert successor.lead() and successor.position == ids[9]
    assert successor.store(entries[10:20])
    # The paused one wakes with the next batch in hand: the lease is gone, so it
    # writes nothing and stands by.
    assert not paused.store(entries[10:15])
    assert not paused.leading
    assert [line["id"] for line in archived(folder)] == ids[:20]
    # A writer holding the lease whose position is not where the archive ends (as if
    # another wrote meanwhile) writes nothing and goes on from where the archive ends.
    successor.position = ids[14]
    assert not successor.store(entries[15:25])
    assert successor.position == ids[19]
    assert successor.store(entries[20:])
    assert [line["id"] for line in archived(folder)] == ids
