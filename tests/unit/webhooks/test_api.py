"""``/api/webhooks`` over the real app and Redis: who may, what is refused, what is shown."""
import time

import pytest

from app.webhooks import rotation, store
from tests.helpers.webhooks import register
from tests.support import issue_token, sign_in

RECEIVER = "http://127.0.0.1:9/hook"


def auth(token):
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("url, why", [
    ("http://127.0.0.1/hook", "loopback"),
    ("http://localhost:8080/", "loopback"),
    ("http://[::1]/", "loopback"),
    ("http://[::ffff:127.0.0.1]/", "loopback"),
    ("http://10.1.2.3/", "private"),
    ("http://192.168.0.10/", "private"),
    ("http://169.254.169.254/latest/meta-data", "link-local"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://224.0.0.1/", "multicast"),
    ("http://100.64.0.1/", "not public"),
    ("http://240.0.0.1/", "reserved"),
    ("ftp://example.com/", "http:// or https://"),
    ("file:///etc/passwd", "http:// or https://"),
    ("http://user:pw@203.0.113.9/", "user name or password"),
    ("not a url", "spaces"),
    ("http:///nohost", "names no host"),
    ("http://example.com:99999/", "port"),
])
def test_a_refused_url_is_rejected_at_registration(client, admin, redis, url, why):
    reply = client.post("/api/webhooks", json={"url": url, "topics": ["*"]},
                        headers=auth(issue_token(admin[0])))
    assert reply.status_code == 400
    error = reply.get_json()["error"]
    assert error.startswith("url: ") and why in error
    assert store.list_all(redis) == []


def test_allowed_ranges_and_hosts(client, admin, redis, monkeypatch):
    token = issue_token(admin[0])
    monkeypatch.setenv("WEBHOOK_ALLOW", "10.0.0.0/8, localhost")
    register(client, token, "http://10.1.2.3/hook")
    register(client, token, "http://localhost:8080/")
    reply = client.post("/api/webhooks", json={"url": "http://192.168.0.1/", "topics": ["*"]},
                        headers=auth(token))
    assert reply.status_code == 400 and "private" in reply.get_json()["error"]


@pytest.mark.parametrize("body, field", [
    ({"topics": ["*"]}, "url"),
    ({"url": RECEIVER}, "topics"),
    ({"url": RECEIVER, "topics": []}, "topics"),
    ({"url": RECEIVER, "topics": ["Not A Topic"]}, "topics[0]"),
    ({"url": RECEIVER, "topics": ["*"], "min_severity": "loud"}, "min_severity"),
    ({"url": RECEIVER, "topics": ["*"], "private": "yes"}, "private"),
    ({"url": RECEIVER, "topics": ["*"], "secret": "short"}, "secret"),
    ({"url": RECEIVER, "topics": ["*"], "colour": "red"}, "colour"),
    (["not", "an", "object"], "body"),
])
def test_bad_fields_are_named(client, admin, redis, allow_loopback, body, field):
    reply = client.post("/api/webhooks", json=body, headers=auth(issue_token(admin[0])))
    assert reply.status_code == 400
    assert reply.get_json()["error"].startswith(f"{field}: ")


def test_create_read_list_delete(client, admin, redis, allow_loopback):
    token = issue_token(admin[0])
    made = register(client, token, RECEIVER, topics=["ops", "spark.job"], min_severity="error",
                    private=True)
    assert made["secret"].startswith("whsec_") and len(made["secret"]) > 40
    assert (made["url"], made["topics"], made["min_severity"], made["private"],
            made["created_by"]) == (RECEIVER, ["ops", "spark.job"], "error", True, admin[0])
    given = register(client, token, RECEIVER, secret="my-own-secret-of-some-length")
    assert given["secret"] == "my-own-secret-of-some-length"

    one = client.get(f"/api/webhooks/{made['id']}", headers=auth(token)).get_json()
    assert "secret" not in one  # shown once, at creation
    assert (one["pending"], one["parked"], one["delivered"], one["last_error"],
            one["last_success_at"]) == (0, 0, 0, None, None)
    listed = client.get("/api/webhooks", headers=auth(token)).get_json()["webhooks"]
    assert [w["id"] for w in listed] == [made["id"], given["id"]]
    assert all("secret" not in w for w in listed)
    assert client.get(f"/api/webhooks/{made['id']}/failed",
                      headers=auth(token)).get_json() == {"failed": []}

    assert client.delete(f"/api/webhooks/{made['id']}", headers=auth(token)).status_code == 204
    for path in (f"/api/webhooks/{made['id']}", f"/api/webhooks/{made['id']}/failed"):
        reply = client.get(path, headers=auth(token))
        assert reply.status_code == 404 and reply.get_json() == {"error": "no such webhook"}
    assert client.delete(f"/api/webhooks/{made['id']}", headers=auth(token)).status_code == 404
    assert client.post(f"/api/webhooks/{made['id']}/retry", headers=auth(token)).status_code == 404
    assert [w["id"] for w in store.list_all(redis)] == [given["id"]]


def test_who_may(client, admin, user, api_key, redis, allow_loopback):
    made = register(client, issue_token(admin[0]), RECEIVER)
    paths = [("get", "/api/webhooks"), ("post", "/api/webhooks"),
             ("get", f"/api/webhooks/{made['id']}"), ("patch", f"/api/webhooks/{made['id']}"),
             ("delete", f"/api/webhooks/{made['id']}"),
             ("get", f"/api/webhooks/{made['id']}/failed"),
             ("post", f"/api/webhooks/{made['id']}/retry")]
    for method, path in paths:
        assert getattr(client, method)(path).status_code == 401
        assert getattr(client, method)(path, headers=auth("forged")).status_code == 401
        for credential in (issue_token(user[0]), api_key):
            reply = getattr(client, method)(path, headers=auth(credential),
                                            json={"url": RECEIVER, "topics": ["spark"]})
            assert reply.status_code == 403, (method, path)
            assert reply.get_json()["error"] == "only admins manage webhooks"
    assert [(w["id"], w["topics"]) for w in store.list_all(redis)] == [(made["id"], ["*"])]


def test_a_session_needs_the_csrf_token(client, admin, redis, allow_loopback):
    sign_in(client, *admin)
    reply = client.post("/api/webhooks", json={"url": RECEIVER, "topics": ["*"]})
    assert reply.status_code == 400 and store.list_all(redis) == []
    assert client.get("/api/webhooks").status_code == 200


def test_the_admin_page_is_for_admins(client, admin, user, redis):
    assert client.get("/webhooks").status_code == 302  # to the sign-in form
    sign_in(client, *user)
    assert client.get("/webhooks").status_code == 403
    client.get("/logout")
    client.post("/logout")
    sign_in(client, *admin)
    page = client.get("/webhooks")
    assert page.status_code == 200 and b"<h1>Webhooks</h1>" in page.data


def test_change_an_endpoint(client, admin, redis, allow_loopback):
    token = issue_token(admin[0])
    made = register(client, token, RECEIVER, topics=["ops"])
    path = f"/api/webhooks/{made['id']}"
    reply = client.patch(path, json={"topics": ["spark"], "min_severity": "error",
                                     "private": True, "url": "http://127.0.0.2:9/new"},
                         headers=auth(token))
    assert reply.status_code == 200
    changed = reply.get_json()
    assert (changed["topics"], changed["min_severity"], changed["private"], changed["url"]) == (
        ["spark"], "error", True, "http://127.0.0.2:9/new")
    assert "secret" not in changed
    assert store.get(redis, made["id"])["secret"] == made["secret"]  # kept
    for body, field in (({"url": "http://10.0.0.1/"}, "url"), ({"secret": "x" * 20}, "secret"),
                        ({"topics": []}, "topics"), ({"owner": "x"}, "owner"), ([], "body")):
        reply = client.patch(path, json=body, headers=auth(token))
        assert reply.status_code == 400 and reply.get_json()["error"].startswith(f"{field}: ")
    assert client.patch("/api/webhooks/nope", json={"private": False},
                        headers=auth(token)).status_code == 404
    assert client.patch(path, json={"private": False},
                        headers=auth(issue_token(admin[0]))).get_json()["private"] is False


def test_rotate_the_secret(client, admin, user, redis, allow_loopback):
    token = issue_token(admin[0])
    made = register(client, token, RECEIVER)
    path = f"/api/webhooks/{made['id']}/rotate"
    reply = client.post(path, json={}, headers=auth(token))
    assert reply.status_code == 200
    rotated = reply.get_json()
    assert rotated["id"] == made["id"] and rotated["secret"].startswith("whsec_")
    assert rotated["secret"] != made["secret"]
    assert 86000 < rotated["previous_until"] - time.time() <= 86400
    record = store.get(redis, made["id"])
    assert rotation.signing_secrets(record) == [rotated["secret"], made["secret"]]
    assert rotation.signing_secrets(record, now=rotated["previous_until"] + 1) == \
        [rotated["secret"]]
    shown = client.get(f"/api/webhooks/{made['id']}", headers=auth(token)).get_json()
    assert made["secret"] not in str(shown) and rotated["secret"] not in str(shown)
    assert shown["secret_rotated_until"] == rotated["previous_until"]

    own = client.post(path, json={"secret": "my-own-secret-0123", "overlap": 0},
                      headers=auth(token)).get_json()
    assert own["secret"] == "my-own-secret-0123" and own["previous_until"] is None
    assert rotation.signing_secrets(store.get(redis, made["id"])) == ["my-own-secret-0123"]
    for body, field in (({"overlap": -1}, "overlap"), ({"overlap": "1h"}, "overlap"),
                        ({"secret": "short"}, "secret"), ({"colour": 1}, "colour"),
                        ([], "body")):
        reply = client.post(path, json=body, headers=auth(token))
        assert reply.status_code == 400, body
        assert reply.get_json()["field"] == field
        assert reply.get_json()["error"].startswith(f"{field}: ")
    assert client.post("/api/webhooks/nope/rotate", json={}, headers=auth(token)).status_code == 404
    assert client.post(path, json={}, headers=auth(issue_token(user[0]))).status_code == 403
