"""Every worker that reads ``herald:stream`` survives the stream being deleted while it
waits on it (issue 35): a read blocked on the stream, its key deleted, then a notification
published on the new stream; the worker (a real process) handles it at once and is still
running. Before, the webhook and digest workers' ``XREADGROUP … BLOCK`` ended in
``UNBLOCKED the stream key no longer exists`` and the process exited 1; restarted by a
supervisor, the webhook worker waited out its predecessor's lease (~10 s) before it
delivered again.
"""
from app.digests import store as digest_store
from app.digests.collect import collected_key
from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.users import accounts
from app.webhooks import outbound
from app.webhooks import store as webhook_store
from tests.helpers.archives import archived
from tests.helpers.webhooks import LOOPBACK_ALLOWED, Receiver
from tests.integration.workers.processes import WorkerProcesses
from tests.redis_cluster import node_of
from tests.support import wait_for, wait_until

PROMPTLY = 5  # seconds: well under a webhook lease (10 s), the delay a restart meant


def blocked_on_the_stream(clients, command):
    return any(c["cmd"] == command and "b" in c["flags"] for c in clients)


def delete_while_blocked(redis, command):
    """Delete the stream at a moment a ``command`` read is blocked on it: CLIENT LIST and
    DEL in one transaction, so nothing runs between the look and the delete. Tried again
    (bounded) if the read had just ended; returns how many deletes it took. (On a
    cluster: on the node that holds the stream, where the reads block.)"""
    redis = node_of(redis, STREAM)
    for attempt in range(1, 21):
        wait_until(lambda: blocked_on_the_stream(redis.client_list(), command), timeout=10,
                   interval=0.02, message=f"a {command} blocked on the stream")
        with redis.pipeline(transaction=True) as pipe:
            pipe.client_list()
            pipe.delete(STREAM)
            clients, _deleted = pipe.execute()
        if blocked_on_the_stream(clients, command):
            return attempt
    raise AssertionError(f"never caught a {command} blocked on the stream")


def assert_alive(worker):
    assert worker.process.poll() is None, f"{worker.module} exited: {worker.output()}"
    assert "Traceback" not in worker.output()


def test_the_webhook_worker_survives_its_stream_being_deleted(redis_server, redis, tmp_path):
    receiver = Receiver().start()
    try:
        endpoint = webhook_store.create(redis, {"url": receiver.url, "topics": ["ops"]}, "test",
                                        allowed=outbound.allow_list(LOOPBACK_ALLOWED))
        bus = Bus(redis)
        with WorkerProcesses(redis_server.url, tmp_path) as start:
            worker = start("workers.webhooks", WEBHOOK_ALLOW=LOOPBACK_ALLOWED)
            before = bus.publish("ops.db", "before")
            wait_until(lambda: receiver.unique(), timeout=10, message="the first delivery")
            deletes = delete_while_blocked(redis, "xreadgroup")
            after = bus.publish("ops.db", "after")
            wait_until(lambda: assert_alive(worker) or len(receiver.unique()) == 2, timeout=PROMPTLY,
                       message="the notification published on the new stream, delivered")
            assert [e["id"] for e in receiver.unique()] == [before, after]
            assert_alive(worker)
            # One warning per delete, saying what happened.
            assert worker.output().count("herald:stream was deleted") == deletes
            # The receiver records a delivery as it arrives; the worker takes it off the
            # queue once the answer is back: waited for, not read at once.
            wait_for(lambda: webhook_store.state(redis, endpoint["id"]), lambda s: s["pending"] == 0,
                     timeout=PROMPTLY, message="the delivered notification off the queue")
    finally:
        receiver.stop()


def test_the_digest_worker_survives_its_stream_being_deleted(redis_server, redis, tmp_path):
    accounts.create_user(redis, "ada", "ada-password", admin=True)
    digest_store.create(redis, "ada", {"email": "ada@example.com", "topics": ["ops"],
                                       "schedule": "0 0 1 1 *"})
    bus = Bus(redis)
    with WorkerProcesses(redis_server.url, tmp_path) as start:
        worker = start("workers.digest")
        before = bus.publish("ops.db", "before")
        wait_until(lambda: redis.exists(collected_key(before)), timeout=10,
                   message="the first notification collected")
        deletes = delete_while_blocked(redis, "xreadgroup")
        after = bus.publish("ops.db", "after")
        wait_until(lambda: assert_alive(worker) or redis.exists(collected_key(after)), timeout=PROMPTLY,
                   message="the notification published on the new stream, collected")
        assert_alive(worker)
        assert worker.output().count("herald:stream was deleted") == deletes


def test_the_archiver_survives_its_stream_being_deleted(redis_server, redis, tmp_path):
    """The archiver reads with plain XREAD, which a delete does not interrupt; what the new
    stream gets is archived after what the old one had."""
    folder = tmp_path / "archive"
    bus = Bus(redis)
    with WorkerProcesses(redis_server.url, tmp_path) as start:
        worker = start("workers.archiver", ARCHIVE_DIR=str(folder))
        before = bus.publish("ops.db", "before")
        wait_until(lambda: folder.exists() and len(archived(folder)) == 1, timeout=10,
                   message="the first notification archived")
        delete_while_blocked(redis, "xread")
        after = bus.publish("ops.db", "after")
        wait_until(lambda: assert_alive(worker) or len(archived(folder)) == 2, timeout=PROMPTLY,
                   message="the notification published on the new stream, archived")
        assert [line["id"] for line in archived(folder)] == [before, after]
        assert_alive(worker)
