"""app/stream/groups.py: where a consumer group is made again after its stream was deleted,
and the reader that does it (the workers' tests run it as processes:
tests/integration/workers/test_stream_deleted.py)."""
import logging
import threading

import pytest
import redis as redis_py

from app.stream import groups
from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.stream.shards import configured
from tests.redis_cluster import node_of
from tests.support import wait_until

GROUP = "herald:test-group"


def test_a_stream_known_deleted_gets_its_group_from_the_beginning(redis):
    """Recreated by a plain XADD (which sets no new epoch), the stream looks unchanged to
    the epoch check, which would make the group from now on and skip that entry; a worker
    that Redis told of the delete (UNBLOCKED) knows better."""
    shard = configured().of_topic("ops")  # shard 0 (herald:stream) with one shard
    Bus(redis).publish("ops.a", "old")
    assert groups.ensure(redis, GROUP, shard=shard) == "$"
    redis.delete(shard.stream)
    redis.xadd(shard.stream, {"envelope": b"{}"})
    assert groups.ensure(redis, GROUP, deleted=True, shard=shard) == "0"
    assert len(redis.xreadgroup(GROUP, "c", {shard.stream: ">"})[0][1]) == 1


def test_which_errors_mean_the_group_is_gone():
    gone = ["NOGROUP No such key 'herald:stream' or consumer group 'g' in XREADGROUP",
            "UNBLOCKED the stream key no longer exists",
            "UNBLOCKED the consumer group this client was blocked on no longer exists"]
    for text in gone:
        assert groups.missing(redis_py.ResponseError(text))
    assert not groups.missing(redis_py.ResponseError("WRONGTYPE Operation against a key"))


def test_a_read_waiting_on_a_deleted_stream_remakes_the_group_and_goes_on(redis, caplog):
    bus = Bus(redis)
    groups.ensure_all(redis, GROUP)
    restarts = []
    reader = groups.Reader(redis, GROUP, "c", 10, logging.getLogger("test"),
                           lambda: restarts.append(1))
    answers = []
    waiting = threading.Thread(target=lambda: answers.append(reader.read(">", 5000)))
    waiting.start()
    wait_until(lambda: any(c["cmd"] == "xreadgroup" and "b" in c["flags"]
                           for c in node_of(redis, STREAM).client_list()), message="the read waiting")
    redis.delete(STREAM)
    waiting.join(10)
    assert answers == [[]] and restarts == [1]
    assert "herald:stream was deleted while this worker waited on it" in caplog.text
    new = bus.publish("ops.b", "new")
    assert [entry_id.decode() for entry_id, _ in reader.read(">", 100)] == [new]


def test_other_errors_are_raised(redis):
    redis.set(STREAM, "not a stream")
    reader = groups.Reader(redis, GROUP, "c", 10, logging.getLogger("test"))
    with pytest.raises(redis_py.ResponseError, match="WRONGTYPE"):
        reader.read(">")
