"""Signing secrets are sealed at rest (app/webhooks/sealing.py): a copy of Redis does not
give them away (issue 23), deliveries are still signed with them, and a SECRET_KEY that
changed makes deliveries wait with an error saying to rotate, never a crash."""
import time

import pytest

from app.webhooks import rotation, sealing, store
from app.webhooks.sender import Sender
from app.webhooks.settings import Settings
from herald_client import webhooks
from tests.helpers.webhooks import Receiver
from tests.unit.webhooks.test_sender import queued


def test_a_redis_dump_does_not_hold_the_secret(redis, allow_loopback):
    made = store.create(redis, {"url": "http://127.0.0.1:9/x", "topics": ["*"]}, "test")
    rotated = rotation.rotate(redis, made["id"])
    dump = b"".join(v for v in redis.hgetall(store.key(made["id"])).values())
    for secret in (made["secret"], rotated["secret"]):
        assert secret.encode() not in dump
    again = store.get(redis, made["id"])
    assert (again["secret"], again["previous_secret"]) == (rotated["secret"], made["secret"])


def test_a_secret_stored_in_clear_before_sealing_still_signs(redis, allow_loopback):
    made = store.create(redis, {"url": "http://127.0.0.1:9/x", "topics": ["*"]}, "test")
    redis.hset(store.key(made["id"]), "secret", b'"whsec_kept-from-before-sealing-0123"')
    assert store.get(redis, made["id"])["secret"] == "whsec_kept-from-before-sealing-0123"


def test_deliveries_wait_when_the_secret_cannot_be_unsealed(redis, allow_loopback,
                                                            monkeypatch, caplog):
    receiver = Receiver().start()
    try:
        endpoint_id, notification = queued(redis, receiver.url, time.time())
        monkeypatch.setenv("SECRET_KEY", "another-secret-key")  # the key changed since
        assert store.get(redis, endpoint_id)["secret"] is None
        wait = Sender(redis, endpoint_id, Settings()).step()
        assert wait == sealing.UNREADABLE_WAIT and receiver.requests == []
        assert redis.llen(store.queue_key(endpoint_id)) == 1  # kept, not parked or lost
        assert "rotate" in caplog.text and "SECRET_KEY" in caplog.text
        monkeypatch.setenv("SECRET_KEY", "test-secret-key")
        new = rotation.rotate(redis, endpoint_id, overlap=0)["secret"]
        assert Sender(redis, endpoint_id, Settings()).step() == 0
        [request] = receiver.requests
        assert webhooks.verify(new, request["body"], request["headers"]["Herald-Signature"],
                               f"{endpoint_id}.{notification}")
    finally:
        receiver.stop()


def test_the_key_changes_with_secret_key():
    with pytest.raises(sealing.Unreadable):
        sealing.unseal(sealing.seal("whsec_abcdefghijklmnop", "one key"), "another key")
    assert sealing.unseal(sealing.seal("whsec_abcdefghijklmnop", "one key"), "one key") == \
        "whsec_abcdefghijklmnop"
