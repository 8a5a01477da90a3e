"""Several digest senders on one Redis and a real SMTP server, at the level of their parts:
a due window or a critical notification found by two senders is emailed once (the send
lease), and a lease left by a dead sender lapses (collecting once:
tests/unit/digests/test_exactly_once.py)."""
import time

from app.digests import windows
from app.digests.collect import Collector
from app.digests.send import SENDING, Sender
from app.digests.smtp import Smtp
from tests.unit.digests import test_exactly_once as parts

bus = parts.bus  # the fixture: ada's account, and a Bus on the tests' Redis
subscribe = parts.subscribe
AHEAD = 120  # seconds the senders' clock runs ahead: every window is due


def sender(redis, smtp_server, fault=None):
    return Sender(redis, Smtp.from_url(smtp_server.url), "http://herald.test/", fault,
                  clock=lambda: time.time() + AHEAD)


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
