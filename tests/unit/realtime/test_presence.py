"""Presence in Redis: a user is online while any process holds a connection of theirs."""
import orjson
import pytest

from app.realtime import presence
from app.realtime.presence import Presence
from app.stream.keys import CONTROL

END = {"end": "of what the test reads"}  # published by the test after what it awaits


@pytest.fixture
def control(redis):
    """What is published on herald:control, as decoded messages: all that was published
    before read() was called (a channel keeps its order, so the test's own END marker
    comes after it)."""
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(CONTROL)
    pubsub.get_message(timeout=1)

    def read():
        redis.publish(CONTROL, orjson.dumps(END))
        messages = []
        while (message := pubsub.get_message(timeout=5)) is not None:
            decoded = orjson.loads(message["data"])
            if decoded == END:
                break
            messages.append(decoded)
        else:
            raise AssertionError("the END marker never came back on herald:control")
        return [m["presence"] for m in messages if "presence" in m]
    yield read
    pubsub.close()


def users(redis):
    return {p["user"]: p["connections"] for p in presence.online(redis)}


def test_online_while_any_connection_of_any_process_is_open(redis, control):
    a, b = Presence(redis, "host-a:1"), Presence(redis, "host-b:2")
    a.opened("ada")
    a.opened("ada")
    b.opened("ada")
    a.flush(now=100.0)   # the first flush writes the whole count
    b.flush(now=100.0)
    assert users(redis) == {"ada": 3}
    joined = control()
    assert [(p["user"], p["online"]) for p in joined] == [("ada", True)]  # once, not per process
    a.closed("ada")
    a.closed("ada")
    a.flush(now=101.0)
    assert users(redis) == {"ada": 1} and control() == []
    b.closed("ada")
    b.flush(now=101.0)
    assert users(redis) == {}
    assert [(p["user"], p["online"]) for p in control()] == [("ada", False)]


def test_a_reload_within_a_flush_is_neither_a_leave_nor_a_join(redis, control):
    a = Presence(redis, "host-a:1")
    a.opened("ada")
    a.flush(now=100.0)
    control()
    a.closed("ada")   # the tab reloads: closed, then opened, before the next flush
    a.opened("ada")
    a.flush(now=100.5)
    assert control() == [] and users(redis) == {"ada": 1}


def test_a_dead_process_is_reaped_and_its_users_leave_unless_held_elsewhere(redis, control):
    dead, alive = Presence(redis, "host-a:1"), Presence(redis, "host-b:2")
    dead.opened("ada")
    dead.opened("bob")
    alive.opened("bob")
    dead.flush(now=100.0)
    alive.flush(now=100.0)
    control()
    alive.flush(now=100.0 + presence.STALE_AFTER + 1)  # alive refreshes; dead did not
    assert alive.reap(now=100.0 + presence.STALE_AFTER + 1) == ["host-a:1"]
    assert users(redis) == {"bob": 1}
    assert [(p["user"], p["online"]) for p in control()] == [("ada", False)]


def test_the_full_rewrite_repairs_what_redis_lost(redis, control):
    a = Presence(redis, "host-a:1")
    a.opened("ada")
    a.flush(now=100.0)
    redis.flushall()           # a Redis restart without persistence
    a.opened("bob")
    a.flush(now=100.0 + presence.SYNC_EVERY)  # a full rewrite is due
    assert users(redis) == {"ada": 1, "bob": 1}
