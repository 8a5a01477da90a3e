"""Read state, archive and snooze in a sharded history (app/stream/shards.py): an id
``<ms>-<seq>-<k>`` is kept as it is (its shard too), and is bounded by the newest
notification of its own shard: one above it was never given, even when another shard
has newer ones."""
import time

import pytest

from app.stream.envelope import id_key
from app.stream.publish import Bus
from app.users import archive_and_snooze, read_state
from tests.helpers.shards import in_shard, topic_per_shard
from tests.support import wait_until


def redis_ms(redis):
    seconds, micros = redis.time()
    return seconds * 1000 + micros // 1000


@pytest.fixture
def history(sharded, redis):
    """Shard 1's newest notification, then (a later millisecond) shard 2's; and an id
    in shard 1 of that later time: not above the newest of all, but above shard 1's."""
    topics = topic_per_shard(sharded)
    bus = Bus(redis)
    early = bus.publish(topics[1], "shard 1's newest")
    wait_until(lambda: redis_ms(redis) > id_key(early)[0] + 1, message="a later millisecond")
    later = bus.publish(topics[2], "shard 2's newest")
    assert early.endswith("-1") and later.endswith("-2")
    return early, later, in_shard(later, 1)


def test_members_keep_the_shard():
    for entry_id in ("5-1", "5-1-2", "1700000000000-12-63"):
        assert read_state.unpad(read_state.pad(entry_id)) == entry_id
    assert read_state.pad("5-1") < read_state.pad("5-1-2") < read_state.pad("5-2")


def test_read_state_takes_ids_of_any_shard_up_to_that_shards_newest(history, redis):
    early, later, ahead = history
    change = read_state.mark(redis, "ann", {"ids": [later, ahead, early]})
    assert change["ids"] == [early, later]  # ``ahead`` was never given: left out
    state = read_state.get(redis, "ann")
    assert state["ids"] == [early, later]
    assert read_state.is_read(state, early) and read_state.is_read(state, later)
    assert not read_state.is_read(state, ahead)
    assert read_state.mark(redis, "ann", {"unread": [ahead, later]})["unread"] == [later]
    # A watermark above its shard's newest is brought down to it.
    assert read_state.mark(redis, "bob", {"upto": ahead})["upto"] == early
    assert read_state.mark(redis, "bob", {"seen": ahead})["seen"] == early
    assert read_state.mark(redis, "eve", {"upto": later})["upto"] == later


def test_mark_all_read_ends_the_exceptions_of_every_shard_below_it(history, redis):
    early, later, _ahead = history
    read_state.mark(redis, "ann", {"upto": early})
    read_state.mark(redis, "ann", {"unread": [early]})
    assert read_state.get(redis, "ann")["unread"] == [early]
    assert not read_state.is_read(read_state.get(redis, "ann"), early)
    read_state.mark(redis, "ann", {"upto": later})  # another shard's, later
    state = read_state.get(redis, "ann")
    assert state["unread"] == [] and state["upto"] == later
    assert read_state.is_read(state, early) and read_state.is_read(state, later)


def test_archive_and_snooze_take_ids_of_any_shard_up_to_that_shards_newest(history, redis):
    early, later, ahead = history
    assert archive_and_snooze.archive(redis, "ann", [early, ahead]) == {"archived": [early]}
    assert archive_and_snooze.archive(redis, "ann", [ahead]) == {"archived": []}
    assert archive_and_snooze.get(redis, "ann")["archived"] == [early]
    until = int(time.time() * 1000) + 60_000
    archive_and_snooze.snooze(redis, "ann", later, until)
    with pytest.raises(archive_and_snooze.StateError, match="newer than"):
        archive_and_snooze.snooze(redis, "ann", ahead, until)
    with pytest.raises(archive_and_snooze.StateError, match="newer than"):
        archive_and_snooze.snooze(redis, "ann", [later, ahead], until)
    assert archive_and_snooze.get(redis, "ann")["snoozed"] == {later: until}
    assert archive_and_snooze.hidden(redis, "ann") == ({early}, {later})
    # Woken, it comes back unread, by its own id.
    read_state.mark(redis, "ann", {"upto": later})
    assert archive_and_snooze.wake_due(redis, now_ms=until + 1) == [("ann", later)]
    state = read_state.get(redis, "ann")
    assert state["unread"] == [later] and not read_state.is_read(state, later)
    assert archive_and_snooze.get(redis, "ann")["snoozed"] == {}
