"""The one-time move of a single Redis's keys to the hash-tagged layout
(app/key_layout.py): the stream's companions and presence here; each family's
own moves are tested beside it (tests/unit/users/test_layout.py, ...)."""
import weakref

import pytest

from app import key_layout
from app.realtime import presence
from app.stream import keys
from app.stream.publish import Bus

pytestmark = pytest.mark.single_redis(
    "the move is of a single Redis's keys; a cluster starts on the new layout")

OLD = {
    "herald:epoch": keys.EPOCH,
    "herald:last-id": keys.LAST_ID,
    "herald:publish:once:abc": keys.ONCE + "abc",
    "herald:bridge:batch:b1": keys.BATCH + "b1",
    "herald:limits:publish:api.publish:k:10/1/minute": keys.QUOTA + "publish:api.publish:k:10/1/minute",
    "herald:digests:epoch": keys.group_epoch("herald:digests"),
    "herald:webhooks:epoch": keys.group_epoch("herald:webhooks"),
    "herald:presence:since": presence.SINCE,
    "herald:presence:procs": presence.PROCS,
    "herald:presence:proc:web-1": presence.PROC + "web-1",
    "herald:presence:where:ann": presence.WHERE + "ann",
}


def test_every_old_name_moves_to_its_new_one_and_nothing_else_moves(redis):
    for old in OLD:
        redis.set(old, old)
    redis.set("herald:stream:not-ours", "x")  # no family claims it
    moved = key_layout.migrate(redis)
    assert moved >= len(OLD)
    for old, new in OLD.items():
        assert redis.get(new) == old.encode(), new
        assert not redis.exists(old)
    assert redis.get("herald:stream:not-ours") == b"x"
    assert redis.get(key_layout.LAYOUT) == key_layout.VERSION.encode()


def test_it_runs_once_and_a_key_already_moved_is_left_alone(redis):
    key_layout.migrate(redis)
    redis.set("herald:epoch", "stray")  # written by an old process after the move
    assert key_layout.migrate(redis) == 0
    assert redis.get("herald:epoch") == b"stray"


def test_a_new_name_already_there_is_kept(redis):
    redis.set("herald:last-id", "5-0")
    redis.set(keys.LAST_ID, "9-0")  # a new process published before the move
    key_layout.migrate(redis)
    assert redis.get(keys.LAST_ID) == b"9-0"


def test_a_process_moving_them_already_is_not_raced(redis):
    """(Its lock expires: it died; the next process to start moves them.)"""
    redis.set(key_layout.LOCK, "1", px=300)
    redis.set("herald:epoch", "1-0")
    assert key_layout.migrate(redis) == 0
    assert redis.exists("herald:epoch") and not redis.exists(key_layout.LAYOUT)


def test_a_moved_history_goes_on_where_it_was(redis):
    """A stream written before the move keeps its ids, its epoch and its last id: the
    next publish goes on above them, and a cursor from before still replays."""
    old_id = redis.xadd(keys.STREAM, {"topic": "a", "user": "", "envelope": "{}"}).decode()
    redis.set("herald:epoch", old_id)
    redis.set("herald:last-id", old_id)
    key_layout.migrate(redis)
    assert redis.get(keys.EPOCH).decode() == old_id
    new_id = Bus(redis).publish("ops.a", "after the move")
    assert [int(p) for p in new_id.split("-")] > [int(p) for p in old_id.split("-")]
    assert redis.get(keys.EPOCH).decode() == old_id  # the same stream: the same epoch



def test_a_key_scan_gives_twice_is_moved_once(redis):
    """SCAN may return a key again after it was renamed: the second move finds nothing."""
    redis.set("herald:epoch", "1-0")
    assert key_layout._move(redis, "herald:epoch", keys.EPOCH)
    assert not key_layout._move(redis, "herald:epoch", keys.EPOCH)
    assert redis.get(keys.EPOCH) == b"1-0"


def test_a_process_waits_for_a_move_another_one_is_making(redis, monkeypatch):
    """Not reading the keys before they are where it looks: until the other is done."""
    redis.set(key_layout.LOCK, "1")
    polls = []

    def done_after_two(seconds):
        polls.append(seconds)
        if len(polls) == 2:
            redis.set(key_layout.LAYOUT, key_layout.VERSION)
    monkeypatch.setattr(key_layout.time, "sleep", done_after_two)
    assert key_layout.migrate(redis) == 0
    assert len(polls) == 2


def test_a_redis_away_at_start_has_its_keys_moved_once_it_answers(redis):
    waits, calls = [], []

    class Flaky:  # away for the first command
        def __getattr__(self, name):
            calls.append(name)
            if len(calls) == 1:
                import redis as redis_lib
                raise redis_lib.ConnectionError("away")
            return getattr(redis, name)
    redis.set("herald:epoch", "1-0")
    flaky = Flaky()
    key_layout._migrate_when_back(weakref.ref(flaky), sleep=waits.append)
    assert waits == [1.0, 2.0]
    assert redis.get(keys.EPOCH) == b"1-0"


def test_a_port_that_answers_but_not_as_redis_is_waited_out(redis):
    """A thread waiting for a Redis that was away once found an HTTP server on its
    port (tests reuse ports): the protocol error ended it with a traceback."""
    waits, calls = [], []

    class NotRedisAtFirst:
        def __getattr__(self, name):
            calls.append(name)
            if len(calls) == 1:
                import redis as redis_lib
                raise redis_lib.exceptions.InvalidResponse('Protocol error, got "H" as reply type byte')
            return getattr(redis, name)
    redis.set("herald:epoch", "1-0")
    answering = NotRedisAtFirst()
    key_layout._migrate_when_back(weakref.ref(answering), sleep=waits.append)
    assert waits == [1.0, 2.0] and redis.get(keys.EPOCH) == b"1-0"


def test_the_wait_ends_with_the_client_it_waits_for():
    """Its owner dropped the client (its Redis is gone for good): the thread ends at
    its next wake, without a command."""
    class Gone:
        def __getattr__(self, name):
            raise AssertionError(f"{name} asked of a client its owner let go")
    gone = Gone()
    ref = weakref.ref(gone)
    del gone
    waits = []
    key_layout._migrate_when_back(ref, sleep=waits.append)
    assert waits == [1.0]
