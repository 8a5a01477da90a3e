"""Bounds on what an endpoint keeps in Redis (WEBHOOK_QUEUE_MAX, WEBHOOK_PARKED_MAX): a long
outage parks what its full queue cannot take, and the parked list drops its oldest past
its bound; both are counted, in the endpoint's state and in /metrics."""
import time

import pytest

from app.stream.keys import METRICS_WORKERS
from app.stream.publish import Bus
from app.webhooks import figures, store
from app.webhooks.dispatch import Dispatcher
from app.webhooks.sender import Sender
from app.webhooks.settings import Settings
from tests.helpers.webhooks import Receiver


def metric(redis, name):
    for family in figures.families(redis, redis.hgetall(METRICS_WORKERS)):
        if family.name == name:
            return sum(sample.value for sample in family.samples)
    raise AssertionError(f"no metric {name}")


def test_a_full_queue_parks_what_comes_and_the_parked_list_drops_its_oldest(redis,
                                                                          allow_loopback):
    endpoint = store.create(redis, {"url": "http://127.0.0.1:9/", "topics": ["*"]}, "test")
    dispatcher = Dispatcher(redis, queue_max=3, parked_max=2)
    bus = Bus(redis)
    ids = [bus.publish("ops.db", f"n{i}") for i in range(6)]
    while dispatcher.step(block_ms=10):
        pass
    queue = [item.split(b" ", 1)[0].decode()
             for item in redis.lrange(store.queue_key(endpoint["id"]), 0, -1)]
    assert queue == ids[:3]
    parked = store.parked(redis, endpoint["id"])
    assert [p["notification"] for p in parked] == ids[4:]  # ids[3] dropped, the oldest parked
    assert parked[0]["error"] == "not queued: the queue was full (WEBHOOK_QUEUE_MAX)"
    assert parked[0]["delivery"] == f"{endpoint['id']}.{ids[4]}" and parked[0]["attempts"] == 0
    assert '"title":"n4"' in parked[0]["body"]
    state = store.state(redis, endpoint["id"])
    assert (state["pending"], state["parked"], state["overflowed"], state["dropped"]) == \
        (3, 2, 3, 1)
    assert metric(redis, "herald_webhook_overflowed") == 3
    assert metric(redis, "herald_webhook_dropped") == 1

    assert store.requeue_parked(redis, endpoint["id"]) == 2  # what was parked can be retried


@pytest.fixture
def refusing(allow_loopback):
    receiver = Receiver(status=400).start()
    yield receiver
    receiver.stop()


def test_parking_after_failed_attempts_keeps_the_bound_too(redis, refusing):
    endpoint = store.create(redis, {"url": refusing.url, "topics": ["*"]}, "test")
    now = int(time.time() * 1000)
    for i in range(3):
        notification = f"{now}-{i}"
        redis.rpush(store.queue_key(endpoint["id"]), f'{notification} {{"id":"{notification}"}}')
    sender = Sender(redis, endpoint["id"], Settings(client_error_retries=0, parked_max=2))
    for _ in range(3):
        sender.step()
    assert [p["notification"] for p in store.parked(redis, endpoint["id"])] == \
        [f"{now}-1", f"{now}-2"]
    state = store.state(redis, endpoint["id"])
    assert (state["parked"], state["dropped"], state["overflowed"]) == (2, 1, 0)
