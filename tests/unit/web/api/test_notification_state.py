"""GET/POST /api/notification-state: archive and snooze, and what the feed then shows."""
import contextlib
import time

import orjson
import pytest

from app.redis_client import is_cluster
from app.stream.keys import CONTROL
from app.stream.publish import Bus
from app.users import archive_and_snooze, read_state
from tests.unit.web.api.helpers import bearer, ids, subscribe


@pytest.fixture
def published(redis, user):
    subscribe(redis, "bob", ["ops"])
    bus = Bus(redis)
    return [bus.publish("ops.x", f"n{i}", severity="error" if i % 2 else "info")
            for i in range(6)]


def change(client, body, name="bob"):
    return client.post("/api/notification-state", headers=bearer(name), json=body)


def state(client, name="bob"):
    reply = client.get("/api/notification-state", headers=bearer(name))
    assert reply.status_code == 200
    return reply.get_json()


@contextlib.contextmanager
def announcements(redis):
    """Listen on herald:control; yields ``heard(n)``: the first n messages, decoded."""
    control = redis.pubsub(ignore_subscribe_messages=True)
    control.subscribe(CONTROL)
    control.get_message(timeout=1)  # the subscription's confirmation

    def heard(count):
        messages, deadline = [], time.monotonic() + 5
        while len(messages) < count and time.monotonic() < deadline:
            message = control.get_message(timeout=0.5)
            if message:
                messages.append(orjson.loads(message["data"]))
        return messages
    try:
        yield heard
    finally:
        control.close()


def later(seconds=3600):
    return int(time.time() * 1000) + seconds * 1000


def test_archive_hides_from_the_feed_and_shows_under_archived(client, published):
    reply = change(client, {"archive": [published[1], published[3], published[1]]})
    assert reply.status_code == 200
    assert reply.get_json() == {"archived": [published[1], published[3]]}
    assert ids(client, bearer("bob")) == [published[i] for i in (0, 2, 4, 5)]
    assert ids(client, bearer("bob"), view="archived") == [published[1], published[3]]
    assert ids(client, bearer("bob"), view="archived", severity="info") == []
    assert state(client) == {"archived": [published[1], published[3]], "snoozed": {}}
    # GET one still finds it: it is kept, only set aside.
    assert client.get(f"/api/notifications/{published[1]}", headers=bearer("bob")).status_code == 200

    reply = change(client, {"unarchive": [published[1]]})
    assert reply.status_code == 200 and reply.get_json() == {"unarchived": [published[1]]}
    assert ids(client, bearer("bob")) == [published[i] for i in (0, 1, 2, 4, 5)]
    assert ids(client, bearer("bob"), view="archived") == [published[3]]


def test_snooze_hides_until_its_time_and_lists_under_snoozed(client, published):
    until = later()
    reply = change(client, {"snooze": {"id": published[2], "until": until}})
    assert reply.status_code == 200
    assert reply.get_json() == {"snoozed": {published[2]: until}}
    assert published[2] not in ids(client, bearer("bob"))
    assert ids(client, bearer("bob"), view="snoozed") == [published[2]]
    assert state(client)["snoozed"] == {published[2]: until}

    reply = change(client, {"unsnooze": published[2]})
    assert reply.status_code == 200 and reply.get_json() == {"unsnoozed": [published[2]]}
    assert published[2] in ids(client, bearer("bob"))
    assert ids(client, bearer("bob"), view="snoozed") == []
    assert state(client)["snoozed"] == {}


def test_bulk_snooze_and_wake_in_one_request_each(client, published):
    """A selection of the inbox is snoozed (and woken, for Undo) by one request."""
    until = later(3600)
    chosen = [published[1], published[3]]
    reply = change(client, {"snooze": {"ids": chosen, "until": until}})
    assert reply.status_code == 200
    assert reply.get_json() == {"snoozed": {i: until for i in chosen}}
    assert ids(client, bearer("bob"), view="snoozed") == chosen
    reply = change(client, {"unsnooze": chosen})
    assert reply.status_code == 200 and reply.get_json() == {"unsnoozed": chosen}
    assert state(client)["snoozed"] == {}
    reply = change(client, {"snooze": {"ids": [], "until": until}})
    assert reply.status_code == 400 and "snooze.ids" in reply.get_json()["error"]


def test_a_snooze_that_is_due_shows_again_even_before_it_is_woken(client, redis, published):
    archive_and_snooze.snooze(redis, "bob", published[0], later(1))
    assert published[0] not in ids(client, bearer("bob"))
    # An hour later (as the feed sees it), before any waker ran.
    assert archive_and_snooze.hidden(redis, "bob", now_ms=later(7200)) == (set(), set())


def test_waking_brings_it_back_unread_and_tells_every_tab(client, redis, published):
    until = later(60)
    # Listening from before the first change: on a Redis Cluster an announcement,
    # published on another node, may reach a subscription made just after it (the
    # "all read" below once came first that way, where the snooze was expected).
    with announcements(redis) as heard:
        read_state.apply(redis, "bob", [], published[-1], [])      # all read
        assert ids(client, bearer("bob"), unread="1") == []
        change(client, {"snooze": {"id": published[4], "until": until}})
        assert archive_and_snooze.wake_due(redis, now_ms=until - 1) == []
        assert archive_and_snooze.wake_due(redis, now_ms=until) == [("bob", published[4])]
        assert archive_and_snooze.wake_due(redis, now_ms=until + 5) == []  # once only
        messages = heard(4)
    snoozed = {"user": "bob", "state": {"snoozed": {published[4]: until}}}
    woke = {"user": "bob", "state": {"unsnoozed": [published[4]], "woke": [published[4]]}}
    assert snoozed in messages and woke in messages
    if not is_cluster(redis):  # (on a cluster each may come through another node)
        assert messages.index(snoozed) < messages.index(woke)
    assert {"user": "bob", "read": {"upto": published[-1], "ids": [],
                                    "unread": [published[4]], "seen": None, "version": 2}} in messages
    assert ids(client, bearer("bob"), unread="1") == [published[4]]
    assert published[4] in ids(client, bearer("bob"))
    assert ids(client, bearer("bob"), view="snoozed") == []
    assert read_state.get(redis, "bob")["unread"] == [published[4]]


def test_changes_are_announced_to_the_users_tabs(client, redis, published):
    with announcements(redis) as heard:
        change(client, {"archive": [published[0]]})
        until = later()
        change(client, {"snooze": {"id": published[1], "until": until}})
        change(client, {"unsnooze": published[1]})
        change(client, {"unarchive": [published[0]]})
        messages = heard(4)
    assert messages == [{"user": "bob", "state": made} for made in (
        {"archived": [published[0]]}, {"snoozed": {published[1]: until}},
        {"unsnoozed": [published[1]]}, {"unarchived": [published[0]]})]


@pytest.mark.parametrize("body,field", [
    (None, "body"),
    ([], "body"),
    ({}, "body"),
    ({"trash": ["1-0"]}, "body"),
    ({"archive": ["1-0"], "unarchive": ["2-0"]}, "body"),
    ({"archive": "1-0"}, "archive"),
    ({"archive": []}, "archive"),
    ({"archive": ["1-0"] * 501}, "archive"),
    ({"archive": ["1-0", "nope"]}, "archive[1]"),
    ({"unarchive": [5]}, "unarchive[0]"),
    ({"snooze": "1-0"}, "snooze"),
    ({"snooze": {"id": "1-0"}}, "snooze"),
    ({"snooze": {"id": "1-0", "until": 1, "x": 1}}, "snooze"),
    ({"snooze": {"id": "bad", "until": 9_999_999_999_999}}, "snooze.id"),
    ({"snooze": {"id": "1-0", "until": "tomorrow"}}, "snooze.until"),
    ({"snooze": {"id": "1-0", "until": True}}, "snooze.until"),
    ({"snooze": {"id": "1-0", "until": 1000}}, "snooze.until"),             # in the past
    ({"snooze": {"id": "1-0", "until": 99_999_999_999_999}}, "snooze.until"),  # > a year
    ({"unsnooze": []}, "unsnooze"),
    ({"unsnooze": "x"}, "unsnooze"),
])
def test_bad_bodies_are_400_naming_the_field(client, redis, user, body, field):
    reply = client.post("/api/notification-state", headers=bearer("bob"), json=body)
    assert reply.status_code == 400, reply.get_data(as_text=True)
    answer = reply.get_json()
    assert answer["error"].startswith(f"{field}: ") and answer["field"] == field
    assert archive_and_snooze.get(redis, "bob") == {"archived": [], "snoozed": {}}


def test_not_json_is_400(client, user):
    reply = client.post("/api/notification-state", headers=bearer("bob"), data="archive",
                        content_type="text/plain")
    assert reply.status_code == 400 and reply.get_json()["field"] == "body"
