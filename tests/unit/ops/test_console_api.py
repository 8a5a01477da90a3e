"""/api/ops/status and /api/presence: what the operations console and programs read."""
import time

import orjson
import pytest

from app import create_app
from app.digests import store as digest_store
from app.ops import heartbeats
from app.realtime.presence import Presence
from app.settings import TestConfig
from app.stream.envelope import id_key
from app.stream.publish import Bus
from app.stream.shards import configured
from app.users import accounts, subscriptions
from tests.helpers.keys import SECRET
from tests.support import sign_in
from tests.unit.web.api.helpers import bearer, jwt_bearer


def beat(redis, role, instance, age, **details):
    record = {"role": role, "instance": instance, "at": time.time() - age, "every": 1.0,
              "started": time.time() - 100, "details": details}
    redis.hset(heartbeats.BEATS, f"{role}/{instance}", orjson.dumps(record))


def test_the_status_shows_live_and_missing_workers_queues_and_presence(client, redis, admin):
    beat(redis, "archiver", "a:1", 0.1, leader=True, position=None)
    beat(redis, "archiver", "b:2", 60)                  # killed a minute ago
    beat(redis, "bridge", "a:3", 0.1, backlog=7)
    beat(redis, "bridge", "b:4", 0.2, backlog=5)
    beat(redis, "digest", "old:5", heartbeats.FORGET_AFTER + 10)  # long gone: forgotten
    digest_store.ensure_group(redis)
    bus = Bus(redis)
    first = bus.publish_envelope({"topic": "ops.test", "title": "one"})["id"]
    done = bus.publish_envelope({"topic": "spark.job.succeeded", "title": "Rollup done"})["id"]
    ops = configured().of_topic("ops").stream  # herald:stream with one shard
    redis.xreadgroup(digest_store.GROUP, "digest-a", {ops: ">"}, count=1)  # one pending
    watcher = Presence(redis, "web:9")
    watcher.opened("ada")
    watcher.flush()
    sign_in(client, *admin)
    status = client.get("/api/ops/status").get_json()
    workers = {(w["role"], w["instance"]): w["alive"] for w in status["workers"]}
    assert workers == {("archiver", "a:1"): True, ("archiver", "b:2"): False,
                       ("bridge", "a:3"): True, ("bridge", "b:4"): True}
    assert status["bridge_backlog"] == 12
    assert status["digests"]["pending"] == 1 and status["digests"]["oldest_pending_seconds"] >= 0
    assert status["archiver"]["leader"] == "a:1"
    # the newest of any shard: spark's (in the same millisecond as ops.test's, in another
    # shard, either may be shown: between shards there is no order but time)
    assert id_key(status["archiver"]["newest"]) == id_key(done) >= id_key(first)
    assert [run["title"] for run in status["spark"]] == ["Rollup done"]
    assert [(p["user"], p["connections"]) for p in status["presence"]] == [("ada", 1)]
    assert redis.hget(heartbeats.BEATS, "digest/old:5") is None


def test_the_status_is_for_admins_and_presence_for_users(client, redis, user, api_key):
    assert client.get("/api/ops/status").status_code == 401
    assert client.get("/api/presence").status_code == 401
    sign_in(client, *user)
    assert client.get("/api/ops/status").status_code == 403
    reply = client.get("/api/presence")
    assert reply.status_code == 200 and reply.get_json() == {"online": [], "count": 0}
    with_key = client.get("/api/presence", headers={"Authorization": f"Bearer {api_key}"})
    assert with_key.status_code == 403


@pytest.fixture(scope="module")
def jwt_app(redis_server):
    return create_app(TestConfig(redis_server.url, JWT_SECRET=SECRET))


def test_presence_shows_admins_everyone_and_others_who_shares_their_topics(jwt_app, redis,
                                                                          admin, user):
    """bob follows board; a token limited to ops sees by its topics, not bob's."""
    follows = {"bob": ["board"], "cy": ["board.cards"], "di": ["ops"], "ed": ["*"],
               "fay": ["billing"]}
    for name, topics in follows.items():
        subscriptions.add(redis, name, topics, limit=10)
    here = Presence(redis, "web:9")
    for name in [*follows, "ada"]:
        here.opened(name)
    here.flush()
    http = jwt_app.test_client()

    def seen(headers):
        reply = http.get("/api/presence", headers=headers)
        assert reply.status_code == 200, reply.get_json()
        return [p["user"] for p in reply.get_json()["online"]]

    assert seen(bearer("ada")) == ["ada", "bob", "cy", "di", "ed", "fay"]  # an admin
    assert seen(bearer("bob")) == ["bob", "cy", "ed"]
    assert seen(jwt_bearer("bob", topics=["ops"])) == ["bob", "di", "ed"]
    assert seen(jwt_bearer("gus")) == []  # a host-app user without subscriptions, offline
    api_key = accounts.create_api_key(redis, "publisher")
    assert http.get("/api/presence", headers={"Authorization": f"Bearer {api_key}"}
                    ).status_code == 403


def test_a_bad_ready_requires_stops_the_start_with_one_line(monkeypatch):
    monkeypatch.setenv("READY_REQUIRES", "archiver,mailman")
    try:
        heartbeats.required_roles()
    except SystemExit as exc:
        assert "READY_REQUIRES names unknown roles ['mailman']" in str(exc)
    else:
        raise AssertionError("accepted an unknown role")


def test_metrics_show_each_workers_heartbeat(client, redis):
    beat(redis, "archiver", "a:1", 0.1)
    beat(redis, "archiver", "b:2", 60)
    text = client.get("/metrics").get_data(as_text=True)
    assert 'herald_worker_up{instance="a:1",role="archiver"} 1.0' in text
    assert 'herald_worker_up{instance="b:2",role="archiver"} 0.0' in text
    assert 'herald_worker_heartbeat_age_seconds{instance="b:2",role="archiver"} 60.' in text
