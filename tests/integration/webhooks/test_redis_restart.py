"""A crash of Redis (SIGKILL; append-only file, fsync'd on every write) while webhooks
are being delivered loses nothing: every notification accepted reaches the receiver,
in order (duplicates, if any, droppable by Herald-Delivery)."""
from app.redis_client import UNAVAILABLE
from app.stream.publish import Bus, BusUnavailable
from app.webhooks import outbound, store
from tests.helpers.webhooks import LOOPBACK_ALLOWED, Receiver, WebhookWorker
from tests.support import RedisServer, wait_until


def publish_until_accepted(bus, title, timeout=15):
    """Publish, retrying while Redis is away (a careful publisher does)."""
    return wait_until(lambda: _try(bus, title), timeout=timeout, interval=0.05,
                      message=f"{title} accepted")


def _try(bus, title):
    try:
        return bus.publish("ops.db", title)
    except (BusUnavailable, *UNAVAILABLE):
        return None


def test_a_redis_crash_mid_delivery_loses_nothing(tmp_path):
    redis_server = RedisServer(tmp_path)
    redis_server.start()
    client = redis_server.client()
    receiver = Receiver(delay=0.05).start()
    worker = WebhookWorker(redis_server.url, tmp_path)
    try:
        endpoint = store.create(client, {"url": receiver.url, "topics": ["ops"]}, "test",
                                allowed=outbound.allow_list(LOOPBACK_ALLOWED))
        worker.start()
        bus = Bus(client)
        ids = [bus.publish("ops.db", f"before {i}") for i in range(10)]
        wait_until(lambda: len(receiver.requests) >= 3, timeout=10, message="some deliveries")
        redis_server.kill()
        redis_server.start()
        ids += [publish_until_accepted(bus, f"after {i}") for i in range(10)]
        wait_until(lambda: len(receiver.unique()) == 20, timeout=30,
                   message="all twenty after the restart")
        assert [e["id"] for e in receiver.unique()] == ids
        wait_until(lambda: store.state(client, endpoint["id"])["pending"] == 0, timeout=10,
                   message="the queue drained")
    finally:
        worker.stop()
        receiver.stop()
        client.close()
        redis_server.stop()
