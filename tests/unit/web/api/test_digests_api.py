"""/api/digests: admins manage their own digest subscriptions, by session or token."""
import pytest

from app.stream.publish import Bus
from tests.support import csrf_of_dashboard, issue_token, sign_in

GOOD = {"email": "ops@example.com", "topics": ["ops", "spark"], "min_severity": "warning",
        "schedule": "daily@08:30", "timezone": "Europe/Paris", "enabled": True, "critical_now": True}


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
    ({"timezone": "A" * 10_000}, "timezone"),   # the lookup's OSError: not "Redis down"
    ({"timezone": "/etc/localtime"}, "timezone"),
    ({"enabled": "yes"}, "enabled"),
    ({"colour": "red"}, "colour"),
])
def test_bad_fields_are_400_naming_the_field(client, admin, change, field):
    reply = client.post("/api/digests", json=dict(GOOD, **change), headers=bearer(admin[0]))
    assert reply.status_code == 400
    assert reply.get_json()["error"].startswith(f"{field}: ")
    assert reply.get_json()["field"] == field and len(reply.get_json()["error"]) < 200
    assert client.get("/api/digests", headers=bearer(admin[0])).get_json() == {"digests": []}


def test_missing_required_fields(client, admin):
    reply = client.post("/api/digests", json={"topics": ["ops"]}, headers=bearer(admin[0]))
    assert reply.status_code == 400 and reply.get_json()["error"] == "email: is required"


def test_only_admins_and_only_their_own(client, redis, admin, user, api_key):
    from app.users import accounts
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


def test_preview_document_is_the_email_with_a_policy_of_its_own(client, redis, admin, user):
    """GET /api/digests/<id>/preview.html: the HTML part as a document of its own,
    its inline styles allowed, no script, framed by Herald's pages only."""
    from app.users import accounts
    accounts.create_user(redis, "eve", "eve-password", admin=True)
    created = client.post("/api/digests", json=GOOD, headers=bearer(admin[0])).get_json()
    url = f"/api/digests/{created['id']}/preview.html"
    empty = client.get(url, headers=bearer(admin[0]))
    assert empty.status_code == 200 and "Nothing has been collected" in empty.get_data(as_text=True)
    from app.digests.collect import Collector
    Bus(redis).publish("ops.db", "Replica <lagging>", severity="error")
    collector = Collector(redis)
    while collector.step(block_ms=10):
        pass
    reply = client.get(url, headers=bearer(admin[0]))
    assert reply.status_code == 200 and reply.mimetype == "text/html"
    page = reply.get_data(as_text=True)
    assert page.startswith("<!doctype html>") and 'style="' in page
    assert "Replica &lt;lagging&gt;" in page
    policy = dict(d.split(" ", 1) if " " in d else (d, "") for d in
                  reply.headers["Content-Security-Policy"].split("; "))
    assert policy["default-src"] == "'none'" and policy["style-src"] == "'unsafe-inline'"
    assert "script-src" not in policy and "sandbox" in policy
    assert policy["frame-ancestors"] == "'self'"
    assert reply.headers["X-Frame-Options"] == "SAMEORIGIN"
    assert reply.headers["Cache-Control"] == "no-store"
    assert client.get(url).status_code == 401
    assert client.get(url, headers=bearer(user[0])).status_code == 403
    assert client.get(url, headers=bearer("eve")).status_code == 404  # another admin's
    unknown = client.get("/api/digests/nosuchdigest/preview.html", headers=bearer(admin[0]))
    assert unknown.status_code == 404 and unknown.get_json()["error"] == "no such digest subscription"


def test_preview_document_by_session(client, redis, admin):
    """What the page's <iframe> does: the signed-in session's cookie, no token."""
    created = client.post("/api/digests", json=GOOD, headers=bearer(admin[0])).get_json()
    sign_in(client, *admin)
    reply = client.get(f"/api/digests/{created['id']}/preview.html")
    assert reply.status_code == 200 and reply.mimetype == "text/html"


def test_pages_may_frame_herald_only():
    from app.web.security import CONTENT_SECURITY_POLICY
    directives = dict(d.split(" ", 1) for d in CONTENT_SECURITY_POLICY.split("; "))
    assert directives["frame-src"] == "'self'" and directives["frame-ancestors"] == "'none'"


@pytest.mark.parametrize("schedule,words", [
    ("0 9 * * mon-fri", "At 09:00, Monday through Friday"),
    ("daily@07:30", "Every day at 07:30"),
    ("hourly", "Every hour, on the hour"),
    ("*/15 * * * *", "Every 15 minutes"),
])
def test_describe_a_schedule(client, admin, schedule, words):
    reply = client.get("/api/digests/describe", query_string={"schedule": schedule},
                       headers=bearer(admin[0]))
    assert reply.status_code == 200 and reply.get_json() == {"words": words}


@pytest.mark.parametrize("schedule,words", [
    ("0 9 * * mon-fri", "Um 09:00, Montag bis Freitag"),
    ("0 8 * * 1", "Um 08:00, nur am Montag"),
    ("daily@07:30", "Täglich um 07:30"),
    ("hourly", "Stündlich, zur vollen Stunde"),
])
def test_describe_a_schedule_in_german_for_a_german_reader(client, admin, schedule, words):
    """A German page showed "Every day at 08:00" (cron-descriptor's German keeps English
    day names: "nur am Monday")."""
    reply = client.get("/api/digests/describe", query_string={"schedule": schedule},
                       headers=dict(bearer(admin[0]), **{"Accept-Language": "de-DE,de;q=0.9"}))
    assert reply.status_code == 200 and reply.get_json() == {"words": words}


@pytest.mark.parametrize("schedule", ["", "weekly", "61 * * * *", "0 0 31 2 *", "* * * * * *",
                                      "x" * 201])
def test_describe_refuses_what_saving_would_refuse(client, admin, schedule):
    reply = client.get("/api/digests/describe", query_string={"schedule": schedule},
                       headers=bearer(admin[0]))
    assert reply.status_code == 400 and reply.get_json()["error"].startswith("schedule: ")


def test_describe_is_for_admins(client, user):
    reply = client.get("/api/digests/describe?schedule=hourly", headers=bearer(user[0]))
    assert reply.status_code == 403


def test_digests_carry_their_schedule_in_words(client, admin):
    created = client.post("/api/digests", json=dict(GOOD, schedule="0 9 * * mon-fri"),
                          headers=bearer(admin[0])).get_json()
    assert created["schedule_words"] == "At 09:00, Monday through Friday"
