"""A token limited to some topics, in a sharded history (app/stream/shards.py): an id
``<ms>-<seq>-<k>`` is looked up in shard k's stream (app/web/auth/scope.py), so the token
acts on a notification of its topics in any shard, and on nothing else: not another
topic's, not an id its shard never gave."""
import pytest

from app import create_app
from app.settings import TestConfig
from app.stream.envelope import id_key
from app.stream.publish import Bus
from app.users import accounts, archive_and_snooze, read_state, subscriptions
from tests.helpers.keys import SECRET
from tests.helpers.shards import topic_per_shard
from tests.unit.web.api.helpers import jwt_bearer


@pytest.fixture
def world(sharded, redis_server, redis):
    app = create_app(TestConfig(redis_server.url, JWT_SECRET=SECRET))
    accounts.create_user(redis, "alice", "alice-password")
    subscriptions.add(redis, "alice", ["*"], limit=10)
    topics = topic_per_shard(sharded)
    bus = Bus(redis)
    ids = [bus.publish(topic, f"in shard {k}") for k, topic in enumerate(topics)]
    assert [i.count("-") for i in ids] == [1, 2, 2]
    return app.test_client(), topics, ids


def limited_to(topic):
    return jwt_bearer("alice", topics=[topic.split(".")[0]])


@pytest.mark.parametrize("shard", [0, 1, 2])
def test_a_limited_token_acts_on_its_topics_notification_in_its_shard(world, redis, shard):
    http, topics, ids = world
    mine, others = ids[shard], [i for i in ids if i != ids[shard]]
    headers = limited_to(topics[shard])
    reply = http.post("/api/notification-state", headers=headers, json={"archive": [mine]})
    assert reply.status_code == 200, reply.get_json()
    assert archive_and_snooze.get(redis, "alice")["archived"] == [mine]
    reply = http.post("/api/read-state", headers=headers, json={"ids": [mine]})
    assert reply.status_code == 200 and reply.get_json()["ids"] == [mine]
    for other in others:  # another topic's, in another shard
        reply = http.post("/api/notification-state", headers=headers, json={"archive": [other]})
        assert reply.status_code == 403 and other in reply.get_json()["error"]
        reply = http.post("/api/read-state", headers=headers, json={"ids": [other]})
        assert reply.status_code == 403
    assert archive_and_snooze.get(redis, "alice")["archived"] == [mine]
    assert read_state.get(redis, "alice")["ids"] == [mine]


def test_what_a_limited_token_reads_of_the_state_is_narrowed_by_shard(world, redis):
    http, topics, ids = world
    archive_and_snooze.archive(redis, "alice", ids)
    assert archive_and_snooze.get(redis, "alice")["archived"] == sorted(ids, key=id_key)
    for k, topic in enumerate(topics):
        state = http.get("/api/notification-state", headers=limited_to(topic)).get_json()
        assert state["archived"] == [ids[k]]


def test_an_id_its_shard_never_gave_is_refused(world, redis):
    http, topics, ids = world
    ms, seq = id_key(ids[2])
    unknown = f"{ms}-{seq + 1}-2"  # of shard 2, not in it (above its newest)
    headers = limited_to(topics[2])
    for body in ({"archive": [unknown]}, {"snooze": {"id": unknown, "until": 9_999_999_999_999}}):
        reply = http.post("/api/notification-state", headers=headers, json=body)
        assert reply.status_code == 403 and unknown in reply.get_json()["error"]
    reply = http.post("/api/read-state", headers=headers, json={"ids": [unknown]})
    assert reply.status_code == 403
    # A full token is not refused by scope, and its change leaves the id out all the same.
    reply = http.post("/api/read-state", headers=jwt_bearer("alice"), json={"ids": [unknown]})
    assert reply.status_code == 200 and reply.get_json()["ids"] == []
    reply = http.post("/api/notification-state", headers=jwt_bearer("alice"),
                      json={"archive": [unknown, ids[2]]})
    assert reply.status_code == 200
    assert archive_and_snooze.get(redis, "alice")["archived"] == [ids[2]]
