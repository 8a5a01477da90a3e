"""/api/ops/status and /api/presence: what the operations console and programs read."""
import time

import orjson

from app.digests import store as digest_store
from app.ops import heartbeats
from app.realtime.presence import Presence
from app.stream.publish import Bus
from tests.support import sign_in


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
    bus.publish_envelope({"topic": "spark.job.succeeded", "title": "Rollup done"})
    redis.xreadgroup(digest_store.GROUP, "digest-a", {"herald:stream": ">"}, count=1)  # one pending
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
    assert status["archiver"]["newest"] > first
    assert [run["title"] for run in status["spark"]] == ["Rollup done"]
    assert [(p["user"], p["connections"]) for p in status["presence"]] == [("ada", 1)]
    assert redis.hget(heartbeats.BEATS, "digest/old:5") is None


def test_the_status_is_for_admins_and_presence_for_any_caller(client, redis, user, api_key):
    assert client.get("/api/ops/status").status_code == 401
    assert client.get("/api/presence").status_code == 401
    sign_in(client, *user)
    assert client.get("/api/ops/status").status_code == 403
    reply = client.get("/api/presence")
    assert reply.status_code == 200 and reply.get_json() == {"online": [], "count": 0}
    with_key = client.get("/api/presence", headers={"Authorization": f"Bearer {api_key}"})
    assert with_key.status_code == 200


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
