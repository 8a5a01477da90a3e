"""PUBLISH_REPLICAS: a publish answered only once enough replicas have it
(app/stream/replicated.py). The session's Redis has no replica, so asking for one
is never confirmed: the publish is stored, but answered as unconfirmed, and a
retry under its idempotency key stores nothing more. (On the test cluster every
master has a replica: there it is confirmed.)"""
import pytest

from app.stream.keys import STREAM
from app.stream.publish import Bus, BusUnavailable
from app.stream.replicated import Durability
from tests.redis_cluster import ON_CLUSTER


def test_without_replicas_asked_for_a_publish_is_answered_at_once(redis):
    assert Bus(redis).durability.replicas == 0
    assert Bus(redis).publish("ops.a", "one")
    assert redis.xlen(STREAM) == 1


@pytest.mark.skipif(ON_CLUSTER, reason="every master of the test cluster has a replica")
def test_a_publish_no_replica_confirms_is_stored_but_not_confirmed(redis):
    bus = Bus(redis, durability=Durability(replicas=1, timeout_ms=20))
    with pytest.raises(BusUnavailable, match="on 0 of 1 replicas after 20 ms: not confirmed"):
        bus.publish("ops.a", "one", idempotency_key="k")
    assert redis.xlen(STREAM) == 1
    with pytest.raises(BusUnavailable):  # the retry: stored once, still unconfirmed
        bus.publish("ops.a", "one", idempotency_key="k")
    assert redis.xlen(STREAM) == 1


@pytest.mark.skipif(ON_CLUSTER, reason="every master of the test cluster has a replica")
def test_a_batch_no_replica_confirms_is_not_confirmed_either(redis):
    from app.stream.publish import prepare
    bus = Bus(redis, durability=Durability(replicas=1, timeout_ms=20))
    with pytest.raises(Exception, match="not confirmed"):
        bus.publish_batch([prepare({"topic": "ops.b", "title": "x"})], "b1")
    assert bus.batch_outcome("b1") is not None  # written: the bridge learns it so


@pytest.mark.skipif(not ON_CLUSTER, reason="needs a replica: the test cluster has one per master")
def test_a_publish_a_replica_has_is_answered(redis):
    bus = Bus(redis, durability=Durability(replicas=1, timeout_ms=2000))
    entry_id = bus.publish("ops.a", "one", idempotency_key="k")
    assert bus.publish_envelope({"topic": "ops.a", "title": "one"}, "k")["id"] == entry_id
    assert redis.xlen(STREAM) == 1


def test_a_batch_published_again_under_its_id_is_written_once(redis):
    """The bridge publishes a batch again after a lost (or unconfirmed) reply: the script
    writes it only if it was not written, and answers its ids either way."""
    from app.stream.publish import prepare
    bus = Bus(redis)
    batch = [prepare({"topic": "ops.b", "title": f"n{i}"}) for i in range(3)]
    first = bus.publish_batch(batch, "again")
    assert bus.publish_batch(batch, "again") == first
    assert redis.xlen(STREAM) == 3


@pytest.mark.skipif(ON_CLUSTER, reason="every master of the test cluster has a replica")
def test_rest_answers_an_unconfirmed_publish_503_saying_so(redis_server, redis, api_key):
    from app import create_app
    from app.settings import TestConfig
    app = create_app(TestConfig(redis_server.url, PUBLISH_REPLICAS=1, PUBLISH_REPLICA_TIMEOUT=0.02))
    headers = {"Authorization": f"Bearer {api_key}", "Idempotency-Key": "once"}
    for _ in range(2):
        reply = app.test_client().post("/api/notifications", headers=headers,
                                       json={"topic": "ops.a", "title": "one"})
        assert reply.status_code == 503
        assert "on 0 of 1 replicas after 20 ms: not confirmed" in reply.get_json()["error"]
        assert "same Idempotency-Key" in reply.get_json()["error"]
    assert redis.xlen(STREAM) == 1
