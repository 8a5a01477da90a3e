"""A recreated ``herald:stream`` goes on above every id the old one gave (issue 35).

Redis gives a new stream ids from its clock (``<ms>-0``), knowing nothing of the stream
deleted before it: recreated within the millisecond of the old one's last entry (or after
the clock stepped back), its ids were at or below the old ones, and whoever follows the
stream by the last id it saw (the relay and the bridge's egress, the archiver, a client's
cursor) skipped them, silently. The clock cannot be held still in a test, so the old
stream's last ids are put ahead of it (XSETID, then a publish): a recreate "now" is then
in the same position as one within the same millisecond.
"""
import threading

import pytest

from app.stream import groups, state
from app.stream.envelope import id_key
from app.stream.follow import LiveFollower
from app.stream.keys import EPOCH, LAST_ID, STREAM
from app.stream.publish import Bus, prepare
from tests.helpers.archives import archived
from tests.support import wait_until
from workers.archiver import Archiver

AHEAD_MS = 60_000


def redis_ms(redis):
    seconds, micros = redis.time()
    return seconds * 1000 + micros // 1000


def last_ids_ahead_of_the_clock(redis, bus):
    """Publish on a stream whose ids run AHEAD_MS ahead of Redis's clock; the last id."""
    bus.publish("ops.a", "first")
    redis.execute_command("XSETID", STREAM, f"{redis_ms(redis) + AHEAD_MS}-5")
    return bus.publish("ops.a", "old")


def first_id_after_a_recreate(bus, how):
    if how == "publish":
        return bus.publish("ops.b", "new")
    if how == "publish_envelopes":
        answer, _ = bus.publish_envelopes([{"topic": "ops.b", "title": "new"}] * 2)
        return answer["notifications"][0]["id"]
    return bus.publish_batch([prepare({"topic": "ops.b", "title": "new"})] * 2, "b:1")[0]


@pytest.mark.parametrize("how", ["publish", "publish_envelopes", "publish_batch"])
def test_a_recreated_stream_goes_on_above_the_old_ids(redis, how):
    bus = Bus(redis)
    old = last_ids_ahead_of_the_clock(redis, bus)
    redis.delete(STREAM)
    new = first_id_after_a_recreate(bus, how)
    assert id_key(new) > id_key(old)
    assert redis.get(EPOCH).decode() == new  # the epoch is still the new stream's first id
    assert [id_key(i) > id_key(old) for i, _ in redis.xrange(STREAM)] == [True] * redis.xlen(STREAM)
    assert state.missed_history(redis, old)  # a cursor from the old stream: not recoverable
    assert not state.missed_history(redis, new)


@pytest.mark.single_redis("TIME in a transaction with the stream: a cluster refuses a keyless command there")
def test_a_stream_recreated_in_the_same_millisecond_goes_on_above(redis):
    """The real thing, as far as a test can make it: the publish, the delete and the next
    publish in one transaction, which Redis runs within the same millisecond mostly."""
    bus = Bus(redis)
    for _ in range(20):
        redis.flushall()
        bus.publish("ops.a", "first")
        with redis.pipeline(transaction=True) as pipe:
            pipe.xrevrange(STREAM, count=1)
            pipe.delete(STREAM)
            pipe.time()
            old_entry, _deleted, (seconds, micros) = pipe.execute()
        old = old_entry[0][0].decode()
        if id_key(old)[0] == seconds * 1000 + micros // 1000:
            break
    new = bus.publish("ops.b", "new")
    assert id_key(new) > id_key(old)


def test_a_group_made_with_the_stream_goes_on_above_the_old_ids(redis):
    """groups.ensure makes the stream (MKSTREAM) when there is none: the first publish on
    it, which then finds a stream already there, goes on above the old ids too."""
    bus = Bus(redis)
    old = last_ids_ahead_of_the_clock(redis, bus)
    redis.delete(STREAM)
    assert groups.ensure(redis, "herald:test") == "new stream"
    assert id_key(redis.get(EPOCH).decode()) > id_key(old)
    assert state.missed_history(redis, old)
    new = bus.publish("ops.b", "new")
    assert id_key(new) > id_key(old)
    assert [entry_id.decode() for entry_id, _ in
            redis.xreadgroup("herald:test", "c", {STREAM: ">"})[0][1]] == [new]


def test_without_a_kept_last_id_the_stream_starts_from_the_clock(redis):
    """Nothing to go above (a fresh Redis, or one that lost its data): Redis's own ids."""
    bus = Bus(redis)
    before = redis_ms(redis)
    first = bus.publish("ops.a", "first")
    assert before <= id_key(first)[0] <= redis_ms(redis) and id_key(first)[1] == 0


def test_the_live_follower_hands_on_what_the_recreated_stream_gets(redis_server, redis):
    bus, handed = Bus(redis), []
    old = last_ids_ahead_of_the_clock(redis, bus)
    follower = LiveFollower(redis, redis_server.url, name="test")
    running = threading.Event()
    running.set()
    thread = threading.Thread(target=follower.run, args=(
        running.is_set, lambda envelope, raw: handed.append(envelope["id"])))
    thread.start()
    try:
        wait_until(lambda: follower.connected and follower.position == old, message="following")
        redis.delete(STREAM)
        new = bus.publish("ops.b", "new")
        wait_until(lambda: handed == [new], timeout=3, message="the new stream's first handed on")
        follower.catch_up()  # a resubscription: nothing again, nothing lost
        assert handed == [new]
    finally:
        running.clear()
        thread.join(10)
        follower.pubsub_client.close()


def test_the_archiver_archives_what_the_recreated_stream_gets(redis, tmp_path):
    folder = tmp_path / "archive"
    bus = Bus(redis)
    old = last_ids_ahead_of_the_clock(redis, bus)
    archiver = Archiver(redis, folder, lease=3)
    running = threading.Event()
    running.set()
    thread = threading.Thread(target=archiver.run, args=(running.is_set,))
    thread.start()
    try:
        wait_until(lambda: archiver.position == old, timeout=5, message="the old stream archived")
        redis.delete(STREAM)
        new = bus.publish("ops.b", "new")
        wait_until(lambda: archiver.position == new, timeout=3,
                   message="the new stream's first archived")
    finally:
        running.clear()
        thread.join(10)
    assert [line["id"] for line in archived(folder)][-2:] == [old, new]


def test_an_empty_batch_writes_nothing_and_remembers_nothing(redis):
    assert Bus(redis).publish_batch([], "b:0") == []
    assert not redis.exists(STREAM) and not redis.exists(LAST_ID)
