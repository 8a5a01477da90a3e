"""POST /api/notifications: every status code of the REST contract."""
import orjson
import pytest

from app import create_app
from app.services import of as of_app
from app.settings import TestConfig
from app.stream.keys import STREAM
from app.users import accounts
from tests.support import csrf_of_dashboard, free_port, issue_token, sign_in


def bearer(credential):
    return {"Authorization": f"Bearer {credential}"}


def token_for(name):
    return issue_token(name)


def test_api_key_publishes(client, redis, api_key):
    reply = client.post("/api/notifications", headers=bearer(api_key),
                        json={"topic": "ops.deploy", "title": "Deployed", "severity": "success"})
    assert reply.status_code == 201
    body = reply.get_json()
    assert set(body) == {"id", "ts"}
    [(entry_id, fields)] = redis.xrange(STREAM)
    assert entry_id.decode() == body["id"]
    assert orjson.loads(fields[b"envelope"])["severity"] == "success"


@pytest.mark.parametrize("path, body, last", [
    ("/api/notifications", {"topic": "ops.a", "title": "one"}, lambda reply: reply["id"]),
    ("/api/notifications/batch", {"notifications": [{"topic": "ops.a", "title": "one"},
                                                    {"topic": "ops.b", "title": "two"}]},
     lambda reply: reply["notifications"][-1]["id"]),
])
def test_a_publish_answers_once_this_process_relayed_it(client, app, api_key, monkeypatch,
                                                        path, body, last):
    """Its own clients first (Relay.reached): asked for the newest id it wrote, and only
    for a publish that wrote (a replayed idempotent one waits for nothing)."""
    asked = []
    monkeypatch.setattr(of_app(app).relay, "reached", asked.append)
    headers = dict(bearer(api_key), **{"Idempotency-Key": "k1"})
    reply = client.post(path, headers=headers, json=body)
    assert reply.status_code == 201 and asked == [last(reply.get_json())]
    assert client.post(path, headers=headers, json=body).status_code == 201
    assert len(asked) == 1


def test_admin_token_publishes(client, admin):
    reply = client.post("/api/notifications", headers=bearer(token_for(admin[0])),
                        json={"topic": "ops", "title": "x"})
    assert reply.status_code == 201


@pytest.mark.parametrize("envelope,field", [
    ({"title": "no topic"}, "topic"),
    ({"topic": "Bad", "title": "x"}, "topic"),
    ({"topic": "ok", "title": ""}, "title"),
    ({"topic": "ok", "title": "x", "severity": "loud"}, "severity"),
    ({"topic": "ok", "title": "x", "id": "1-0"}, "id"),
    ({"topic": "ok", "title": "x", "extra": 1}, "extra"),
    ({"topic": "ok", "title": "x", "data": [1]}, "data"),
])
def test_bad_envelope_is_400_naming_the_field(client, redis, api_key, envelope, field):
    reply = client.post("/api/notifications", headers=bearer(api_key), json=envelope)
    assert reply.status_code == 400
    assert reply.get_json()["error"].startswith(f"{field}: ")
    assert redis.xlen(STREAM) == 0


def test_body_that_is_not_json_is_400(client, api_key):
    reply = client.post("/api/notifications", headers=bearer(api_key), data="{nope",
                        content_type="application/json")
    assert reply.status_code == 400 and "not valid JSON" in reply.get_json()["error"]
    reply = client.post("/api/notifications", headers=bearer(api_key), data="topic=x")
    assert reply.status_code == 400 and "application/json" in reply.get_json()["error"]
    reply = client.post("/api/notifications", headers=bearer(api_key), json=["x"])
    assert reply.status_code == 400 and reply.get_json()["error"].startswith("envelope: ")


@pytest.mark.parametrize("headers", [
    {},
    {"Authorization": "Bearer hk_not-a-real-key"},
    {"Authorization": "Bearer forged.token.value"},
    {"Authorization": "Basic dXNlcjpwYXNz"},
    {"Authorization": "Bearer "},
])
def test_missing_or_bad_credentials_are_401(client, redis, headers):
    reply = client.post("/api/notifications", headers=headers, json={"topic": "a", "title": "b"})
    assert reply.status_code == 401
    assert reply.get_json()["error"]
    assert redis.xlen(STREAM) == 0


def test_non_admin_is_403(client, redis, user):
    reply = client.post("/api/notifications", headers=bearer(token_for(user[0])),
                        json={"topic": "a", "title": "b"})
    assert reply.status_code == 403
    sign_in(client, *user)
    reply = client.post("/api/notifications", json={"topic": "a", "title": "b"})
    assert reply.status_code == 403
    assert redis.xlen(STREAM) == 0


def test_admin_session_needs_the_csrf_token(client, redis, admin):
    assert sign_in(client, *admin).status_code == 302
    csrf = csrf_of_dashboard(client)
    reply = client.post("/api/notifications", json={"topic": "a", "title": "b"})
    assert reply.status_code == 400 and "CSRF" in reply.get_json()["error"]
    assert redis.xlen(STREAM) == 0
    reply = client.post("/api/notifications", json={"topic": "a", "title": "b"},
                        headers={"X-CSRFToken": csrf})
    assert reply.status_code == 201


def test_over_64_kib_is_413(client, redis, api_key):
    huge = {"topic": "a", "title": "b", "body": "x" * (70 * 1024)}
    reply = client.post("/api/notifications", headers=bearer(api_key), json=huge)
    assert reply.status_code == 413
    assert "64 KiB" in reply.get_json()["error"]
    assert redis.xlen(STREAM) == 0


def test_redis_unreachable_is_503_and_healthz_503(tmp_path):
    dead = create_app(TestConfig(f"redis://127.0.0.1:{free_port()}/0"))
    client = dead.test_client()
    reply = client.post("/api/notifications", headers=bearer("hk_anything"),
                        json={"topic": "a", "title": "b"})
    assert reply.status_code == 503
    assert "Redis is unreachable" in reply.get_json()["error"]
    assert client.get("/healthz").status_code == 503


def test_healthz_ok(client):
    reply = client.get("/healthz")
    assert reply.status_code == 200 and reply.get_json()["status"] == "ok"


def test_idempotency_key_stores_a_repeat_once(client, redis, api_key):
    send = {"topic": "ops.deploy", "title": "Deployed"}
    headers = dict(bearer(api_key), **{"Idempotency-Key": "deploy-42"})
    first = client.post("/api/notifications", headers=headers, json=send)
    again = client.post("/api/notifications", headers=headers, json=send)
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json()
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true"
    assert redis.xlen(STREAM) == 1


def test_idempotency_key_reused_for_another_notification_is_422(client, redis, api_key):
    headers = dict(bearer(api_key), **{"Idempotency-Key": "k"})
    client.post("/api/notifications", headers=headers, json={"topic": "a", "title": "one"})
    reply = client.post("/api/notifications", headers=headers, json={"topic": "a", "title": "two"})
    assert reply.status_code == 422
    assert reply.get_json()["field"] == "Idempotency-Key"
    assert redis.xlen(STREAM) == 1


def test_idempotency_keys_are_each_publishers_own(client, redis, api_key, admin):
    other = accounts.create_api_key(redis, "other")
    for credential in (api_key, other, token_for(admin[0])):
        reply = client.post("/api/notifications", json={"topic": "a", "title": "same"},
                            headers=dict(bearer(credential), **{"Idempotency-Key": "shared"}))
        assert reply.status_code == 201 and "Idempotent-Replayed" not in reply.headers
    assert redis.xlen(STREAM) == 3


@pytest.mark.parametrize("key", ["", "x" * 256, "has space", "caf\u00e9"])
def test_bad_idempotency_key_is_400(client, redis, api_key, key):
    reply = client.post("/api/notifications", json={"topic": "a", "title": "b"},
                        headers=dict(bearer(api_key), **{"Idempotency-Key": key.encode().decode("latin-1")}))
    assert reply.status_code == 400
    assert reply.get_json()["field"] == "Idempotency-Key"
    assert "visible ASCII" in reply.get_json()["error"]
    assert redis.xlen(STREAM) == 0


def test_a_batch_is_published_in_order_and_answers_every_id(client, redis, api_key):
    reply = client.post("/api/notifications/batch", headers=bearer(api_key), json={
        "notifications": [{"topic": "ops.a", "title": "one"}, {"topic": "ops.b", "title": "two"}]})
    assert reply.status_code == 201
    ids = [n["id"] for n in reply.get_json()["notifications"]]
    assert [entry_id.decode() for entry_id, _ in redis.xrange(STREAM)] == ids
    keyed = dict(bearer(api_key), **{"Idempotency-Key": "b1"})
    again = client.post("/api/notifications/batch", headers=keyed,
                        json={"notifications": [{"topic": "ops.c", "title": "three"}]})
    repeat = client.post("/api/notifications/batch", headers=keyed,
                         json={"notifications": [{"topic": "ops.c", "title": "three"}]})
    assert repeat.get_json() == again.get_json() and repeat.headers["Idempotent-Replayed"] == "true"
    assert redis.xlen(STREAM) == 3


@pytest.mark.parametrize("body, field", [
    ({"notifications": [{"topic": "ok", "title": "x"}, {"topic": "ok"}]}, "notifications[1].title"),
    ({"notifications": []}, "notifications"),
    ({"notifications": [{"topic": "ok", "title": "x"}], "extra": 1}, "notifications"),
    ([{"topic": "ok", "title": "x"}], "notifications"),
])
def test_a_bad_batch_names_the_fault_and_stores_nothing(client, redis, api_key, body, field):
    reply = client.post("/api/notifications/batch", headers=bearer(api_key), json=body)
    assert reply.status_code == 400 and reply.get_json()["field"] == field
    assert redis.xlen(STREAM) == 0


def test_only_a_redis_outage_is_503(app, client, redis, user, monkeypatch):
    """An OSError that is not Redis's (a file, a lookup) is a fault of ours, a 500 that
    is logged, not "Redis is unreachable" (503), which clients retry forever."""
    from app.users import preferences

    def broken(*args, **kwargs):
        raise OSError(36, "File name too long")

    monkeypatch.setattr(preferences, "put", broken)
    monkeypatch.setitem(app.config, "PROPAGATE_EXCEPTIONS", False)  # as in production
    reply = client.put("/api/preferences", headers=bearer(token_for("bob")),
                       json={"timezone": "UTC"})
    assert reply.status_code == 500 and "Redis" not in reply.get_json()["error"]


def test_preferences_on_a_dead_redis_are_503():
    dead = create_app(TestConfig(f"redis://127.0.0.1:{free_port()}/0"))
    reply = dead.test_client().put("/api/preferences", headers=bearer("hk_anything"),
                                   json={"timezone": "Europe/Paris"})
    assert reply.status_code == 503 and "Redis is unreachable" in reply.get_json()["error"]
