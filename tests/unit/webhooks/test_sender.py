"""One endpoint's sender, stepped in the test's own thread against a real Redis and a real
loopback receiver (tests/helpers/webhooks.py): retries, backoff and parking."""
import time

import pytest

from app.webhooks import rotation, store
from app.webhooks.sender import Sender
from app.webhooks.settings import Settings
from herald_client import webhooks
from tests.helpers.webhooks import Receiver

DAY = 86400.0


@pytest.fixture
def failing(allow_loopback):
    receiver = Receiver(status=500).start()
    yield receiver
    receiver.stop()


def queued(redis, url, published_at, attempts=0):
    """An endpoint at ``url`` with one delivery queued (published at ``published_at``),
    ``attempts`` failed attempts at it so far; returns (endpoint id, notification id)."""
    endpoint = store.create(redis, {"url": url, "topics": ["*"]}, "test")
    notification = f"{int(published_at * 1000)}-0"
    item = f'{notification} {{"id":"{notification}","topic":"ops","title":"x"}}'
    redis.rpush(store.queue_key(endpoint["id"]), item)
    if attempts:
        redis.hset(store.attempt_key(endpoint["id"]),
                   mapping={"item": item, "attempts": attempts, "next_at": 0})
    return endpoint["id"], notification


def test_a_huge_attempt_count_is_retried_with_a_capped_delay(redis, failing):
    """2**(attempts-1) overflowed a float after 1,024 attempts: the step raised, nothing
    was recorded, and the delivery was POSTed every second, forever."""
    endpoint_id, _ = queued(redis, failing.url, time.time(), attempts=1100)
    sender = Sender(redis, endpoint_id, Settings(backoff_base=1.0, backoff_max=3600.0,
                                                 retry_for=DAY))
    before = time.time()
    assert sender.step() == 0
    state = store.state(redis, endpoint_id)
    assert (state["retrying"], state["parked"], state["last_error"]) == (1101, 0, "HTTP 500")
    assert before <= state["next_attempt_at"] <= time.time() + 3600
    assert len(failing.requests) == 1


def test_a_huge_attempt_count_past_the_retry_period_is_parked(redis, failing):
    endpoint_id, notification = queued(redis, failing.url, time.time() - 2 * DAY, attempts=1100)
    sender = Sender(redis, endpoint_id, Settings(retry_for=DAY))
    assert sender.step() == 0
    [parked] = store.parked(redis, endpoint_id)
    assert (parked["notification"], parked["attempts"], parked["error"]) == \
        (notification, 1101, "HTTP 500")
    assert store.state(redis, endpoint_id)["pending"] == 0


def test_during_a_rotation_both_secrets_sign(redis, allow_loopback):
    receiver = Receiver().start()
    try:
        endpoint_id, notification = queued(redis, receiver.url, time.time())
        old = store.get(redis, endpoint_id)["secret"]
        new = rotation.rotate(redis, endpoint_id)["secret"]
        assert Sender(redis, endpoint_id, Settings()).step() == 0
        [request] = receiver.requests
        header, delivery = (request["headers"]["Herald-Signature"],
                            request["headers"]["Herald-Delivery"])
        assert header.count("v1=") == 2 and delivery == f"{endpoint_id}.{notification}"
        for secret in (old, new):
            assert webhooks.verify(secret, request["body"], header, delivery)
    finally:
        receiver.stop()
