"""GET/PUT /api/preferences, and the managed digests they make (app/users/preferences.py)."""
import orjson
import pytest

from app import create_app
from app.digests import render, store, windows
from app.digests.collect import Collector
from app.settings import TestConfig
from app.stream.publish import Bus
from app.users import accounts, preferences
from tests.helpers.keys import SECRET
from tests.unit.web.api.helpers import bearer, jwt_bearer

DEFAULTS = {"email": None, "timezone": "UTC", "quiet": None, "rules": []}
GOOD = {"email": "bob@example.com", "timezone": "Europe/Paris",
        "quiet": {"from": "22:00", "to": "07:00"},
        "rules": [{"topic": "ops", "mode": "daily"}, {"topic": "ops.noise", "mode": "app"},
                  {"topic": "spark.job", "mode": "hourly"}, {"topic": "billing", "mode": "weekly"},
                  {"topic": "*", "mode": "critical"}]}


def put(client, body, headers=None):
    return client.put("/api/preferences", headers=headers or bearer("bob"), json=body)


def managed(redis, owner):
    return sorted((r for r in store.list_all(redis, owner) if r["managed"]),
                  key=lambda r: r["topics"])


def test_defaults_then_a_round_trip(client, redis, user):
    reply = client.get("/api/preferences", headers=bearer("bob"))
    assert reply.status_code == 200 and reply.get_json() == DEFAULTS
    reply = put(client, GOOD)
    assert reply.status_code == 200 and reply.get_json() == GOOD
    assert client.get("/api/preferences", headers=bearer("bob")).get_json() == GOOD
    # Left-out fields go back to their defaults.
    reply = put(client, {"rules": [{"topic": "ops", "mode": "app"}]})
    assert reply.get_json() == dict(DEFAULTS, rules=[{"topic": "ops", "mode": "app"}])
    accounts.create_user(redis, "eve", "eve-password")
    assert client.get("/api/preferences", headers=bearer("eve")).get_json() == DEFAULTS


def test_rules_that_email_become_the_users_managed_digests(client, redis, user):
    put(client, GOOD)
    made = managed(redis, "bob")
    assert [(r["topics"], r["exclude"], r["schedule"], r["critical_now"], r["min_severity"])
            for r in made] == [
        (["*"], ["ops", "ops.noise", "spark.job", "billing"], "daily@08:00", True, "critical"),
        (["billing"], [], "0 8 * * 1", False, "info"),
        (["ops"], ["ops.noise"], "daily@08:00", False, "info"),
        (["spark.job"], [], "hourly", False, "info")]
    assert all(r["owner"] == "bob" and r["email"] == "bob@example.com"
               and r["timezone"] == "Europe/Paris" and r["quiet"] == GOOD["quiet"]
               for r in made)
    # Rewritten, not added to, on every change; an admin's own digests are left alone.
    own = store.create(redis, "bob", {"email": "ops@example.com", "topics": ["ops"]})
    put(client, dict(GOOD, rules=[{"topic": "ops", "mode": "hourly"}]))
    assert [(r["topics"], r["schedule"]) for r in managed(redis, "bob")] == [(["ops"], "hourly")]
    put(client, {"rules": []})
    assert managed(redis, "bob") == []
    assert [r["id"] for r in store.list_all(redis, "bob")] == [own["id"]]


@pytest.mark.parametrize("body,field", [
    (None, "body"),
    (["rules"], "body"),
    ({"colour": "blue"}, "colour"),
    ({"timezone": "Mars/Olympus"}, "timezone"),
    ({"timezone": 5}, "timezone"),
    ({"timezone": "A" * 10_000}, "timezone"),       # the lookup's OSError: not "Redis down"
    ({"timezone": "Europe/../../etc/passwd"}, "timezone"),
    ({"timezone": "Europe/Paris\x00"}, "timezone"),
    ({"timezone": ""}, "timezone"),
    ({"rules": "ops"}, "rules"),
    ({"rules": [{"topic": f"t{i}", "mode": "app"} for i in range(21)]}, "rules"),
    ({"rules": ["ops"]}, "rules[0]"),
    ({"rules": [{"topic": "ops"}]}, "rules[0]"),
    ({"rules": [{"topic": "ops", "mode": "app", "x": 1}]}, "rules[0]"),
    ({"rules": [{"topic": "Ops!", "mode": "app"}]}, "rules[0].topic"),
    ({"rules": [{"topic": 5, "mode": "app"}]}, "rules[0].topic"),
    ({"rules": [{"topic": "ops", "mode": "sometimes"}]}, "rules[0].mode"),
    ({"rules": [{"topic": "ops", "mode": "app"}, {"topic": "ops", "mode": "daily"}]},
     "rules[1].topic"),
    ({"rules": [{"topic": "ops", "mode": "daily"}]}, "email"),   # emails need an address
    ({"email": "not an address"}, "email"),
    ({"email": 5}, "email"),
    ({"quiet": {"from": "22:00"}}, "quiet"),
    ({"quiet": {"from": "25:00", "to": "07:00"}}, "quiet"),
    ({"quiet": {"from": "07:00", "to": "07:00"}}, "quiet"),
    ({"quiet": "nights"}, "quiet"),
])
def test_bad_preferences_are_400_naming_the_field(client, redis, user, body, field):
    put(client, GOOD)
    before = store.list_all(redis, "bob")
    reply = put(client, body)
    assert reply.status_code == 400, reply.get_data(as_text=True)
    answer = reply.get_json()
    assert answer["error"].startswith(f"{field}: ") and answer["field"] == field
    # Nothing changed: neither the preferences nor their digests.
    assert client.get("/api/preferences", headers=bearer("bob")).get_json() == GOOD
    assert store.list_all(redis, "bob") == before


def test_not_json_is_400(client, user):
    reply = client.put("/api/preferences", headers=bearer("bob"), data="x",
                       content_type="text/plain")
    assert reply.status_code == 400 and reply.get_json()["field"] == "body"


# -- privacy: a user's own digest holds only what they may see -----------------------

def test_a_users_managed_digest_never_holds_another_users_private_notifications(
        client, redis, user):
    accounts.create_user(redis, "eve", "eve-password")
    put(client, {"email": "bob@example.com",
                 "rules": [{"topic": "*", "mode": "hourly"}, {"topic": "ops", "mode": "critical"}]})
    put(client, {"email": "eve@example.com", "rules": [{"topic": "*", "mode": "hourly"}]},
        headers=bearer("eve"))
    collector = Collector(redis)
    collector.ensure_group()
    bus = Bus(redis)
    public = bus.publish("news.item", "for all", body="PUBLIC-BODY")
    bobs = bus.publish("news.item", "SECRET-BOB", user="bob")
    eves = bus.publish("news.item", "SECRET-EVE", user="eve")
    eves_critical = bus.publish("ops.db", "OUTAGE-EVE", severity="critical", user="eve")
    bobs_critical = bus.publish("ops.db", "OUTAGE-BOB", severity="critical", user="bob")
    while collector.step(block_ms=50):
        pass

    def contents(owner):
        [record] = [r for r in managed(redis, owner) if r["topics"] == ["*"]]
        message, _, total = render.preview(redis, record, "http://herald.test/")
        text, html = render.parts(message)
        [window] = redis.zrange(windows.windows_key(record["id"]), 0, -1)
        _, items, _ = windows.read(redis, record["id"], float(window))
        return {n["id"] for n in items}, text + html, total

    bob_ids, bob_text, bob_total = contents("bob")
    assert {public, bobs} <= bob_ids and not {eves, eves_critical} & bob_ids
    assert "SECRET-BOB" in bob_text and "PUBLIC-BODY" not in bob_text  # titles only
    assert "SECRET-EVE" not in bob_text and "OUTAGE-EVE" not in bob_text and bob_total == 2
    eve_ids, eve_text, _ = contents("eve")
    assert {public, eves, eves_critical} <= eve_ids and not {bobs, bobs_critical} & eve_ids
    assert "SECRET-EVE" in eve_text and "OUTAGE-EVE" in eve_text
    assert "SECRET-BOB" not in eve_text and "OUTAGE-BOB" not in eve_text
    # Bob's critical rule: his own critical notification goes out at once, eve's never.
    outbox = [orjson.loads(job)["envelope"]["id"] for job in redis.lrange(windows.OUTBOX, 0, -1)]
    assert outbox == [bobs_critical]


# -- a host-app token limited to some topics ---------------------------------------------

@pytest.fixture
def jwt_client(redis_server, redis):
    return create_app(TestConfig(redis_server.url, JWT_SECRET=SECRET)).test_client()


def test_a_limited_host_token_may_not_change_preferences(jwt_client, redis):
    """Preferences are account-wide (docs/contract.md, capabilities): even rules inside
    its topics are refused to a token limited to some topics."""
    limited = jwt_bearer("carol", topics=["board"])
    reply = put(jwt_client, {"email": "carol@example.com",
                             "rules": [{"topic": "board.card", "mode": "hourly"}]}, limited)
    assert reply.status_code == 403 and "limited to some topics" in reply.get_json()["error"]
    assert managed(redis, "carol") == []
    # Without a limit, the same user may choose any topic.
    reply = put(jwt_client, {"email": "carol@example.com",
                             "rules": [{"topic": "*", "mode": "hourly"}]}, jwt_bearer("carol"))
    assert reply.status_code == 200
    assert preferences.get(redis, "carol")["rules"] == [{"topic": "*", "mode": "hourly"}]
