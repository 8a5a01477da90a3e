"""``GET /api/topics``: the topics of the recent history, with counts, for the subscription
box: what a user may see and nothing else (never a topic that only another user's
private notifications carry), fresh after a publish, refused to API keys, 503 without
Redis."""
import re

import pytest

from app import create_app
from app.services import of as of_app
from app.settings import TestConfig
from app.stream.publish import Bus
from app.users import accounts
from tests.helpers.keys import SECRET
from tests.support import free_port
from tests.unit.web.api.helpers import bearer, jwt_bearer


@pytest.fixture
def world(redis, user):
    """Public history on spark and ops; eve alone has private notifications on hr."""
    accounts.create_user(redis, "eve", "eve-password")
    bus = Bus(redis)
    for _ in range(3):
        bus.publish("spark.job.succeeded", "done")
    bus.publish("spark.job.failed", "failed")
    bus.publish("ops.deploy", "deployed")
    bus.publish("ops.deploy", "eve's deploy", user="eve")
    bus.publish("hr.review.eve", "eve's review", user="eve")
    return {"bobs": bus.publish("ops.backup", "bob's backup", user="bob")}


def topics(client, headers):
    reply = client.get("/api/topics", headers=headers)
    assert reply.status_code == 200, reply.get_data(as_text=True)
    body = reply.get_json()
    return ({t["topic"]: t["count"] for t in body["topics"]},
            {p["prefix"]: p["count"] for p in body["prefixes"]}, body)


def test_a_user_gets_the_topics_they_may_see_with_counts(client, world):
    found, prefixes, body = topics(client, bearer("bob"))
    assert found == {"spark.job.succeeded": 3, "spark.job.failed": 1, "ops.deploy": 1,
                     "ops.backup": 1}
    assert prefixes == {"spark": 4, "spark.job": 4, "ops": 2}
    assert [t["topic"] for t in body["topics"]][0] == "spark.job.succeeded"  # most first
    assert next(t for t in body["topics"] if t["topic"] == "ops.backup")["newest"] == world["bobs"]
    assert body["scanned"] == 8 and body["truncated"] is False


def test_a_topic_only_in_another_users_private_notifications_is_never_shown(client, world):
    _found, _prefixes, body = topics(client, bearer("bob"))
    assert "hr" not in client.get("/api/topics", headers=bearer("bob")).get_data(as_text=True)
    assert body["prefixes"] and all(not p["prefix"].startswith("hr") for p in body["prefixes"])
    found, prefixes, _ = topics(client, bearer("eve"))
    assert found["hr.review.eve"] == 1 and prefixes["hr"] == 1 and found["ops.deploy"] == 2
    assert "ops.backup" not in found  # bob's private one


def test_a_signed_in_session_reads_it_too(client, world):
    form = client.get("/login").get_data(as_text=True)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', form).group(1)
    assert client.post("/login", data={"username": "bob", "password": "bob-password",
                                       "csrf_token": csrf}).status_code == 302
    found, _, _ = topics(client, {})
    assert "ops.backup" in found and "hr.review.eve" not in found


def test_a_new_notification_is_counted_at_once(client, world):
    before, _, _ = topics(client, bearer("bob"))
    Bus(of_app(client.application).redis).publish("news.today", "fresh")
    after, _, body = topics(client, bearer("bob"))
    assert after == dict(before, **{"news.today": 1}) and body["scanned"] == 9


def test_a_limited_token_sees_only_inside_its_topics(redis_server, redis):
    jwt_client = create_app(TestConfig(redis_server.url, JWT_SECRET=SECRET)).test_client()
    bus = Bus(redis)
    bus.publish("board.card", "in")
    bus.publish("board.card.moved", "in", user="carol")
    bus.publish("ops.db", "out")
    bus.publish("ops.db", "private, outside", user="carol")
    found, prefixes, _ = topics(jwt_client, jwt_bearer("carol", topics=["board"]))
    assert found == {"board.card": 1, "board.card.moved": 1}
    assert prefixes == {"board": 2, "board.card": 2}  # the topic board.card, and under it
    found, _, _ = topics(jwt_client, jwt_bearer("carol"))
    assert found == {"board.card": 1, "board.card.moved": 1, "ops.db": 2}


def test_api_keys_are_refused_and_strangers_unauthorized(client, api_key, world):
    reply = client.get("/api/topics", headers={"Authorization": f"Bearer {api_key}"})
    assert reply.status_code == 403
    assert client.get("/api/topics").status_code == 401


def test_redis_unreachable_is_503(redis, user):
    dead = create_app(TestConfig(f"redis://127.0.0.1:{free_port()}/0"))
    reply = dead.test_client().get("/api/topics", headers=bearer("bob"))
    assert reply.status_code == 503 and "Redis is unreachable" in reply.get_json()["error"]
