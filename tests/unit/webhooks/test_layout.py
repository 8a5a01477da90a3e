"""The webhooks' keys under the hash tag ``{webhooks}`` (app/webhooks/layout.py), and the
one-time move of a single Redis's keys from their old names (app/key_layout.py): an
endpoint registered before the move is still listed, and its queued delivery still sent."""
import time

import orjson
import pytest

from app import key_layout
from app.redis_client import is_cluster
from app.stream.keys import METRICS_WORKERS
from app.webhooks import figures, layout, store
from app.webhooks.sender import Sender
from app.webhooks.settings import Settings
from tests.helpers.webhooks import Receiver
from tests.redis_cluster import ON_CLUSTER

ID = "0123456789ab"


def test_every_old_name_has_its_new_one_and_no_other_familys_key_moves():
    assert layout.moved("herald:webhooks") == "herald:{webhooks}:endpoints"
    assert layout.moved("herald:webhooks:changed") == "herald:{webhooks}:changed"
    assert layout.moved("herald:webhooks:lease") == "herald:{webhooks}:lease"
    assert layout.moved(f"herald:webhook:{ID}") == store.key(ID)
    for kind in layout.KINDS:
        assert layout.moved(f"herald:webhook:{ID}:{kind}") == f"herald:{{webhooks}}:endpoint:{ID}:{kind}"
    assert layout.moved(f"herald:webhook:{ID}:queue") == store.queue_key(ID)
    for foreign in ("herald:webhooks:epoch",  # the consumer group's epoch marker: app/stream's
                    "herald:webhooksfoo", "herald:webhook:", f"herald:webhook:{ID}:other",
                    store.key(ID), layout.ENDPOINTS):
        assert layout.moved(foreign) is None, foreign
    assert [glob for glob, _ in layout.RENAMES] == ["herald:webhook*"]


def test_every_key_of_an_endpoint_is_in_one_slot(redis):
    names = [*store.all_keys(ID), layout.ENDPOINTS, layout.CHANGED, layout.LEASE,
             layout.FIGURES, layout.DISPATCHED]
    assert all(name.startswith("herald:{webhooks}:") for name in names)
    if is_cluster(redis):
        assert len({redis.keyslot(name) for name in names}) == 1


def old_endpoint(redis, url, notification):
    """An endpoint and its queue as a Herald before the move wrote them."""
    record = {"url": url, "topics": ["*"], "min_severity": "info", "private": False,
              "secret": "whsec_kept-from-before-the-move-0123", "created": time.time() - 60,
              "created_by": "ada"}
    redis.hset(f"herald:webhook:{ID}", mapping={k: orjson.dumps(v) for k, v in record.items()})
    redis.sadd("herald:webhooks", ID)
    redis.set("herald:webhooks:changed", 4)
    redis.set("herald:webhooks:lease", "old-worker", px=5000)
    redis.rpush(f"herald:webhook:{ID}:queue",
                f'{notification} {{"id":"{notification}","topic":"ops","title":"queued"}}')
    redis.hset(f"herald:webhook:{ID}:stats", mapping={"delivered": 7, "failures": 1})


@pytest.mark.skipif(ON_CLUSTER, reason="the move is for a single Redis (a cluster never had old names)")
def test_the_move_keeps_an_endpoint_and_its_queue(redis, allow_loopback):
    receiver = Receiver().start()
    try:
        notification = f"{int(time.time() * 1000)}-0"
        old_endpoint(redis, receiver.url, notification)
        assert key_layout.migrate(redis) >= 6
        assert not redis.keys("herald:webhook:*") and not redis.exists("herald:webhooks")
        assert [r["id"] for r in store.list_all(redis)] == [ID]
        assert redis.get(layout.CHANGED) == b"4" and redis.pttl(layout.LEASE) > 0
        assert store.state(redis, ID)["pending"] == 1
        assert Sender(redis, ID, Settings()).step() == 0
        [request] = receiver.requests
        assert request["headers"]["Herald-Delivery"] == f"{ID}.{notification}"
        state = store.state(redis, ID)
        assert (state["pending"], state["delivered"], state["failures"]) == (0, 8, 1)
    finally:
        receiver.stop()


def test_what_was_counted_before_the_move_still_counts(redis):
    """The counters went from ``herald:metrics:workers`` to ``herald:{webhooks}:figures``
    (a hash's fields do not move with a RENAME): /metrics adds the two."""
    redis.hset(METRICS_WORKERS, "webhook_delivered", 5)
    redis.hset(layout.FIGURES, "webhook_delivered", 2)
    [deliveries] = [f for f in figures.families(redis, redis.hgetall(METRICS_WORKERS))
                    if f.name == "herald_webhook_deliveries"]
    assert {s.labels["outcome"]: s.value for s in deliveries.samples}["delivered"] == 7
