"""The digest workers' consumer group when ``herald:stream`` (the stream of the shard the
notifications are in, with several) is recreated: it starts from the beginning of the new
stream, so nothing published after the recreate is skipped."""
from app.digests import store, windows
from app.digests.collect import Collector
from app.stream.publish import Bus
from app.stream.shards import configured
from app.users import accounts


def collected(redis, record):
    return sum(windows.read(redis, record["id"], float(w))[2]
               for w in redis.zrange(windows.windows_key(record["id"]), 0, -1))


def drain(collector):
    for _ in range(5):
        collector.step(block_ms=10)


def test_what_is_published_after_a_recreate_is_collected(redis):
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    record = store.create(redis, "ada", {"email": "ada@example.com", "topics": ["ops"],
                                          "schedule": "daily@08:00"})
    bus, collector = Bus(redis), Collector(redis, consumer="digest-a", claim_idle=30)
    bus.publish("ops.a", "before")
    drain(collector)
    assert collected(redis, record) == 1
    redis.delete(configured().of_topic("ops").stream)
    for i in range(3):
        bus.publish("ops.b", f"after {i}")
    drain(collector)
    assert collected(redis, record) == 4


def test_tidying_while_the_stream_is_deleted_goes_on(redis):
    """The minute's tidy (XINFO CONSUMERS in a script) on a deleted stream raised 'no such
    key', which ended the worker: now there is simply nothing to tidy."""
    from app.digests.worker import Worker
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    record = store.create(redis, "ada", {"email": "ada@example.com", "topics": ["ops"],
                                          "schedule": "daily@08:00"})
    worker = Worker(redis, None, "http://herald.test/", consumer="digest-a",
                    claim_idle=30)
    Bus(redis).publish("ops.a", "before")
    worker.step(block_ms=10)
    redis.delete(configured().of_topic("ops").stream)
    worker.tidy()
    assert worker.pending == 0
    Bus(redis).publish("ops.b", "after")
    drain(worker.collector)
    assert collected(redis, record) == 2
