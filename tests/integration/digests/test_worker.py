"""The digest worker against a real SMTP server and a real Redis: guarantees under faults.

Schedules use cron "* * * * *" (a window per minute); the worker's clock is
moved two minutes ahead, so each window is due at once. Crashes are
injected at each step by a fault hook that raises, after which a new worker
(a restart) takes over.
"""
import time

import pytest

from app.digests import store, windows
from app.digests.smtp import Smtp
from app.digests.worker import Worker
from app.stream.publish import Bus
from app.users import accounts

AHEAD = 120  # seconds the worker's clock runs ahead: every window is due


class Crash(Exception):
    """An injected crash."""


def crash_at(step):
    def fault(at):
        if at == step:
            raise Crash(at)
    return fault


@pytest.fixture
def bus(redis):
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    accounts.create_user(redis, "bob", "bob-password", admin=True)
    return Bus(redis)


def subscribe(redis, owner="ada", **fields):
    data = dict({"email": f"{owner}@example.com", "topics": ["ops"], "schedule": "* * * * *"}, **fields)
    return store.create(redis, owner, data)


def worker(redis, smtp_server, fault=None):
    running = Worker(redis, Smtp.from_url(smtp_server.url), "http://herald.test/", fault,
                     clock=lambda: time.time() + AHEAD)
    running.collector.ensure_group()
    return running


def run(w, steps=6):
    for _ in range(steps):
        w.step(block_ms=50)


def titles_in(message):
    text = message.get_body(("plain",)).get_content()
    return [line.rsplit("  ", 1)[1] for line in text.splitlines() if line.startswith("  [")]


def test_digest_collects_matching_notifications_and_sends_once(redis, bus, smtp_server):
    subscribe(redis, min_severity="warning")
    w = worker(redis, smtp_server)
    bus.publish("ops.db", "slow query", severity="warning")
    bus.publish("ops.db", "too quiet", severity="info")          # below min_severity
    bus.publish("billing.x", "not subscribed", severity="error")
    bus.publish("ops.disk", "disk full", severity="error")
    run(w)
    [message] = smtp_server.messages
    assert message["To"] == "ada@example.com"
    assert titles_in(message) == ["disk full", "slow query"]
    run(w)
    assert len(smtp_server.messages) == 1  # nothing sent twice, empty windows send nothing


def test_each_notification_in_exactly_one_digest_per_subscription(redis, bus, smtp_server):
    first, second = subscribe(redis), subscribe(redis, topics=["ops.db"])
    w = worker(redis, smtp_server)
    bus.publish("ops.db", "one")
    run(w)
    bus.publish("ops.db", "two")
    bus.publish("ops.web", "three")
    run(w)
    got = {}
    for message in smtp_server.messages:
        got.setdefault(message["Message-ID"].split("-")[1], []).extend(titles_in(message))
    assert sorted(got[first["id"]]) == ["one", "three", "two"]
    assert sorted(got[second["id"]]) == ["one", "two"]


@pytest.mark.parametrize("step", ["collect:before-exec", "send:closed", "send:before-smtp"])
def test_a_crash_before_sending_neither_loses_nor_doubles(redis, bus, smtp_server, step):
    subscribe(redis)
    for i in range(5):
        bus.publish("ops.x", f"n{i}")
    with pytest.raises(Crash):
        run(worker(redis, smtp_server, crash_at(step)))
    assert smtp_server.messages == []
    run(worker(redis, smtp_server))  # the restart
    [message] = smtp_server.messages
    assert sorted(titles_in(message)) == [f"n{i}" for i in range(5)]
    assert "5 notifications" in message["Subject"]


def test_a_crash_after_smtp_accepted_resends_with_the_same_message_id(redis, bus, smtp_server):
    """The documented at-least-once corner: the copy carries the same Message-ID."""
    record = subscribe(redis)
    bus.publish("ops.x", "only once, ideally")
    with pytest.raises(Crash):
        run(worker(redis, smtp_server, crash_at("send:after-smtp")))
    run(worker(redis, smtp_server))
    first, again = smtp_server.messages
    assert first["Message-ID"] == again["Message-ID"]
    assert first["Message-ID"].startswith(f"<digest-{record['id']}-")
    run(worker(redis, smtp_server))
    assert len(smtp_server.messages) == 2  # and never a third


def test_smtp_outage_is_retried_and_nothing_dropped(redis, bus, smtp_server):
    subscribe(redis)
    smtp_server.stop()
    clock = [time.time() + AHEAD]
    w = Worker(redis, Smtp.from_url(smtp_server.url), "http://herald.test/", clock=lambda: clock[0])
    w.collector.ensure_group()
    bus.publish("ops.x", "during the outage")
    run(w)
    assert w.sender.failing and smtp_server.messages == []
    smtp_server.start()
    run(w)
    assert smtp_server.messages == []  # still waiting out its backoff
    clock[0] += 120
    run(w)
    [message] = smtp_server.messages
    assert titles_in(message) == ["during the outage"]
    assert not w.sender.failing


def test_critical_at_once_and_not_repeated_in_the_digest(redis, bus, smtp_server):
    subscribe(redis, critical_now=True)
    # The clock stands still just after the subscription began: its every-minute
    # digest is not due (on the real clock it fell due whenever the test crossed
    # a minute boundary, and the test failed).
    frozen = time.time()
    w = Worker(redis, Smtp.from_url(smtp_server.url), "http://herald.test/",
               clock=lambda: frozen)
    w.collector.ensure_group()
    bus.publish("ops.db", "Database down", severity="critical", body="Failing over.")
    bus.publish("ops.db", "Replica lagging", severity="warning")
    run(w, steps=3)
    [alone] = smtp_server.messages  # the digest is not due yet; the critical one went at once
    assert alone["Subject"] == "[critical] Database down"
    assert "Failing over." in alone.get_body(("plain",)).get_content()
    w.sender.clock = lambda: frozen + AHEAD
    run(w)
    digest = smtp_server.messages[1]
    assert titles_in(digest) == ["Replica lagging"]


def test_private_notifications_only_in_their_owners_digests(redis, bus, smtp_server):
    subscribe(redis, "ada", topics=["*"])
    subscribe(redis, "bob", topics=["*"])
    w = worker(redis, smtp_server)
    bus.publish("ops.x", "for ada only", user="ada")
    bus.publish("ops.y", "for everyone")
    bus.publish("ops.z", "for carol only", user="carol")
    run(w)
    by_owner = {m["To"]: titles_in(m) for m in smtp_server.messages}
    assert sorted(by_owner["ada@example.com"]) == ["for ada only", "for everyone"]
    assert by_owner["bob@example.com"] == ["for everyone"]


def test_paused_subscription_collects_nothing(redis, bus, smtp_server):
    record = subscribe(redis)
    store.update(redis, record["id"], "ada", {"enabled": False})
    w = worker(redis, smtp_server)
    bus.publish("ops.x", "while paused")
    run(w)
    assert smtp_server.messages == []
    assert redis.zcard(windows.windows_key(record["id"])) == 0


@pytest.mark.parametrize("step,copies", [("outbox:before-smtp", 1), ("outbox:after-smtp", 2)])
def test_a_crash_while_emailing_a_critical_one(redis, bus, smtp_server, step, copies):
    """Before the server accepts it: sent once after the restart. After (the documented
    corner): sent again, with the same Message-ID. Never lost, never a third time."""
    subscribe(redis, critical_now=True)
    bus.publish("ops.db", "Database down", severity="critical")
    with pytest.raises(Crash):
        run(Worker(redis, Smtp.from_url(smtp_server.url), "http://herald.test/", crash_at(step)))
    for _ in range(2):  # two restarts
        run(Worker(redis, Smtp.from_url(smtp_server.url), "http://herald.test/"), steps=3)
    messages = smtp_server.messages
    assert len(messages) == copies
    assert {m["Message-ID"] for m in messages} == {messages[0]["Message-ID"]}
    assert messages[0]["Subject"] == "[critical] Database down"
    assert redis.llen(windows.OUTBOX) == 0
