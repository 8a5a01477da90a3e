"""Several digest workers on one Redis, at the level of their parts: a notification
collected twice counts once (the collected marker), a due window or a critical one
found by two senders is emailed once (the send lease), stale consumer names go."""
import time

import pytest

from app.users import accounts
from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.digests import store, windows
from app.digests.collect import GROUP, Collector, collected_key
from app.digests.consumers import Claimer
from app.digests.send import SENDING, Sender
from app.digests.smtp import Smtp

AHEAD = 120  # seconds the senders' clock runs ahead: every window is due


@pytest.fixture
def bus(redis):
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    return Bus(redis)


def subscribe(redis, **fields):
    data = dict({"email": "ada@example.com", "topics": ["ops"], "schedule": "* * * * *"}, **fields)
    return store.create(redis, "ada", data)


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
    [(_, [(entry_id, fields)])] = redis.xreadgroup(GROUP, "digest-a", {STREAM: ">"})
    time.sleep(0.2)  # idle past claim_idle
    assert peer.step(block_ms=10) == 1
    assert peer.claimed == 1 and peer.collected == 1
    assert redis.exists(collected_key(entry_id))
    slow.collect(entry_id, fields)  # the slow owner, awake again
    assert (slow.collected, slow.duplicates) == (0, 1)
    assert window_total(redis, record) == 1
    assert redis.xpending(STREAM, GROUP)["pending"] == 0


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
    [(_, entries)] = redis.xreadgroup(GROUP, "digest-a", {STREAM: ">"})
    entry.extend(entries)
    first.collect(*entry[0])
    assert (peer.collected, first.collected, first.duplicates) == (1, 0, 1)
    assert window_total(redis, record) == 1


def test_stale_consumer_names_are_deleted_unless_they_hold_entries(redis, bus):
    Collector(redis).ensure_group()
    bus.publish("ops.x", "held")
    redis.xreadgroup(GROUP, "digest-holder", {STREAM: ">"})  # one pending entry
    redis.xgroup_createconsumer(STREAM, GROUP, "digest-gone")  # nothing pending
    redis.xgroup_createconsumer(STREAM, GROUP, "digest-me")
    time.sleep(0.1)
    mine, deleted = Claimer(redis, "digest-me", 30).forget_stale(idle=0.05)
    assert (mine, deleted) == (0, ["digest-gone"])
    names = {c["name"] for c in redis.xinfo_consumers(STREAM, GROUP)}
    assert names == {b"digest-holder", b"digest-me"}


def sender(redis, smtp_server, fault=None):
    return Sender(redis, Smtp.from_url(smtp_server.url), "http://herald.test/", fault,
                  clock=lambda: time.time() + AHEAD)


@pytest.mark.slow
def test_two_senders_on_one_due_window_send_one_email(redis, bus, smtp_server):
    subscribe(redis)
    collector = Collector(redis)
    collector.ensure_group()
    for i in range(3):
        bus.publish("ops.x", f"n{i}")
    collector.step(block_ms=10)
    second = sender(redis, smtp_server)
    seen = []

    def the_other_sends_meanwhile(step):
        if step == "send:before-smtp" and not seen:
            seen.append(second.step())  # finds the window's lease taken: leaves it

    first = sender(redis, smtp_server, the_other_sends_meanwhile)
    assert first.step() == 1
    assert seen == [0]
    assert second.step() == 0  # the window is gone (sent), nothing twice
    [message] = smtp_server.messages
    assert "3 notifications" in message["Subject"]


@pytest.mark.slow
def test_a_lease_left_by_a_dead_sender_lapses_and_the_other_sends(redis, bus, smtp_server):
    record = subscribe(redis)
    collector = Collector(redis)
    collector.ensure_group()
    bus.publish("ops.x", "orphaned")
    collector.step(block_ms=10)
    [window] = redis.zrange(windows.windows_key(record["id"]), 0, -1)
    key = windows.digest_key(record["id"], float(window))
    redis.set(SENDING + key, "a-worker-that-died", px=300)  # its lease, not released
    survivor = sender(redis, smtp_server)
    assert survivor.step() == 0 and smtp_server.messages == []
    time.sleep(0.4)
    assert survivor.step() == 1
    assert len(smtp_server.messages) == 1


@pytest.mark.slow
def test_two_senders_on_one_critical_notification_send_one_email(redis, bus, smtp_server):
    subscribe(redis, critical_now=True)
    collector = Collector(redis)
    collector.ensure_group()
    bus.publish("ops.db", "Database down", severity="critical")
    collector.step(block_ms=10)
    second = sender(redis, smtp_server)
    seen = []

    def the_other_sends_meanwhile(step):
        if step == "outbox:before-smtp" and not seen:
            seen.append(second.step())

    assert sender(redis, smtp_server, the_other_sends_meanwhile).step() == 1
    assert seen == [0] and second.step() == 0
    [message] = smtp_server.messages
    assert message["Subject"] == "[critical] Database down"
    assert redis.llen(windows.OUTBOX) == 0
