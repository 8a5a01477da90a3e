"""/api/digests: admins manage their own digest subscriptions, by session or token."""
import pytest

from app.bus import Bus
from tests.support import csrf_of_dashboard, sign_in

GOOD = {"email": "ops@example.com", "topics": ["ops", "spark"], "min_severity": "warning",
        "schedule": "daily@08:30", "timezone": "Europe/Paris", "enabled": True, "critical_now": True}

from tests.support import issue_token


def bearer(name):
    return {"Authorization": f"Bearer {issue_token(name)}"}


def test_create_read_update_delete(client, admin):
    reply = client.post("/api/digests", json=GOOD, headers=bearer(admin[0]))
    assert reply.status_code == 201
    created = reply.get_json()
    assert {k: created[k] for k in GOOD} == GOOD and len(created["id"]) == 12
    url = f"/api/digests/{created['id']}"
    assert client.get(url, headers=bearer(admin[0])).get_json() == created
    assert client.get("/api/digests", headers=bearer(admin[0])).get_json() == {"digests": [created]}
    reply = client.patch(url, json={"enabled": False, "schedule": "0 9 * * mon-fri"},
                         headers=bearer(admin[0]))
    assert reply.status_code == 200
    assert reply.get_json()["enabled"] is False and reply.get_json()["schedule"] == "0 9 * * mon-fri"
    assert client.delete(url, headers=bearer(admin[0])).status_code == 204
    assert client.get(url, headers=bearer(admin[0])).status_code == 404


def test_defaults(client, admin):
    reply = client.post("/api/digests", json={"email": "a@b.co", "topics": ["*"]},
                        headers=bearer(admin[0]))
    body = reply.get_json()
    assert (body["min_severity"], body["schedule"], body["timezone"], body["enabled"],
            body["critical_now"]) == ("info", "daily@08:00", "UTC", True, False)


@pytest.mark.parametrize("change,field", [
    ({"email": "not-an-address"}, "email"),
    ({"email": None}, "email"),
    ({"topics": []}, "topics"),
    ({"topics": ["Bad Topic"]}, "topics[0]"),
    ({"min_severity": "loud"}, "min_severity"),
    ({"schedule": "weekly"}, "schedule"),
    ({"schedule": "61 * * * *"}, "schedule"),
    ({"timezone": "Mars/Olympus"}, "timezone"),
    ({"enabled": "yes"}, "enabled"),
    ({"colour": "red"}, "colour"),
])
def test_bad_fields_are_400_naming_the_field(client, admin, change, field):
    reply = client.post("/api/digests", json=dict(GOOD, **change), headers=bearer(admin[0]))
    assert reply.status_code == 400
    assert reply.get_json()["error"].startswith(f"{field}: ")
    assert client.get("/api/digests", headers=bearer(admin[0])).get_json() == {"digests": []}


def test_missing_required_fields(client, admin):
    reply = client.post("/api/digests", json={"topics": ["ops"]}, headers=bearer(admin[0]))
    assert reply.status_code == 400 and reply.get_json()["error"] == "email: is required"


def test_only_admins_and_only_their_own(client, redis, admin, user, api_key):
    from app import accounts
    accounts.create_user(redis, "eve", "eve-password", admin=True)
    created = client.post("/api/digests", json=GOOD, headers=bearer(admin[0])).get_json()
    url = f"/api/digests/{created['id']}"
    assert client.get("/api/digests").status_code == 401
    assert client.get("/api/digests", headers=bearer(user[0])).status_code == 403
    assert client.get("/api/digests", headers={"Authorization": f"Bearer {api_key}"}).status_code == 403
    assert client.get(url, headers=bearer("eve")).status_code == 404
    assert client.patch(url, json={"enabled": False}, headers=bearer("eve")).status_code == 404
    assert client.delete(url, headers=bearer("eve")).status_code == 404
    assert client.get("/api/digests", headers=bearer("eve")).get_json() == {"digests": []}


def test_session_writes_need_the_csrf_token(client, admin):
    sign_in(client, *admin)
    assert client.post("/api/digests", json=GOOD).status_code == 400  # no CSRF token
    reply = client.post("/api/digests", json=GOOD, headers={"X-CSRFToken": csrf_of_dashboard(client)})
    assert reply.status_code == 201
    assert client.get("/api/digests").status_code == 200


def test_preview(client, redis, admin):
    created = client.post("/api/digests", json=dict(GOOD, critical_now=False),
                          headers=bearer(admin[0])).get_json()
    url = f"/api/digests/{created['id']}/preview"
    empty = client.get(url, headers=bearer(admin[0])).get_json()
    assert empty["total"] == 0 and empty["text"] is None and empty["window"] > 0
    from app.digests.collect import Collector
    Bus(redis).publish("ops.db", "Replica <lagging>", severity="error")
    collector = Collector(redis)
    while collector.step(block_ms=10):
        pass
    shown = client.get(url, headers=bearer(admin[0])).get_json()
    assert shown["total"] == 1 and "Replica <lagging>" in shown["text"]
    assert "Replica &lt;lagging&gt;" in shown["html"]
    assert shown["subject"].startswith("Herald digest: 1 notification (1 error)")


def test_one_admin_may_have_at_most_twenty_digests(client, admin, redis):
    for n in range(20):
        assert client.post("/api/digests", json=dict(GOOD, email=f"o{n}@example.com"),
                           headers=bearer(admin[0])).status_code == 201
    refused = client.post("/api/digests", json=GOOD, headers=bearer(admin[0]))
    assert refused.status_code == 409 and "at most 20 per user" in refused.get_json()["error"]
    assert len(client.get("/api/digests", headers=bearer(admin[0])).get_json()["digests"]) == 20
