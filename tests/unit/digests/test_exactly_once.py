"""Several digest workers on one Redis, at the level of their parts: a notification
collected twice counts once (the collected marker), stale consumer names go (a due window
or a critical one found by two senders is emailed once, through a real SMTP server:
tests/integration/digests/test_exactly_once.py)."""
import time

import pytest

from app.digests import store, windows
from app.digests.collect import GROUP, Collector, collected_key
from app.digests.consumers import Claimer
from app.stream.publish import Bus
from app.stream.shards import configured
from app.users import accounts


@pytest.fixture
def bus(redis):
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    return Bus(redis)


def subscribe(redis, **fields):
    data = dict({"email": "ada@example.com", "topics": ["ops"], "schedule": "* * * * *"}, **fields)
    return store.create(redis, "ada", data)


def ops_stream():
    """The stream of the shard the tests' notifications (on ``ops.*``) are in."""
    return configured().of_topic("ops").stream


def read_as(redis, consumer):
    """What ``consumer`` reads of the ops shard's stream, under notification ids (as
    groups.Reader hands them on)."""
    shard = configured().of_topic("ops")
    [(_, entries)] = redis.xreadgroup(GROUP, consumer, {shard.stream: ">"})
    return [(shard.public(entry_id).encode(), fields) for entry_id, fields in entries]


def window_total(redis, record):
    return sum(windows.read(redis, record["id"], float(w))[2]
               for w in redis.zrange(windows.windows_key(record["id"]), 0, -1))


def test_an_entry_claimed_from_a_slow_owner_is_collected_once(redis, bus):
    """A reads an entry and stalls; B takes it over once idle and collects it; A wakes
    and collects its copy: a no-op (just acknowledged)."""
    record = subscribe(redis)
    slow = Collector(redis, consumer="digest-a", claim_idle=0.1)
    slow.ensure_group()
    peer = Collector(redis, consumer="digest-b", claim_idle=0.1)
    bus.publish("ops.x", "once")
    [(entry_id, fields)] = read_as(redis, "digest-a")
    time.sleep(0.2)  # idle past claim_idle
    assert peer.step(block_ms=10) == 1
    assert peer.claimed == 1 and peer.collected == 1
    assert redis.exists(collected_key(entry_id))
    slow.collect(entry_id, fields)  # the slow owner, awake again
    assert (slow.collected, slow.duplicates) == (0, 1)
    assert window_total(redis, record) == 1
    assert redis.xpending(ops_stream(), GROUP)["pending"] == 0


def test_a_peer_collecting_between_watch_and_exec_aborts_the_second(redis, bus):
    """The race inside the transaction: B collects the entry after A has WATCHed its
    marker and before A's EXEC; A's EXEC is aborted, A looks again and only acks."""
    record = subscribe(redis)
    peer = Collector(redis, consumer="digest-b", claim_idle=0.1)
    entry = []

    def peer_collects_first(step):
        if step == "collect:before-exec" and not peer.collected:
            peer.collect(*entry[0])

    first = Collector(redis, peer_collects_first, consumer="digest-a", claim_idle=0.1)
    first.ensure_group()
    bus.publish("ops.x", "raced")
    entry.extend(read_as(redis, "digest-a"))
    first.collect(*entry[0])
    assert (peer.collected, first.collected, first.duplicates) == (1, 0, 1)
    assert window_total(redis, record) == 1


def test_stale_consumer_names_are_deleted_unless_they_hold_entries(redis, bus):
    Collector(redis).ensure_group()
    bus.publish("ops.x", "held")
    read_as(redis, "digest-holder")  # one pending entry
    redis.xgroup_createconsumer(ops_stream(), GROUP, "digest-gone")  # nothing pending
    redis.xgroup_createconsumer(ops_stream(), GROUP, "digest-me")
    time.sleep(0.1)
    mine, deleted = Claimer(redis, "digest-me", 30).forget_stale(idle=0.05)
    assert (mine, deleted) == (0, ["digest-gone"])
    names = {c["name"] for c in redis.xinfo_consumers(ops_stream(), GROUP)}
    assert names == {b"digest-holder", b"digest-me"}


def test_a_crash_between_collecting_and_acknowledging_collects_once(redis, bus):
    """The XACK is a step apart from the transaction (the group is in the stream's hash
    slot, the windows in the digests'): a worker that dies between them leaves the entry
    pending with its marker set; on restart it finds the marker and only acknowledges."""
    record = subscribe(redis)

    def crash(step):
        if step == "collect:before-ack":
            raise SystemExit("killed")

    dying = Collector(redis, crash, consumer="digest-a", claim_idle=30)
    dying.ensure_group()
    bus.publish("ops.x", "once")
    with pytest.raises(SystemExit):
        dying.step(block_ms=10)
    assert redis.xpending(ops_stream(), GROUP)["pending"] == 1 and window_total(redis, record) == 1
    again = Collector(redis, consumer="digest-a", claim_idle=30)  # the same name, restarted
    assert again.step(block_ms=10) == 1
    assert (again.collected, again.duplicates) == (0, 1)
    assert redis.xpending(ops_stream(), GROUP)["pending"] == 0 and window_total(redis, record) == 1
