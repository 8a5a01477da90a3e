"""Two ZeroMQ bridges on one Redis, each on its own endpoints, ingesting at once: every
confirmed notification is stored exactly once, both serve egress of everything, and
each reports a backlog gauge of its own."""
import threading
import time

import orjson
import pytest

from app import create_app
from app.ops import worker_health
from app.settings import TestConfig
from herald_client.zmq import Publisher, Subscriber
from tests.helpers.shards import history
from tests.redis_cluster import every_key
from tests.support import Bridge, wait_until

PEERS, EACH = 6, 150  # peers (half on each bridge) and confirmed publishes per peer


@pytest.fixture
def bridges(redis_server, redis, tmp_path):
    running = [Bridge(redis_server.url, tmp_path) for _ in range(2)]
    try:
        for bridge in running:
            bridge.start()
        yield running
    finally:
        for bridge in running:
            bridge.stop()


def drain(subscriber, into, stop):
    while not stop.is_set():
        envelope = subscriber.receive(timeout=0.2)
        if envelope is not None:
            into.append(envelope["id"])


def test_two_bridges_ingest_at_once_and_both_serve_egress(bridges, redis, redis_server):
    stop = threading.Event()
    egress = {i: [] for i in range(2)}
    subscribers = [Subscriber(["twin"], bridge.xpub) for bridge in bridges]
    readers = [threading.Thread(target=drain, args=(s, egress[i], stop), daemon=True)
               for i, s in enumerate(subscribers)]
    for reader in readers:
        reader.start()
    time.sleep(0.5)  # ZeroMQ's slow joiner: let SUBSCRIBE reach each XPUB
    confirmed, errors = [], []

    def peer(number):
        bridge = bridges[number % 2]
        try:
            with Publisher(bridge.router, confirmed=True) as publisher:
                for i in range(EACH):
                    confirmed.append(publisher.publish(f"twin.p{number}", f"{number}/{i}"))
        except Exception as exc:  # reported below, not lost in the thread
            errors.append(exc)

    peers = [threading.Thread(target=peer, args=(n,)) for n in range(PEERS)]
    try:
        for thread in peers:
            thread.start()
        for thread in peers:
            thread.join(60)
        assert not errors and len(confirmed) == PEERS * EACH
        stored = [entry_id for entry_id, _ in history(redis)]
        assert sorted(confirmed) == sorted(stored)  # each confirmed id stored once, no other
        assert len(set(stored)) == len(stored)
        titles = [orjson.loads(f[b"envelope"])["title"] for _, f in history(redis)]
        assert sorted(titles) == sorted(f"{n}/{i}" for n in range(PEERS) for i in range(EACH))
        # Egress: each bridge sends what was published through either of them.
        for i in range(2):
            wait_until(lambda i=i: set(egress[i]) >= set(confirmed), timeout=20,
                       message=f"bridge {i}'s egress to carry everything")
    finally:
        stop.set()
        for reader in readers:
            reader.join(5)
        for subscriber in subscribers:
            subscriber.close()
    # A backlog gauge per bridge, neither overwriting the other.
    keys = wait_until(lambda: every_key(redis, worker_health.BRIDGE_PREFIX + "*")
                      if len(every_key(redis, worker_health.BRIDGE_PREFIX + "*")) == 2 else None,
                      timeout=5, message="a backlog gauge from each bridge")
    pids = {key.decode().rsplit(":", 1)[1] for key in keys}
    assert pids == {str(bridge.process.pid) for bridge in bridges}
    text = create_app(TestConfig(redis_server.url)).test_client().get("/metrics").text
    samples = [line for line in text.splitlines() if line.startswith("herald_bridge_backlog{")]
    assert len(samples) == 2 and all(line.endswith(" 0.0") for line in samples), samples
