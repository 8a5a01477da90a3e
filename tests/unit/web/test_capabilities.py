"""docs/contract.md's capability table, checked against the app: every route is in the
table (a new route that is not fails here), and a token limited to ``board`` gets what
its column says on each one: 403 where it says ``no``, in where it says yes or
``topics`` (and then only for what it may see), and nothing more than no credential
at all where the route takes none (``—``).

alice is a Herald user subscribed to everything; her host app mints her a JWT
limited to ``board``. Socket.IO events: tests/integration/realtime/test_capabilities_live.py.
"""
import pytest

from app import create_app
from app.services import of as of_app
from app.settings import TestConfig
from app.stream.publish import Bus
from app.users import accounts, archive_and_snooze, preferences, read_state, subscriptions
from tests.helpers.capabilities import allows, events, table
from tests.helpers.keys import SECRET
from tests.unit.web.api.helpers import bearer, jwt_bearer

ROWS = table()
ROUTES = {what: cells for what, cells in ROWS.items() if not what.startswith("Socket.IO ")}
IGNORED_METHODS = {"HEAD", "OPTIONS"}


@pytest.fixture(scope="module")
def jwt_app(redis_server):
    return create_app(TestConfig(redis_server.url, JWT_SECRET=SECRET))


@pytest.fixture
def world(jwt_app, redis):
    accounts.create_user(redis, "alice", "alice-password")
    subscriptions.add(redis, "alice", ["*"], limit=10)
    preferences.put(redis, "alice", {"email": "alice@example.com", "rules": [
        {"topic": "ops", "mode": "critical"}, {"topic": "billing", "mode": "daily"}]})
    bus = Bus(redis)
    ids = {"board": bus.publish("board.card", "in its topics"),
           "ops": bus.publish("ops.db", "outside its topics"),
           "mine": bus.publish("ops.db", "private to alice", user="alice")}
    return jwt_app.test_client(), ids


def limited():
    return jwt_bearer("alice", topics=["board"])


def rules_of(app):
    """``"METHOD /rule"`` of every route the app serves."""
    return sorted(f"{method} {rule.rule}" for rule in app.url_map.iter_rules()
                  for method in rule.methods - IGNORED_METHODS)


def test_every_route_and_event_is_in_the_table_and_nothing_else(jwt_app):
    served = rules_of(jwt_app)
    assert [r for r in served if r not in ROUTES] == [], "routes missing from the table"
    assert [r for r in ROUTES if r not in served] == [], "rows for routes that do not exist"
    namespace = of_app(jwt_app).namespace
    handled = sorted(name[3:] for name in dir(namespace)
                     if name.startswith("on_") and name != "on_disconnect"
                     and callable(getattr(namespace, name)))
    assert handled == sorted(events(ROWS)), "Socket.IO events and the table differ"


def test_a_limited_cell_never_exceeds_the_users(jwt_app):
    for what, cells in ROWS.items():
        if cells["user"] == "no":
            assert cells["limited"] == "no", what


def _path(rule, ids):
    return (rule.replace("<entry_id>", ids["board"]).replace("<digest_id>", "d1")
            .replace("<endpoint_id>", "w1").replace("<name>", "herald.js")
            .replace("<path:filename>", "css/app.css"))


def _call(http, route, ids, headers):
    method, rule = route.split(" ", 1)
    reply = http.open(_path(rule, ids), method=method, headers=headers, json={}
                      if method in ("POST", "PUT", "PATCH") else None)
    status = reply.status_code
    reply.close()  # an event stream is never read to its end
    return status


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_a_limited_token_gets_what_its_column_says(world, route):
    http, ids = world
    cell = ROUTES[route]["limited"]
    status = _call(http, route, ids, limited())
    if cell == "no":
        assert status == 403, f"{route}: {status}"
    elif cell == "—":
        assert status == _call(http, route, ids, {}), f"{route}: the token changed the answer"
    else:
        assert allows(cell) and status not in (401, 403), f"{route}: {status}"


def test_limited_preferences_are_refused_and_left_as_they_were(world, redis):
    http, _ids = world
    before = preferences.get(redis, "alice")
    reply = http.put("/api/preferences", headers=limited(),
                     json={"email": "mallory@example.com", "rules": []})
    assert reply.status_code == 403 and "limited to some topics" in reply.get_json()["error"]
    assert http.get("/api/preferences", headers=limited()).status_code == 403
    assert preferences.get(redis, "alice") == before
    assert http.get("/api/preferences", headers=jwt_bearer("alice")).status_code == 200


def test_per_notification_actions_outside_its_topics_are_refused(world, redis):
    http, ids = world
    for body in ({"archive": [ids["ops"]]}, {"unarchive": [ids["board"], ids["ops"]]},
                 {"snooze": {"id": ids["ops"], "until": 9_999_999_999_999}},
                 {"unsnooze": ids["ops"]}):
        reply = http.post("/api/notification-state", headers=limited(), json=body)
        assert reply.status_code == 403, (body, reply.get_json())
        assert ids["ops"] in reply.get_json()["error"] and reply.get_json()["field"]
    assert archive_and_snooze.get(redis, "alice")["archived"] == []
    for body in ({"ids": [ids["ops"]]}, {"unread": [ids["ops"]]}, {"upto": ids["board"]}):
        reply = http.post("/api/read-state", headers=limited(), json=body)
        assert reply.status_code == 403, (body, reply.get_json())
    # Inside its topics, and its user's private ones: allowed.
    reply = http.post("/api/notification-state", headers=limited(),
                      json={"archive": [ids["board"], ids["mine"]]})
    assert reply.status_code == 200, reply.get_json()
    reply = http.post("/api/read-state", headers=limited(), json={"ids": [ids["board"]]})
    assert reply.status_code == 200, reply.get_json()
    # A full token may do what the limited one may not.
    reply = http.post("/api/notification-state", headers=jwt_bearer("alice"),
                      json={"archive": [ids["ops"]]})
    assert reply.status_code == 200
    reply = http.post("/api/read-state", headers=bearer("alice"), json={"ids": [ids["ops"]]})
    assert reply.status_code == 200


def test_what_a_limited_token_reads_of_the_users_state_is_narrowed(world, redis):
    http, ids = world
    archive_and_snooze.archive(redis, "alice", [ids["board"], ids["ops"]])
    http.post("/api/read-state", headers=bearer("alice"), json={"ids": [ids["board"], ids["ops"]]})
    state = http.get("/api/notification-state", headers=limited()).get_json()
    assert state["archived"] == [ids["board"]]
    assert http.get("/api/read-state", headers=limited()).get_json()["ids"] == [ids["board"]]
    assert http.get(f"/api/notifications/{ids['ops']}", headers=limited()).status_code == 404
    full = http.get("/api/notification-state", headers=jwt_bearer("alice")).get_json()
    assert sorted(full["archived"]) == sorted([ids["board"], ids["ops"]])


@pytest.mark.parametrize("field", ["upto", "seen"])
def test_a_limited_token_moves_no_account_wide_watermark(world, redis, field):
    """``upto`` (everything read) and ``seen`` (everything shown: the "new" badge of
    every tab) cover every topic, so a token limited to ``board`` may move neither,
    whatever id it names (issue 35: ``seen`` at an ``ops`` id, or far in the future,
    was applied and cleared the badge everywhere)."""
    http, ids = world
    before = read_state.get(redis, "alice")
    for value in (ids["ops"], ids["board"], ids["mine"], "9999999999999-0"):
        for body in ({field: value}, {field: value, "ids": [ids["board"]]}):
            reply = http.post("/api/read-state", headers=limited(), json=body)
            assert reply.status_code == 403, (body, reply.get_json())
            assert reply.get_json()["field"] == field
            assert reply.get_json()["error"].startswith(f"{field}: ")
            assert "limited to board" in reply.get_json()["error"]
    assert read_state.get(redis, "alice") == before
    # An explicit null moves nothing, and a full token may move it.
    assert http.post("/api/read-state", headers=limited(), json={field: None}).status_code == 200
    reply = http.post("/api/read-state", headers=jwt_bearer("alice"), json={field: ids["ops"]})
    assert reply.status_code == 200 and reply.get_json()[field] == ids["ops"]


def test_admin_routes_refuse_a_limited_credential_even_an_admins(world, monkeypatch):
    """Every admin route is account-wide (digests, webhooks, rollups, the console,
    publishing to any topic). A
    host-app user is never an admin today (app/web/auth/bearer.py); should a limited
    credential ever carry ``admin``, the admin routes still refuse it."""
    from app.web.api import access
    from app.web.auth.bearer import Identity
    http, _ids = world
    monkeypatch.setattr(access, "identify", lambda: Identity("root", True, "token", ["board"]))
    admin_routes = [r for r, cells in ROUTES.items() if cells["user"] == "no"
                    and cells["admin"] == "yes"]
    assert {"DELETE /api/webhooks/<endpoint_id>", "POST /api/notifications"} <= set(admin_routes)
    for route in admin_routes:
        assert _call(http, route, _ids, {}) == 403, route
    monkeypatch.setattr(access, "identify", lambda: Identity("root", True, "token"))
    assert _call(http, "GET /api/digests", _ids, {}) != 403
