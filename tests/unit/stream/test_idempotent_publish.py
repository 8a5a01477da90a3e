"""Publishing under an idempotency key: stored at most once, even when the
answer to the write was lost (Redis went away after writing, before replying)."""
import socket
import threading

import pytest

from app.redis_client import connect
from app.stream.keys import ONCE, STREAM
from app.stream.publish import Bus, BusUnavailable, IdempotencyConflict
from tests.redis_cluster import ON_CLUSTER, every_key
from tests.support import wait_until


class ReplyLosingProxy:
    """A loopback TCP proxy to Redis that forwards everything, except that
    once it has forwarded a command containing ``marker`` it closes the
    client's connection instead of passing Redis's reply on."""

    def __init__(self, upstream_port, marker=b"EVALSHA"):
        self.upstream_port = upstream_port
        self.marker = marker
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cut = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        try:
            client, _ = self.listener.accept()
        except OSError:
            return
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        with client, upstream:
            client.settimeout(10)
            upstream.settimeout(10)
            while True:
                request = client.recv(65536)
                if not request:
                    return
                upstream.sendall(request)
                reply = upstream.recv(65536)
                if self.marker in request:
                    self.cut += 1
                    return  # the write reached Redis; its answer never reaches the client
                client.sendall(reply)

    def close(self):
        self.listener.close()
        self.thread.join(5)


@pytest.fixture
def bus(redis):
    return Bus(redis, history_max=1000)


def test_a_repeat_is_answered_with_the_first_publish_and_writes_nothing(redis, bus):
    first = bus.publish_envelope({"topic": "ops", "title": "once"}, "run-1")
    again = bus.publish_envelope({"title": "once", "topic": "ops"}, "run-1")
    assert again == dict(first, replayed=True)
    assert [entry_id.decode() for entry_id, _ in redis.xrange(STREAM)] == [first["id"]]


def test_another_key_is_another_notification(redis, bus):
    ids = {bus.publish("ops", "same words", idempotency_key=key) for key in ("a", "b")}
    assert len(ids) == 2 and redis.xlen(STREAM) == 2


def test_the_same_key_for_a_different_notification_is_refused(redis, bus):
    bus.publish_envelope({"topic": "ops", "title": "first"}, "k")
    with pytest.raises(IdempotencyConflict, match="different notification"):
        bus.publish_envelope({"topic": "ops", "title": "second"}, "k")
    assert redis.xlen(STREAM) == 1


def test_the_key_is_kept_a_day(redis, bus):
    bus.publish("ops", "x", idempotency_key="ttl")
    [key] = every_key(redis, ONCE + "*")
    assert 24 * 3600 - 5 <= redis.ttl(key) <= 24 * 3600


@pytest.fixture
def lossy_bus(redis_server, bus):
    if ON_CLUSTER:
        pytest.skip("a proxy in front of one redis-server")
    """A Bus whose connection loses the answer to its first publish."""
    bus.publish("warm", "load the publish script into Redis")
    proxy = ReplyLosingProxy(redis_server.port)
    through_proxy = connect(f"redis://127.0.0.1:{proxy.port}/0")
    yield Bus(through_proxy)
    through_proxy.close()
    proxy.close()
    assert proxy.cut == 1


def test_a_lost_answer_then_a_retry_stores_it_once(redis, bus, lossy_bus):
    with pytest.raises(BusUnavailable):
        lossy_bus.publish_envelope({"topic": "ops", "title": "lost"}, "lost-1")
    wait_until(lambda: redis.xlen(STREAM) == 2, message="the unanswered write is stored")
    retried = bus.publish_envelope({"topic": "ops", "title": "lost"}, "lost-1")
    assert retried["replayed"] is True
    assert redis.xrevrange(STREAM, count=1)[0][0].decode() == retried["id"]
    assert redis.xlen(STREAM) == 2


def test_without_a_key_a_lost_answer_is_reported_unconfirmed(redis, lossy_bus):
    """What the key is for: the same loss without one stores the notification
    and still raises, so the caller cannot tell; a plain retry would store it twice."""
    with pytest.raises(BusUnavailable, match="unreachable"):
        lossy_bus.publish("ops", "lost")
    wait_until(lambda: redis.xlen(STREAM) == 2, message="stored all the same")
