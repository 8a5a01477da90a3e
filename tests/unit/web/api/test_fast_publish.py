"""POST /api/notifications by a remembered API key, answered in front of Flask
(app/web/api/fast_publish.py): the same answer, the same checks, every refusal
answered by the view as before, and a revoked key refused by its very next publish."""
import logging

import pytest

from app import create_app
from app.services import of as of_app
from app.settings import TestConfig
from app.stream.keys import STREAM
from app.users import accounts
from app.web import publish_quota

ENVELOPE = {"topic": "etl.done", "title": "done"}


def bearer(key, **headers):
    return {"Authorization": f"Bearer {key}", **headers}


@pytest.fixture
def views(app, monkeypatch):
    """The publish view's calls (its guard included), by Flask."""
    called = []
    view = app.view_functions["api.publish"]

    def counted(*args, **kwargs):
        called.append(1)
        return view(*args, **kwargs)

    monkeypatch.setitem(app.view_functions, "api.publish", counted)
    return called


def test_a_remembered_key_is_answered_in_front_of_flask_as_the_view_answers(client, redis, views):
    key = accounts.create_api_key(redis, "etl")
    first = client.post("/api/notifications", json=ENVELOPE, headers=bearer(key))
    assert first.status_code == 201 and views == [1]  # the key looked up by the view's guard
    second = client.post("/api/notifications", json=ENVELOPE,
                         headers=bearer(key, **{"X-Correlation-ID": "run-42"}))
    assert second.status_code == 201 and views == [1]  # not through Flask
    assert second.headers["X-Correlation-ID"] == "run-42"

    def comparable(reply):
        return {name: value for name, value in reply.headers.items()
                if name not in ("X-Correlation-ID", "Content-Length")}
    assert comparable(second) == comparable(first)
    assert second.data.endswith(b"\n") and set(second.get_json()) == {"id", "ts"}
    [_, (entry_id, _fields)] = redis.xrange(STREAM)
    assert second.get_json()["id"] == entry_id.decode()


def test_it_logs_the_publish_as_the_view_does(client, redis, caplog):
    key = accounts.create_api_key(redis, "etl")
    client.post("/api/notifications", json=ENVELOPE, headers=bearer(key))
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="herald.api"):
        reply = client.post("/api/notifications", json=dict(ENVELOPE, correlation_id="spark-7"),
                            headers=bearer(key))
    [record] = [r for r in caplog.records if r.name == "herald.api"]
    assert record.getMessage() == f"published {reply.get_json()['id']} on etl.done by etl"
    assert record.correlation_id == "spark-7"


def test_a_key_revoked_after_a_fast_publish_is_refused_by_the_next_one(client, redis, app, views):
    key = accounts.create_api_key(redis, "etl")
    for _ in range(2):
        assert client.post("/api/notifications", json=ENVELOPE, headers=bearer(key)).status_code == 201
    assert views == [1]
    accounts.revoke_api_key(redis, "etl")  # as from another process: this one is not told
    refused = client.post("/api/notifications", json=ENVELOPE, headers=bearer(key))
    assert refused.status_code == 401 and refused.get_json() == {"error": "API key is not valid"}
    assert refused.headers["WWW-Authenticate"] == "Bearer"
    assert redis.xlen(STREAM) == 2
    assert of_app(app).api_keys.remembered(accounts.api_key_digest(key)) is None


def test_a_publish_past_the_limit_is_counted_once_and_answered_429(redis_server, redis):
    app = create_app(TestConfig(redis_server.url, RATELIMIT_API_KEY="2 per minute"))
    client, key = app.test_client(), accounts.create_api_key(redis, "etl")
    codes = [client.post("/api/notifications", json=ENVELOPE, headers=bearer(key)).status_code
             for _ in range(3)]
    assert codes == [201, 201, 429]
    [counter] = publish_quota.quota_of("2 per minute", "api.publish",
                                       "apikey:" + accounts.api_key_digest(key)[:32]).keys
    assert redis.get(counter) == b"3"  # the refused one counted by the script alone
    past = client.post("/api/notifications", json=ENVELOPE, headers=bearer(key))
    assert past.status_code == 429 and 0 < int(past.headers["Retry-After"]) <= 60
    assert past.get_json()["error"] == "rate limit exceeded: 2 per 1 minute"
    assert redis.xlen(STREAM) == 2


def test_an_idempotency_key_replays_and_refuses_another_notification(client, redis, views):
    key = accounts.create_api_key(redis, "etl")
    client.post("/api/notifications", json=ENVELOPE, headers=bearer(key))
    headers = bearer(key, **{"Idempotency-Key": "job-1"})
    first = client.post("/api/notifications", json=ENVELOPE, headers=headers)
    again = client.post("/api/notifications", json=ENVELOPE, headers=headers)
    assert views == [1]
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json() and again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    other = client.post("/api/notifications", json=dict(ENVELOPE, title="other"), headers=headers)
    assert other.status_code == 422 and other.get_json()["field"] == "Idempotency-Key"
    assert redis.xlen(STREAM) == 2


@pytest.mark.parametrize("options, answer", [
    ({"json": {"topic": "Bad", "title": "x"}}, 400),
    ({"data": "{", "content_type": "application/json"}, 400),
    ({"data": "x", "content_type": "text/plain"}, 400),
    ({"json": ENVELOPE, "headers": {"Idempotency-Key": "two words"}}, 400),
    ({"data": "[" * 70_000, "content_type": "application/json"}, 413),
])
def test_what_it_does_not_take_the_view_answers(client, redis, views, options, answer):
    key = accounts.create_api_key(redis, "etl")
    client.post("/api/notifications", json=ENVELOPE, headers=bearer(key))
    options = dict(options)
    headers = bearer(key, **options.pop("headers", {}))
    assert client.post("/api/notifications", headers=headers, **options).status_code == answer
    assert views == [1, 1] and redis.xlen(STREAM) == 1


def test_a_json_content_type_with_parameters_is_taken(client, redis, views):
    key = accounts.create_api_key(redis, "etl")
    client.post("/api/notifications", json=ENVELOPE, headers=bearer(key))
    reply = client.post("/api/notifications", data=b'{"topic":"etl.done","title":"done"}',
                        content_type="application/json; charset=utf-8", headers=bearer(key))
    assert reply.status_code == 201 and views == [1]
