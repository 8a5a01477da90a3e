"""Privacy of the feed's new paths: filters, search, views, GET one, archive and snooze
never reveal another user's private notifications; a host-app token limited to some
topics reads only inside them (and its user's private ones).

Each check also shows that the path works for what the caller may see, so a path
that returned nothing at all would fail here rather than pass.
"""
import time

import pytest

from app import create_app
from app.settings import TestConfig
from app.stream.publish import Bus
from app.users import accounts, archive_and_snooze
from tests.helpers.keys import SECRET
from tests.unit.web.api.helpers import bearer, ids, jwt_bearer, read, subscribe, walk_back

SECRET_WORD = "zebra"  # only in eve's private notifications, and in one public one


@pytest.fixture
def world(redis, user):
    """bob subscribes to everything; eve has private notifications on the same topics."""
    accounts.create_user(redis, "eve", "eve-password")
    subscribe(redis, "bob", ["*"])
    subscribe(redis, "eve", ["*"])
    bus = Bus(redis)
    made = {
        "public": bus.publish("ops.db", f"public {SECRET_WORD}", severity="critical"),
        "bobs": bus.publish("ops.db", "bob's own", severity="critical", user="bob"),
        "eves": bus.publish("ops.db", f"eve's {SECRET_WORD}", severity="critical", user="eve",
                            body=f"{SECRET_WORD} body"),
        "eves2": bus.publish("hr.review", "eve's review", severity="warning", user="eve"),
    }
    for i in range(30):
        bus.publish("noise", f"n{i}")
    return made


EVERY_READ = [
    {}, {"limit": "1000"}, {"after": "0"}, {"q": SECRET_WORD}, {"q": "eve"},
    {"severity": "critical"}, {"severity": "warning"}, {"topic": "ops.db"}, {"topic": "hr"},
    {"unread": "1"}, {"view": "archived"}, {"view": "snoozed"},
    {"q": SECRET_WORD, "view": "archived"}, {"unread": "1", "topic": "hr", "view": "snoozed"},
]


def everything_bob_reads(client):
    seen = set()
    for params in EVERY_READ:
        seen |= set(ids(client, bearer("bob"), **params))
        paged = {k: v for k, v in params.items() if k != "limit"}
        walked, _ = walk_back(client, bearer("bob"), 2, **paged)
        seen |= set(walked)
    return seen


def test_no_read_of_bobs_reveals_eves_private_notifications(client, world):
    seen = everything_bob_reads(client)
    assert {world["public"], world["bobs"]} <= seen
    assert not {world["eves"], world["eves2"]} & seen
    assert ids(client, bearer("bob"), q=SECRET_WORD) == [world["public"]]
    assert ids(client, bearer("eve"), q=SECRET_WORD) == [world["public"], world["eves"]]


def test_get_one_of_another_users_private_notification_is_404(client, world):
    for name in ("eves", "eves2"):
        reply = client.get(f"/api/notifications/{world[name]}", headers=bearer("bob"))
        assert reply.status_code == 404
        assert SECRET_WORD not in reply.get_data(as_text=True)
    assert client.get(f"/api/notifications/{world['eves']}", headers=bearer("eve")).status_code == 200
    assert client.get(f"/api/notifications/{world['bobs']}", headers=bearer("bob")).status_code == 200
    # Not found and not allowed look the same.
    missing = client.get("/api/notifications/1-0", headers=bearer("bob"))
    hidden = client.get(f"/api/notifications/{world['eves']}", headers=bearer("bob"))
    assert missing.get_json() == hidden.get_json()


def test_archiving_or_snoozing_another_users_id_reveals_nothing(client, redis, world):
    until = int(time.time() * 1000) + 3_600_000
    theirs, nobodys = world["eves"], "1-0"
    answers = []
    for entry_id in (theirs, nobodys):
        archived = client.post("/api/notification-state", headers=bearer("bob"),
                               json={"archive": [entry_id]})
        snoozed = client.post("/api/notification-state", headers=bearer("bob"),
                              json={"snooze": {"id": entry_id, "until": until}})
        assert archived.status_code == snoozed.status_code == 200
        answers.append((archived.get_json(), snoozed.get_json()))
    # The answers only echo the id: the same for eve's notification and for no notification.
    assert answers[0] == ({"archived": [theirs]}, {"snoozed": {theirs: until}})
    assert answers[1] == ({"archived": [nobodys]}, {"snoozed": {nobodys: until}})
    assert SECRET_WORD not in str(answers)
    assert ids(client, bearer("bob"), view="archived") == []
    assert ids(client, bearer("bob"), view="snoozed") == []
    assert not {theirs} & everything_bob_reads(client)
    # Waking it: bob is told an id, no more; eve's own feed is untouched.
    assert ("bob", theirs) in archive_and_snooze.wake_due(redis, now_ms=until)
    assert theirs not in set(ids(client, bearer("bob"), unread="1", limit=1000))
    assert theirs in ids(client, bearer("eve"))
    assert ids(client, bearer("eve"), view="archived") == []


def test_bobs_own_archive_and_snooze_still_work_beside_it(client, world):
    client.post("/api/notification-state", headers=bearer("bob"),
                json={"archive": [world["bobs"], world["eves"]]})
    assert ids(client, bearer("bob"), view="archived") == [world["bobs"]]
    assert world["bobs"] not in ids(client, bearer("bob"))


# -- host-app tokens limited to some topics -------------------------------------------

@pytest.fixture
def jwt_client(redis_server, redis):
    return create_app(TestConfig(redis_server.url, JWT_SECRET=SECRET)).test_client()


@pytest.fixture
def board(redis):
    """carol (a host-app user) subscribes to everything; her token will allow only board."""
    subscribe(redis, "carol", ["*"])
    bus = Bus(redis)
    return {
        "card": bus.publish("board.card.updated", "card moved", severity="info"),
        "ops": bus.publish("ops.db", "ops outage", severity="critical"),
        "mine": bus.publish("ops.private", "carol's own", severity="critical", user="carol"),
        "daves": bus.publish("board.card.updated", "dave's card", user="dave"),
    }


def test_a_limited_token_reads_only_inside_its_topics(jwt_client, board):
    limited = jwt_bearer("carol", topics=["board"])
    seen = set()
    for params in ({}, {"after": "0"}, {"q": "o"}, {"severity": "critical"},
                   {"topic": "ops"}, {"topic": "board"}, {"unread": "1"}):
        seen |= set(ids(jwt_client, limited, **params))
    assert seen == {board["card"], board["mine"]}
    assert ids(jwt_client, limited, topic="ops") == [board["mine"]]
    assert ids(jwt_client, limited, severity="critical") == [board["mine"]]
    for name, status in (("card", 200), ("mine", 200), ("ops", 404), ("daves", 404)):
        reply = jwt_client.get(f"/api/notifications/{board[name]}", headers=limited)
        assert reply.status_code == status, name
    # The same user with an unlimited token sees the public ops one too.
    assert set(ids(jwt_client, jwt_bearer("carol"))) == {board["card"], board["ops"], board["mine"]}


def test_a_limited_token_sees_no_archived_or_snoozed_item_outside_its_topics(jwt_client, board):
    limited = jwt_bearer("carol", topics=["board"])
    until = int(time.time() * 1000) + 3_600_000
    reply = jwt_client.post("/api/notification-state", headers=limited,
                            json={"archive": [board["ops"], board["card"]]})
    assert reply.status_code == 403  # ops is outside its topics (tests/unit/web/test_capabilities.py)
    for body in ({"archive": [board["card"]]}, {"archive": [board["ops"]]},
                 {"snooze": {"id": board["daves"], "until": until}}):
        reply = jwt_client.post("/api/notification-state", headers=jwt_bearer("carol"), json=body)
        assert reply.status_code == 200, reply.get_json()
    assert ids(jwt_client, limited, view="archived") == [board["card"]]
    assert ids(jwt_client, limited, view="snoozed") == []
    assert read(jwt_client, limited, view="archived", q="outage")["notifications"] == []
    assert ids(jwt_client, jwt_bearer("carol"), view="archived") == [board["card"], board["ops"]]
