"""The archiver's fence, step by step in one process: a writer that lost the lease, or whose
position is not where the archive ends, writes nothing (two archiver processes, one killed:
tests/integration/workers/test_archiver_failover.py)."""
from app.stream.publish import Bus
from app.stream.shards import configured as configured_shards
from tests.helpers.archives import archived
from workers.archiver import LEASE_KEY, Archiver


def test_the_fence_stops_a_writer_that_lost_its_lease_or_its_place(redis, tmp_path):
    folder = tmp_path / "archive"
    bus = Bus(redis)
    ids = [bus.publish("arch.fence", f"f{i}") for i in range(30)]
    shard = configured_shards().of_topic("arch.fence")  # (its shard, in a sharded history)
    entries = redis.xrange(shard.stream)
    paused = Archiver(redis, folder, lease=3)
    assert paused.lead()
    assert paused.store(entries[:10], shard)
    # The writer pauses past its lease; another takes over and writes on.
    redis.delete(LEASE_KEY)
    successor = Archiver(redis, folder, lease=3)
    assert successor.lead() and successor.position == ids[9]
    assert successor.store(entries[10:20], shard)
    # The paused one wakes with the next batch in hand: the lease is gone, so it
    # writes nothing and stands by.
    assert not paused.store(entries[10:15], shard)
    assert not paused.leading
    assert [line["id"] for line in archived(folder)] == ids[:20]
    # A writer holding the lease whose position is not where the archive ends (as if
    # another wrote meanwhile) writes nothing and goes on from where the archive ends.
    successor.position = ids[14]
    assert not successor.store(entries[15:25], shard)
    assert successor.position == ids[19]
    assert successor.store(entries[20:], shard)
    assert [line["id"] for line in archived(folder)] == ids
