"""A host app's user ids are opaque strings (docs/contract.md, "Tokens from the host
app", "Account identity"): everything Herald keeps per user (subscriptions, read
state, archive and snooze, preferences and their digests, the feed) works for ids
such as ``42``, ``user:42``, ``alice@example.com`` or ``Zoë Müller``, and no two ids
share any of it: not ids that begin or end one another (``4``/``42``,
``user:4``/``user:42``, ``a``/``a:b``), not ids holding the separators Herald
writes into its keys and schedules (``:``, a tab).

The live paths (Socket.IO, Server-Sent Events, replay, presence) with the same ids:
tests/integration/realtime/test_host_tokens_live.py.
"""
import time

import pytest

from app import create_app
from app.digests import store, windows
from app.digests.collect import Collector
from app.settings import TestConfig
from app.stream.publish import Bus
from app.users import archive_and_snooze
from tests.helpers.keys import SECRET
from tests.unit.web.api.helpers import jwt_bearer, subscribe

USER_IDS = ["42", "4", "user:42", "user:4", "alice@example.com", "Zo\u00eb M\u00fcller", "a",
            "a:b", "b:a", "a\tb", "a\t1-0", "x" * 255, "x" * 254, "\u00e9", "e\u0301"]


@pytest.fixture
def client(redis_server, redis):
    return create_app(TestConfig(redis_server.url, JWT_SECRET=SECRET)).test_client()


@pytest.fixture
def private(redis):
    """One private notification for each user id, and a public one for all of them."""
    bus = Bus(redis)
    for user in USER_IDS:
        subscribe(redis, user, ["news"])
    made = {user: bus.publish("news.item", f"private {n}", user=user)
            for n, user in enumerate(USER_IDS)}
    made[None] = bus.publish("news.item", "public")
    return made


def call(client, method, path, user, **kwargs):
    reply = client.open(path, method=method, headers=jwt_bearer(user), **kwargs)
    assert reply.status_code == 200, (user, path, reply.get_data(as_text=True))
    return reply.get_json()


def test_each_id_reads_its_own_private_notifications_and_no_one_elses(client, private):
    for user in USER_IDS:
        feed = call(client, "GET", "/api/notifications", user, query_string={"after": "0"})
        assert [n["id"] for n in feed["notifications"]] == [private[user], private[None]], user
        assert feed["notifications"][0]["user"] == user  # "42" stays a string
        for other in USER_IDS:
            reply = client.get(f"/api/notifications/{private[other]}", headers=jwt_bearer(user))
            assert reply.status_code == (200 if other == user else 404), (user, other)


def test_each_ids_read_state_archive_and_snoozes_are_its_own(client, redis, private):
    until = int(time.time() * 1000) + 3_600_000
    for user in USER_IDS:
        call(client, "POST", "/api/read-state", user, json={"ids": [private[user]]})
        call(client, "POST", "/api/notification-state", user, json={"archive": [private[user]]})
        call(client, "POST", "/api/notification-state", user,
             json={"snooze": {"id": private[None], "until": until}})
    for user in USER_IDS:
        assert call(client, "GET", "/api/read-state", user)["ids"] == [private[user]], user
        state = call(client, "GET", "/api/notification-state", user)
        assert state == {"archived": [private[user]], "snoozed": {private[None]: until}}, user
        unread = call(client, "GET", "/api/notifications", user, query_string={"unread": "1"})
        assert unread["notifications"] == [], user  # its own read, the public one snoozed
    # The shared schedule wakes each id's own snooze, as that id's.
    woken = archive_and_snooze.wake_due(redis, now_ms=until + 1, most=1000)
    assert sorted(woken) == sorted((user, private[None]) for user in USER_IDS)
    for user in USER_IDS:
        assert call(client, "GET", "/api/notification-state", user)["snoozed"] == {}, user


def test_each_ids_preferences_and_digests_are_its_own(client, redis, private):
    for n, user in enumerate(USER_IDS):
        call(client, "PUT", "/api/preferences", user,
             json={"email": f"user{n}@example.com", "rules": [{"topic": "news", "mode": "hourly"}]})
    collector = Collector(redis)
    collector.ensure_group()
    bus = Bus(redis)
    later = {user: bus.publish("news.item", f"later {n}", user=user)
             for n, user in enumerate(USER_IDS)}
    while collector.step(block_ms=50):
        pass
    for n, user in enumerate(USER_IDS):
        assert call(client, "GET", "/api/preferences", user)["email"] == f"user{n}@example.com"
        [record] = store.list_all(redis, owner=user)
        assert record["owner"] == user and record["email"] == f"user{n}@example.com"
        [window] = redis.zrange(windows.windows_key(record["id"]), 0, -1)
        _counts, items, _total = windows.read(redis, record["id"], float(window))
        assert [i["id"] for i in items] == [later[user]], user  # its own, made after it
